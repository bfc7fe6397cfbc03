//! A counters create: an id and a position (two `increment`s), then the
//! commit of slot and pet, the slot never after the pet, settled by reading
//! back when a reply fails.

use crate::errors::ApiError;
use crate::model::{ListName, NewPet, Pet, PetStatus};
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError};

use crate::catalogue::backend::{shows_dynamodb, shows_sqlite_locked, UNDECLARED_DYNAMODB};
use crate::catalogue::keys::{counter_key, decode_counter, pet_key, slot_key, ID_COUNTER};
use crate::catalogue::record::{encode_pet, Pending, COMMIT_WITHIN_MS};

/// An id and a position, taken for one pet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    pub id: i64,
    pub position: i64,
}

/// What a create does when `ctr:id` is not a counter: the store holds
/// another layout, which the catalogue names.
pub type Refuse<'r> = &'r dyn Fn(&[u8]) -> ApiError;

/// A create: its id and position, then the commit of its slot and pet, in
/// one batch where the backend's are all or nothing (`atomic`).
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    new: NewPet,
    atomic: bool,
    refuse: Refuse,
) -> Result<Pet, ApiError> {
    let started_ms = store.now_ms();
    let reserved = reserve(store, new.status, refuse)?;
    let pet = new.into_pet(reserved.id);
    // A store that showed it is DynamoDB commits as its batches allow.
    let atomic = atomic && !store.escalated_by(&UNDECLARED_DYNAMODB);
    commit(
        store,
        reserved,
        (pet.status, &encode_pet(&pet)?),
        atomic,
        started_ms,
    )?;
    Ok(pet)
}

/// `increment ctr:id` → id; `increment ctr:{status}` → position. A failure
/// of the first that is no lost race (DynamoDB's, a locked SQLite file's)
/// reads `ctr:id` (once it can): not a counter, the store holds another
/// layout, which no retry changes.
pub fn reserve<S: KvStore>(
    store: &Retrying<'_, S>,
    status: PetStatus,
    refuse: Refuse,
) -> Result<Reserved, ApiError> {
    let (mut backoff, mut looked) = (store.backoff(), false);
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
    Ok(Reserved { id, position })
}

/// Writes `slot:{status}:{position}` and `pet:{id}` (a keyed create's stage
/// writes its pending record there, no pet to readers): both, or after a
/// failure no pet visible without its slot. Past its commit window
/// ([`COMMIT_WITHIN_MS`] after `started_ms`) it gives the position up.
pub fn commit<S: KvStore>(
    store: &Retrying<'_, S>,
    reserved: Reserved,
    (status, record): (PetStatus, &[u8]),
    atomic: bool,
    started_ms: u64,
) -> Result<(), ApiError> {
    let slot = (
        slot_key(status, reserved.position),
        reserved.id.to_string().into_bytes(),
    );
    let pet = (pet_key(reserved.id), record.to_vec());
    if store.now_ms() >= started_ms + COMMIT_WITHIN_MS {
        let void = Pending::void(reserved.position).encode();
        let _ = store.set_many(&[(slot.0, b"0".to_vec()), (pet.0, void)]);
        let why = "the create ran past its commit window and gave its id up";
        return Err(ApiError::StoreUnavailable(StoreError(why.into())));
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
    // Settled: the slot written again, alone, so that no pet is ever
    // visible without it; then the record read back (there: a lost reply;
    // absent: a hole). If the slot cannot be written, the pet is withdrawn.
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
    let withdrawn = Pending {
        position: reserved.position,
        started_ms: 0,
        record: pet.1,
    };
    match store.set(&pet.0, &withdrawn.encode()) {
        Ok(()) => Err(ApiError::StoreUnavailable(error)),
        Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
    }
}
