//! A counters create: the id `layout.rs` took and a position (two
//! `increment`s), then slot and pet, the slot never after the pet, settled
//! by reading back.

use crate::catalogue::backend::UNDECLARED_DYNAMODB;
use crate::catalogue::created::{failed, Result};
use crate::catalogue::keys::{counter_key, pet_key, slot_key};
use crate::catalogue::record::{encode_pet, Pending, COMMIT_WITHIN_MS};
use crate::model::{NewPet, Pet, PetStatus};
use crate::store::{KvStore, StoreError};
use crate::{errors::ApiError, retry::Retrying};

/// An id `layout.rs` took from the id counter, and when its create began
/// (before that `increment`: readers may meet the id from then on).
pub struct Taken {
    id: i64,
    started_ms: u64,
}

impl Taken {
    pub fn new(id: i64, started_ms: u64) -> Taken {
        Taken { id, started_ms }
    }

    /// A create with this id, its commit one batch where batches are
    /// `atomic`.
    pub fn create(self, store: &Retrying<impl KvStore>, new: NewPet, atomic: bool) -> Result<Pet> {
        let reserved = self.reserve(store, new.status)?;
        let pet = new.into_pet(reserved.id());
        // A store that showed it is DynamoDB commits as its batches allow.
        let atomic = atomic && !store.escalated_by(&UNDECLARED_DYNAMODB);
        reserved.commit(store, &encode_pet(&pet)?, atomic)?;
        Ok(pet)
    }

    /// This id, and a position in its status's list.
    pub fn reserve(self, store: &Retrying<impl KvStore>, status: PetStatus) -> Result<Reserved> {
        let position = store.increment(&counter_key(status), 1)?;
        Ok(Reserved {
            taken: self,
            position,
            status,
        })
    }
}

/// An id and a position taken for a pet of `status`, at `started_ms`.
pub struct Reserved {
    taken: Taken,
    position: i64,
    status: PetStatus,
}

impl Reserved {
    pub fn id(&self) -> i64 {
        self.taken.id
    }

    pub fn position(&self) -> i64 {
        self.position
    }

    /// Writes the slot and `pet:{id}` (for a keyed create, its pending record,
    /// no pet to readers): no pet visible without its slot. Past its window
    /// ([`COMMIT_WITHIN_MS`]) it gives the position up.
    pub fn commit(self, store: &Retrying<impl KvStore>, pet: &[u8], atomic: bool) -> Result<()> {
        let id = self.id().to_string().into_bytes();
        let slot = (slot_key(self.status, self.position), id);
        let pet = (pet_key(self.id()), pet.to_vec());
        if store.now_ms() >= self.taken.started_ms + COMMIT_WITHIN_MS {
            let void = Pending::void(self.position).encode();
            let _ = store.set_many(&[(slot.0, b"0".to_vec()), (pet.0, void)]);
            return Err(failed("the create ran past its commit window"));
        }
        let written = match atomic {
            true => store.set_many(&[slot.clone(), pet.clone()]),
            // A slot without its pet is a hole, which readers skip.
            false => {
                store.set(&slot.0, &slot.1)?;
                store.set(&pet.0, &pet.1)
            }
        };
        let Err(error) = written else {
            return Ok(());
        };
        // The slot again, alone; then the record read back (there: a lost
        // reply). If the slot cannot be written, the pet is withdrawn.
        if store.set(&slot.0, &slot.1).is_ok() {
            return read_back(store, &pet.0, &pet.1, error);
        }
        if pet.1.starts_with(b"petstore-pending") {
            return Err(ApiError::StoreUnavailable(error));
        }
        match store.set(&pet.0, &Pending::given_up(self.position, pet.1).encode()) {
            Ok(()) => Err(ApiError::StoreUnavailable(error)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
        }
    }
}

/// After a write of `value` to `key` failed with `error`: the value read
/// back (there: a lost reply), else the error, or unknown if unread.
pub fn read_back(
    store: &Retrying<impl KvStore>,
    key: &str,
    value: &[u8],
    error: StoreError,
) -> Result<()> {
    match store.get(key) {
        Ok(Some(stored)) if stored == value => Ok(()),
        Ok(_) => Err(ApiError::StoreUnavailable(error)),
        Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
    }
}
