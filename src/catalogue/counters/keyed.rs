//! A counters create under an `Idempotency-Key`: its word (`idem:{digest}`,
//! 0 or a pet's id), the slot and a pending record staged before the word
//! is claimed, so that whoever finds the claim can finish it.

use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use super::create::{commit, reserve, Refuse};

use crate::catalogue::backend::{Batches, ClaimBy};
use crate::catalogue::created::{Created, Followed, Keyed};
use crate::catalogue::keys::{decode_counter, encode_counter_like, pet_key, ID_COUNTER};
use crate::catalogue::record::{encode_pet, unreadable, Pending, PetRecord};

/// The id a word binds its key to (0: free), if it is a word.
pub fn word(bytes: &[u8]) -> Option<i64> {
    decode_counter(bytes).filter(|id| *id >= 0)
}

/// Creates the request's pet once per key. A new key: the read of its word
/// (`increment` by 0, or a compare-and-swap's `new` and `current`), the two
/// `increment`s, one `set-many` (slot and pending record), the claim (read
/// back unless the swap reported success), one `set` (the pet). A replay:
/// the read of the word and one `get`.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    claim_by: ClaimBy,
    refuse: Refuse,
) -> Result<Created, ApiError> {
    let (word, mut begun) = match claim_by {
        ClaimBy::Increment => (store.increment(&keyed.record_key, 0)?, None),
        ClaimBy::PutIfAbsent => {
            let (cas, current) = store.cas_begin(&keyed.record_key)?;
            (
                bound(store, keyed, current.as_deref(), refuse)?,
                Some((cas, current)),
            )
        }
    };
    // Lead, claiming the word from what it holds (0, or a create given
    // up), or follow the create it is bound to.
    let mut from = (word == 0).then_some(0);
    loop {
        let followed = match from {
            Some(from) => lead(store, keyed, from, begun.take(), refuse)?,
            None => follow(store, keyed, word)?,
        };
        match followed {
            Followed::Done(created) => return Ok(created),
            Followed::Abandoned(id) => from = Some(id),
        }
    }
}

/// The key is free (its word `from`: 0, or an abandoned create's id):
/// reserve, stage, claim the word from `from`, commit.
fn lead<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    from: i64,
    begun: Option<(S::Cas, Option<Vec<u8>>)>,
    refuse: Refuse,
) -> Result<Followed, ApiError> {
    let started_ms = store.now_ms();
    let reserved = reserve(store, keyed.new.status, refuse)?;
    let pet = keyed.pet(reserved.id);
    let pending = Pending {
        position: reserved.position,
        started_ms: keyed.lease.now_ms,
        record: encode_pet(&pet)?,
    };
    // Staged in one set-many on every backend: a pending record is no pet,
    // and the claim comes only once both are stored.
    commit(
        store,
        reserved,
        pet.status,
        &pending.encode(),
        Batches::Atomic,
        started_ms,
    )?;
    match claim(store, keyed, from, reserved.id, begun, refuse)? {
        owner if owner != reserved.id => follow(store, keyed, owner),
        _ if !pending.finishable(store.now_ms(), keyed.lease.lease_ms) => {
            Err(ApiError::StoreUnavailable(StoreError(
                "the keyed create ran past its commit window".into(),
            )))
        }
        _ => {
            commit_pet(store, reserved.id, &pending.record)?;
            Ok(Followed::Done(Created::Pet(pet)))
        }
    }
}

/// Compare-and-swap of the word from `from` to `ours`; the word afterwards,
/// read back unless the swap reported success (Spin's Redis reports a
/// conflict after writing). A swap that did not land while the word still
/// holds `from` is tried again under the retry policy.
fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    from: i64,
    ours: i64,
    mut begun: Option<(S::Cas, Option<Vec<u8>>)>,
    refuse: Refuse,
) -> Result<i64, ApiError> {
    let mut failure = StoreError("the claim's swap did not land".into());
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = match begun.take() {
            Some(begun) => begun,
            None => store.cas_begin(&keyed.record_key)?,
        };
        let word = bound(store, keyed, current.as_deref(), refuse)?;
        if word != from {
            return Ok(word);
        }
        // In the counters' encoding (8 bytes on SQLite); text where absent.
        let bytes = match &current {
            Some(seen) => encode_counter_like(seen, ours),
            None => ours.to_string().into_bytes(),
        };
        match store.cas_swap(cas, &bytes) {
            Ok(SwapReport::Swapped) => return Ok(ours),
            Ok(SwapReport::Conflict) => {}
            Err(e) => {
                store.learn(&e, &mut backoff);
                failure = e;
            }
        }
        match bound(
            store,
            keyed,
            store.get(&keyed.record_key)?.as_deref(),
            refuse,
        )? {
            word if word == from && backoff.wait() => {}
            word if word == from => return Err(ApiError::StoreUnavailable(failure)),
            word => return Ok(word),
        }
    }
}

/// The id a word binds its key to (0 if free, or absent). Anything else
/// was written by another layout if `ctr:id` holds one: its refusal.
fn bound<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    held: Option<&[u8]>,
    refuse: Refuse,
) -> Result<i64, ApiError> {
    let Some(bytes) = held else {
        return Ok(0);
    };
    word(bytes).ok_or_else(|| match store.get(ID_COUNTER) {
        Ok(Some(mark)) if decode_counter(&mark).is_none() => refuse(&mark),
        _ => unreadable(&keyed.record_key),
    })
}

/// The key is bound to pet `id`: replay it, refuse another request, finish
/// a create whose owner stopped before its commit, or, past its commit
/// window, give that create up.
pub fn follow<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    id: i64,
) -> Result<Followed, ApiError> {
    let expected = encode_pet(&keyed.pet(id))?;
    let key = pet_key(id);
    match PetRecord::of(&key, store.get(&key)?)? {
        PetRecord::Committed { json, .. } if json == expected => {
            Ok(Followed::Done(Created::Replayed { id, body: json }))
        }
        PetRecord::Pending(p) if p.record == expected => {
            keyed.within_lease(p.started_ms)?;
            if !p.finishable(store.now_ms(), keyed.lease.lease_ms) {
                return Ok(Followed::Abandoned(id));
            }
            // The owner's own commit, byte for byte: if the owner is late,
            // not dead, its commit changes nothing after this one.
            commit_pet(store, id, &p.record)?;
            Ok(Followed::Done(Created::Pet(keyed.pet(id))))
        }
        PetRecord::Committed { .. } | PetRecord::Pending(_) => Err(ApiError::IdempotencyKeyReused),
        // The claim is made only once the pending record is written.
        PetRecord::Absent => Err(ApiError::Internal(format!(
            "{} names pet {id}, which has no record",
            keyed.record_key
        ))),
    }
}

/// The pet over its pending record: one `set`, settled by reading back when
/// it fails. The same record twice changes nothing, so a retry can finish.
fn commit_pet<S: KvStore>(store: &Retrying<'_, S>, id: i64, record: &[u8]) -> Result<(), ApiError> {
    let key = pet_key(id);
    let Err(e) = store.set(&key, record) else {
        return Ok(());
    };
    match store.get(&key) {
        Ok(Some(stored)) if stored == record => Ok(()),
        Ok(_) => Err(ApiError::StoreUnavailable(e)),
        Err(_) => Err(ApiError::CreateOutcomeUnknown(e)),
    }
}
