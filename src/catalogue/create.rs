//! Creating a pet: reserving its id and its position in its status's list
//! (two `increment`s), then the commit of its slot and its record, settled
//! by reading back when a reply fails.
//!
//! The rule every commit keeps, on every backend: **a pet is never visible
//! (its record readable at `pet:{id}`) without its slot**, so every pet that
//! getPet returns is in the unfiltered walk and in its status's walk. Where
//! `set-many` is all or nothing (Spin's SQLite: one transaction; Redis:
//! `MSET`) both go in one call. Where it is neither atomic nor ordered
//! (Spin's DynamoDB: one `BatchWriteItem`) the slot is written first, alone,
//! then the record: one call more.

use crate::errors::ApiError;
use crate::model::{ListName, NewPet, Pet, PetStatus};
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError};

use super::backend::Batches;
use super::keys::{counter_key, pet_key, slot_key, ID_COUNTER};
use super::pending::Pending;
use super::record::{encode_pet, Catalogue};
use super::sequences::{not_this_layout, Sequences, V3_MARK};

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
    /// 2. [`commit`](Self::commit) its slot and its record. The index is
    ///    left to readers.
    pub fn create(&self, new: NewPet, batches: Batches) -> Result<Pet, ApiError> {
        let reserved = self.reserve(new.status)?;
        self.create_reserved(reserved, new, batches)
    }

    /// Step 2 of [`create`](Self::create), for numbers already reserved.
    pub fn create_reserved(
        &self,
        reserved: Reserved,
        new: NewPet,
        batches: Batches,
    ) -> Result<Pet, ApiError> {
        let pet = new.into_pet(reserved.id);
        let record = encode_pet(&pet)?;
        self.commit(reserved, pet.status, &record, batches)?;
        Ok(pet)
    }

    /// `increment ctr:id` → id; `increment ctr:{status}` → position.
    pub fn reserve(&self, status: PetStatus) -> Result<Reserved, ApiError> {
        let id = self.store.increment(ID_COUNTER, 1)?;
        if id >= V3_MARK {
            return Err(not_this_layout());
        }
        let position = self
            .store
            .increment(&counter_key(ListName::Status(status)), 1)?;
        Ok(Reserved { id, position })
    }

    /// Writes `slot:{status}:{position}` and `pet:{id}`: the commit of a
    /// create, or the stage of a keyed create (`pet` then holds its pending
    /// record, which readers take for no pet, so the slot is a hole until
    /// [`commit_pet`](Self::commit_pet)). Returns only when both are
    /// stored; a failure leaves no pet visible without its slot.
    pub fn commit(
        &self,
        reserved: Reserved,
        status: PetStatus,
        record: &[u8],
        batches: Batches,
    ) -> Result<(), ApiError> {
        let slot = (
            slot_key(status, reserved.position),
            reserved.id.to_string().into_bytes(),
        );
        let pet = (pet_key(reserved.id), record.to_vec());
        let written = match batches {
            Batches::Atomic => self.store.set_many(&[slot.clone(), pet.clone()]),
            Batches::Unordered => {
                // A slot without its pet is a hole, which readers skip.
                self.store.set(&slot.0, &slot.1)?;
                self.store.set(&pet.0, &pet.1)
            }
        };
        match written {
            Ok(()) => Ok(()),
            Err(e) => self.settle(&slot, &pet, reserved.position, e),
        }
    }

    /// A commit that failed (after the retries of the store it was given):
    /// first the slot is written again, alone, so that whatever the record's
    /// state no pet can be visible without it; then reading back the record
    /// decides the answer (there: applied, a lost reply; absent: nothing
    /// visible, a hole). If even the slot cannot be written, the record is
    /// withdrawn (replaced by a pending record, which no key names and
    /// readers take for no pet). What cannot be decided is reported as an
    /// unknown outcome.
    fn settle(
        &self,
        slot: &(String, Vec<u8>),
        pet: &(String, Vec<u8>),
        position: i64,
        error: StoreError,
    ) -> Result<(), ApiError> {
        if self.store.set(&slot.0, &slot.1).is_ok() {
            return match self.store.get(&pet.0) {
                Ok(Some(stored)) if stored == pet.1 => Ok(()),
                Ok(_) => Err(ApiError::StoreUnavailable(error)),
                Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
            };
        }
        if pet.1.starts_with(super::pending::PENDING_HEADER.as_bytes()) {
            // A keyed create's stage: a pending record is no pet anyway.
            return Err(ApiError::StoreUnavailable(error));
        }
        let withdrawn = Pending {
            position,
            started_ms: 0,
            record: pet.1.clone(),
        };
        match self.store.set(&pet.0, &withdrawn.encode()) {
            Ok(()) => Err(ApiError::StoreUnavailable(error)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
        }
    }

    /// Writes the pet: one `set`, settled by reading back when it fails
    /// (there: applied; absent: not; unreadable: unknown). In layout v2 it
    /// replaces a staged create's pending record, its slot already stored;
    /// in layout v3 it is a create's commit. Writing the same record twice
    /// changes nothing, which is what lets a retry finish a keyed create.
    pub fn commit_pet(&self, id: i64, record: &[u8]) -> Result<(), ApiError> {
        let key = pet_key(id);
        match self.store.set(&key, record) {
            Ok(()) => Ok(()),
            Err(e) => match self.store.get(&key) {
                Ok(Some(stored)) if stored == record => Ok(()),
                Ok(_) => Err(ApiError::StoreUnavailable(e)),
                Err(_) => Err(ApiError::CreateOutcomeUnknown(e)),
            },
        }
    }
}

impl<S: KvStore> Catalogue<'_, Retrying<'_, S>> {
    /// A create of layout v3: an id from the sequences (one `increment`),
    /// then the pet (one `set`), its only key: status lists are read from
    /// the unfiltered list, so there is no slot to write before it. A
    /// failure before the pet is stored leaves a hole.
    pub fn create_sequenced(&self, sequences: &Sequences, new: NewPet) -> Result<Pet, ApiError> {
        let id = self.reserve_in(sequences)?;
        let pet = new.into_pet(id);
        self.commit_pet(id, &encode_pet(&pet)?)?;
        Ok(pet)
    }
}
