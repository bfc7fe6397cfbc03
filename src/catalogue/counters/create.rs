//! A counters create: an id and a position (two `increment`s), then slot
//! and pet, the slot never after the pet, settled by reading back.

use crate::catalogue::backend::{shows_dynamodb, shows_sqlite_locked, UNDECLARED_DYNAMODB};
use crate::catalogue::created::{failed, Result};
use crate::catalogue::keys::{counter_key, decode_counter, pet_key, slot_key, ID_COUNTER};
use crate::catalogue::record::{encode_pet, Pending, COMMIT_WITHIN_MS};
use crate::errors::ApiError;
use crate::model::{ListName, NewPet, Pet, PetStatus};
use crate::retry::Retrying;
use crate::store::KvStore;

/// An id and a position taken for a pet of `status`, at `started_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    pub id: i64,
    pub position: i64,
    status: PetStatus,
    started_ms: u64,
}

/// What a create answers when `ctr:id` is not a counter.
pub type Refuse<'r> = &'r dyn Fn(&[u8]) -> ApiError;

/// A create, its commit one batch where batches are `atomic`.
pub fn create(
    store: &Retrying<impl KvStore>,
    new: NewPet,
    atomic: bool,
    refuse: Refuse,
) -> Result<Pet> {
    let reserved = reserve(store, new.status, refuse)?;
    let pet = new.into_pet(reserved.id);
    // A store that showed it is DynamoDB commits as its batches allow.
    let atomic = atomic && !store.escalated_by(&UNDECLARED_DYNAMODB);
    commit(store, reserved, &encode_pet(&pet)?, atomic)?;
    Ok(pet)
}

/// An id and a position. A failure of the first that is no lost race reads
/// `ctr:id`: not a counter, the store holds another layout.
pub fn reserve(
    store: &Retrying<impl KvStore>,
    status: PetStatus,
    refuse: Refuse,
) -> Result<Reserved> {
    let (mut backoff, mut looked, started_ms) = (store.backoff(), false, store.now_ms());
    let id = loop {
        let e = match store.inner().increment(ID_COUNTER, 1) {
            Ok(id) => break id,
            Err(e) => e,
        };
        if !looked && !shows_dynamodb(&e) && !shows_sqlite_locked(&e) {
            if let Ok(word) = store.inner().get(ID_COUNTER) {
                looked = true;
                if let Some(word) = word.filter(|w| decode_counter(w).is_none()) {
                    return Err(refuse(&word));
                }
            }
        }
        store.learn(&e, &mut backoff);
        if !backoff.wait() {
            return Err(ApiError::StoreUnavailable(e));
        }
    };
    let position = store.increment(&counter_key(ListName::Status(status)), 1)?;
    Ok(Reserved {
        id,
        position,
        status,
        started_ms,
    })
}

/// Writes the slot and `pet:{id}` (for a keyed create, its pending record,
/// no pet to readers): no pet visible without its slot. Past its window
/// ([`COMMIT_WITHIN_MS`]) it gives the position up.
pub fn commit(
    store: &Retrying<impl KvStore>,
    at: Reserved,
    pet: &[u8],
    atomic: bool,
) -> Result<()> {
    let slot = (
        slot_key(at.status, at.position),
        at.id.to_string().into_bytes(),
    );
    let pet = (pet_key(at.id), pet.to_vec());
    if store.now_ms() >= at.started_ms + COMMIT_WITHIN_MS {
        let void = Pending::void(at.position).encode();
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
        return match store.get(&pet.0) {
            Ok(Some(stored)) if stored == pet.1 => Ok(()),
            Ok(_) => Err(ApiError::StoreUnavailable(error)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
        };
    }
    if pet.1.starts_with(b"petstore-pending") {
        return Err(ApiError::StoreUnavailable(error));
    }
    match store.set(&pet.0, &Pending::new(at.position, 0, pet.1).encode()) {
        Ok(()) => Err(ApiError::StoreUnavailable(error)),
        Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
    }
}
