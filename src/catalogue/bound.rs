//! A keyed create whose key is bound to a pet's id (a counters word): replayed,
//! refused, finished with its owner's write, or given up past its commit window.

use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::KvStore;

use super::created::{Created, Keyed};
use super::keys::pet_key;
use super::record::{encode_pet, PetRecord};

/// How following a bound key ended.
pub enum Followed {
    Done(Created),
    /// The create the key is bound to stopped and can no longer commit:
    /// the key may be bound to a new create, claimed from this id.
    Abandoned(i64),
}

/// The key is bound to pet `id`: replay it, refuse another request, finish
/// a create whose owner stopped before its commit, or, past its commit
/// window, give that create up.
pub fn follow<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    id: i64,
) -> Result<Followed, ApiError> {
    let expected = encode_pet(&keyed.new.clone().into_pet(id))?;
    let key = pet_key(id);
    match PetRecord::of(&key, store.get(&key)?)? {
        PetRecord::Committed { json, .. } if json == expected => {
            Ok(Followed::Done(Created::Replayed { id, body: json }))
        }
        PetRecord::Committed { .. } => Err(ApiError::IdempotencyKeyReused),
        PetRecord::Pending(pending) if pending.record != expected => {
            Err(ApiError::IdempotencyKeyReused)
        }
        PetRecord::Pending(pending) => {
            keyed.within_lease(pending.started_ms)?;
            if !pending.finishable(store.now_ms(), keyed.lease.lease_ms) {
                return Ok(Followed::Abandoned(id));
            }
            // The owner's own commit, byte for byte: if the owner is not
            // dead but late, its commit changes nothing after this one.
            commit_pet(store, id, &pending.record)?;
            Ok(Followed::Done(Created::Pet(keyed.new.clone().into_pet(id))))
        }
        // The claim is made only after the pending record was written.
        PetRecord::Absent => Err(ApiError::Internal(format!(
            "{} names pet {id}, which has no record",
            keyed.record_key
        ))),
    }
}

/// Writes the pet over its staged pending record: one `set`, settled by
/// reading back when it fails (there: applied; absent: not; unreadable:
/// unknown). Writing the same record twice changes nothing, which is what
/// lets a retry finish a keyed create.
pub fn commit_pet<S: KvStore>(
    store: &Retrying<'_, S>,
    id: i64,
    record: &[u8],
) -> Result<(), ApiError> {
    let key = pet_key(id);
    match store.set(&key, record) {
        Ok(()) => Ok(()),
        Err(e) => match store.get(&key) {
            Ok(Some(stored)) if stored == record => Ok(()),
            Ok(_) => Err(ApiError::StoreUnavailable(e)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(e)),
        },
    }
}
