//! A counters create: an id and a position (two `increment`s), then the commit
//! of slot and pet, slot never after pet, settled by reading back when a reply fails.
//! docs/key-value-layout.md, "The counters layout".

use crate::errors::ApiError;
use crate::model::{ListName, NewPet, Pet, PetStatus};
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError};

use crate::catalogue::backend::{
    shows_dynamodb, shows_sqlite_locked, Batches, UNDECLARED_DYNAMODB,
};
use crate::catalogue::keys::{counter_key, decode_counter, pet_key, slot_key, ID_COUNTER};
use crate::catalogue::layout::{not_this_layout, LayoutName};
use crate::catalogue::pending::{Pending, COMMIT_WITHIN_MS};
use crate::catalogue::record::encode_pet;

/// An id and a position, taken for one pet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    pub id: i64,
    pub position: i64,
}

/// A create: reserve its id and position, then commit its slot and its
/// record. The index is left to readers.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    new: NewPet,
    declared: Batches,
) -> Result<Pet, ApiError> {
    let started_ms = store.now_ms();
    let reserved = reserve(store, new.status)?;
    // A store that showed it is DynamoDB commits as DynamoDB's batches allow.
    let batches = match store.escalated_by(&UNDECLARED_DYNAMODB) {
        true => Batches::Unordered,
        false => declared,
    };
    let pet = new.into_pet(reserved.id);
    let record = encode_pet(&pet)?;
    commit(store, reserved, pet.status, &record, batches, started_ms)?;
    Ok(pet)
}

/// `increment ctr:id` → id; `increment ctr:{status}` → position. A failure
/// of the first that does not look like a lost race (DynamoDB's, a locked
/// SQLite file's) reads `ctr:id`
/// (once it can): a store of another layout (the lanes' mark, which no
/// `increment` parses) is this instance's misconfiguration, not an outage
/// to retry.
pub fn reserve<S: KvStore>(
    store: &Retrying<'_, S>,
    status: PetStatus,
) -> Result<Reserved, ApiError> {
    let mut backoff = store.backoff();
    let mut looked = false;
    let id = loop {
        match store.inner().increment(ID_COUNTER, 1) {
            Ok(id) => break id,
            Err(e) => {
                // Looked at until one read of it succeeds.
                if !looked && !shows_dynamodb(&e) && !shows_sqlite_locked(&e) {
                    if let Ok(word) = store.inner().get(ID_COUNTER) {
                        looked = true;
                        // Not a counter: a layout this instance does not write.
                        if word.is_some_and(|w| decode_counter(&w).is_none()) {
                            return Err(not_this_layout(LayoutName::Lanes, LayoutName::Counters));
                        }
                    }
                }
                store.learn(&e, &mut backoff);
                if !backoff.wait() {
                    return Err(ApiError::StoreUnavailable(e));
                }
            }
        }
    };
    let position = store.increment(&counter_key(ListName::Status(status)), 1)?;
    Ok(Reserved { id, position })
}

/// Writes `slot:{status}:{position}` and `pet:{id}`: the commit of a
/// create, or the stage of a keyed create (`pet` then holds its pending
/// record, which readers take for no pet, so the slot is a hole until
/// [`commit_pet`]). Returns only when both are stored; a failure leaves no
/// pet visible without its slot. A create past its commit window
/// ([`COMMIT_WITHIN_MS`] after `started_ms`) gives its position up
/// instead: readers stop waiting for it.
pub fn commit<S: KvStore>(
    store: &Retrying<'_, S>,
    reserved: Reserved,
    status: PetStatus,
    record: &[u8],
    batches: Batches,
    started_ms: u64,
) -> Result<(), ApiError> {
    let slot = (
        slot_key(status, reserved.position),
        reserved.id.to_string().into_bytes(),
    );
    let pet = (pet_key(reserved.id), record.to_vec());
    if store.now_ms() >= started_ms + COMMIT_WITHIN_MS {
        let given_up = [
            (slot.0.clone(), b"0".to_vec()),
            (pet.0.clone(), Pending::void(reserved.position).encode()),
        ];
        let _ = store.set_many(&given_up);
        return Err(ApiError::StoreUnavailable(StoreError(
            "the create ran past its commit window and gave its id up".into(),
        )));
    }
    let written = match batches {
        Batches::Atomic => store.set_many(&[slot.clone(), pet.clone()]),
        Batches::Unordered => {
            // A slot without its pet is a hole, which readers skip.
            store.set(&slot.0, &slot.1)?;
            store.set(&pet.0, &pet.1)
        }
    };
    match written {
        Ok(()) => Ok(()),
        Err(e) => settle(store, &slot, &pet, reserved.position, e),
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
fn settle<S: KvStore>(
    store: &Retrying<'_, S>,
    slot: &(String, Vec<u8>),
    pet: &(String, Vec<u8>),
    position: i64,
    error: StoreError,
) -> Result<(), ApiError> {
    if store.set(&slot.0, &slot.1).is_ok() {
        return match store.get(&pet.0) {
            Ok(Some(stored)) if stored == pet.1 => Ok(()),
            Ok(_) => Err(ApiError::StoreUnavailable(error)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
        };
    }
    if pet
        .1
        .starts_with(crate::catalogue::pending::PENDING_HEADER.as_bytes())
    {
        // A keyed create's stage: a pending record is no pet anyway.
        return Err(ApiError::StoreUnavailable(error));
    }
    let withdrawn = Pending {
        position,
        started_ms: 0,
        record: pet.1.clone(),
    };
    match store.set(&pet.0, &withdrawn.encode()) {
        Ok(()) => Err(ApiError::StoreUnavailable(error)),
        Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
    }
}
