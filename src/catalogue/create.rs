//! Creating a pet: reserving its id and its position in its status's list
//! (two `increment`s), then the commit (one `set-many` of its slot and its
//! record), settled by reading back when a reply fails.

use crate::errors::ApiError;
use crate::model::{ListName, NewPet, Pet, PetStatus};
use crate::store::{KvStore, StoreError};

use super::keys::{counter_key, pet_key, slot_key, ID_COUNTER};
use super::{encode_pet, Catalogue};

/// An id and a position, taken for one pet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    pub id: i64,
    pub position: i64,
}

impl<S: KvStore> Catalogue<'_, S> {
    /// Creates a pet:
    ///
    /// 1. [`reserve`](Self::reserve) its id and its position in its status's
    ///    list. A failure here stores nothing (a lost reply leaves a hole).
    /// 2. [`commit`](Self::commit) it: both keys or neither. The index is left
    ///    to readers.
    pub fn create(&self, new: NewPet) -> Result<Pet, ApiError> {
        let reserved = self.reserve(new.status)?;
        let pet = new.into_pet(reserved.id);
        let record = encode_pet(&pet)?;
        self.commit(reserved, pet.status, &record)?;
        Ok(pet)
    }

    /// `increment ctr:id` → id; `increment ctr:{status}` → position.
    pub fn reserve(&self, status: PetStatus) -> Result<Reserved, ApiError> {
        let id = self.store.increment(ID_COUNTER, 1)?;
        let position = self
            .store
            .increment(&counter_key(ListName::Status(status)), 1)?;
        Ok(Reserved { id, position })
    }

    /// One `set-many` of `slot:{status}:{position}` and `pet:{id}`: the
    /// commit of a create, or the stage of a keyed create (`pet` then holds
    /// its pending record, which readers take for no pet, so the slot is a
    /// hole until [`commit_staged`](Self::commit_staged)).
    pub fn commit(
        &self,
        reserved: Reserved,
        status: PetStatus,
        record: &[u8],
    ) -> Result<(), ApiError> {
        // Slot first: on a backend whose set-many is a loop of sets in order
        // (not Spin's SQLite or Redis, where it is all or nothing), the pet
        // stays the commit point, as when these were two sets.
        let writes = [
            (
                slot_key(status, reserved.position),
                reserved.id.to_string().into_bytes(),
            ),
            (pet_key(reserved.id), record.to_vec()),
        ];
        match self.store.set_many(&writes) {
            Ok(()) => Ok(()),
            Err(e) => self.settle(reserved.id, record, e),
        }
    }

    /// Replaces a staged create's pending record with the pet: one `set` of
    /// a key that exists (an overwrite, the cheap write on SQLite). Writing
    /// the same record twice changes nothing, which is what lets a retry
    /// finish a keyed create (see `idempotency`).
    pub fn commit_staged(&self, id: i64, record: &[u8]) -> Result<(), ApiError> {
        match self.store.set(&pet_key(id), record) {
            Ok(()) => Ok(()),
            Err(e) => self.settle(id, record, e),
        }
    }

    /// A commit whose reply failed: the read-back decides. The record there →
    /// it was applied (a lost reply); absent → nothing was stored; the read
    /// failing too → nobody knows, and the client is told so.
    fn settle(&self, id: i64, record: &[u8], error: StoreError) -> Result<(), ApiError> {
        match self.store.get(&pet_key(id)) {
            Ok(Some(stored)) if stored == record => Ok(()),
            Ok(_) => Err(ApiError::StoreUnavailable(error)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
        }
    }
}
