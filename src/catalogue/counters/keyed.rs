//! A counters create under an `Idempotency-Key` (`idem:{digest}`, a word: 0 or
//! a pet's id), its slot and pending record staged first, so that whoever finds
//! the claim finishes it. docs/key-value-layout.md, "A keyed create".

use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use crate::catalogue::backend::{Batches, ClaimBy};
use crate::catalogue::bound::{commit_pet, follow, Followed};
use crate::catalogue::created::{Created, Keyed};
use crate::catalogue::keys::{decode_counter, encode_counter_like, INTENT_HEADER};
use crate::catalogue::layout::{not_this_layout, LayoutName};
use crate::catalogue::pending::Pending;
use crate::catalogue::record::{encode_pet, unreadable};

use super::create::{commit, reserve};

/// A compare-and-swap begun on the key's word, and what it saw.
type Begun<C> = (C, Option<Vec<u8>>);

/// Creates the request's pet once per key. Calls, when the key is new: the
/// read of its word (`increment` by 0, creating it at 0; or,
/// [`ClaimBy::PutIfAbsent`], a compare-and-swap's `new` and `current`), the
/// two `increment`s of a create, one `set-many` (the slot and the pending
/// record), the claim (a compare-and-swap's `new` + `current`, unless the
/// read began it, and its `swap`; read back unless the swap reported
/// success), and one `set` (the pet over its pending record). A replay:
/// the read of the word and one `get`.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    claim_by: ClaimBy,
) -> Result<Created, ApiError> {
    let (word, mut begun) = match claim_by {
        ClaimBy::Increment => (store.increment(&keyed.record_key, 0)?, None),
        ClaimBy::PutIfAbsent => {
            let (cas, current) = store.cas_begin(&keyed.record_key)?;
            (bound(keyed, current.as_deref())?, Some((cas, current)))
        }
    };
    // Lead, claiming the word from what it holds (0, or a create given
    // up), or follow the create it is bound to.
    let mut from = (word == 0).then_some(0);
    loop {
        let followed = match from {
            Some(from) => lead(store, keyed, from, begun.take())?,
            None => follow(store, keyed, word)?,
        };
        match followed {
            Followed::Done(created) => return Ok(created),
            Followed::Abandoned(id) => from = Some(id),
        }
    }
}

/// The key is free (its word is `from`: 0, or an abandoned create's id):
/// reserve, stage the intent, claim the word from `from`, commit.
fn lead<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    from: i64,
    begun: Option<Begun<S::Cas>>,
) -> Result<Followed, ApiError> {
    let started_ms = store.now_ms();
    let reserved = reserve(store, keyed.new.status)?;
    let pet = keyed.new.clone().into_pet(reserved.id);
    let pending = Pending {
        position: reserved.position,
        started_ms: keyed.lease.now_ms,
        record: encode_pet(&pet)?,
    };
    // Staged: the slot and the pending record, both new keys in one
    // set-many, on every backend: a pending record is no pet, and the
    // claim comes only once both are stored (read back if the batch
    // failed). A failure from here until the claim leaves them behind: a
    // hole in the lists, never a pet.
    commit(
        store,
        reserved,
        pet.status,
        &pending.encode(),
        Batches::Atomic,
        started_ms,
    )?;
    match claim(store, keyed, from, reserved.id, begun)? {
        owner if owner == reserved.id => {
            if !pending.finishable(store.now_ms(), keyed.lease.lease_ms) {
                return Err(ApiError::StoreUnavailable(StoreError(
                    "the keyed create ran past its commit window".into(),
                )));
            }
            commit_pet(store, reserved.id, &pending.record)?;
            Ok(Followed::Done(Created::Pet(pet)))
        }
        other => follow(store, keyed, other),
    }
}

/// Compare-and-swap of the word from `from` to `ours`; returns the word
/// afterwards, read back unless the swap reported success (Spin's Redis
/// reports a conflict after writing; a reply may be lost). A swap that did
/// not land while the word still holds `from` (on Redis a concurrent
/// `increment` by 0 aborts the transaction; on DynamoDB a conflicting
/// transaction, or a 1.2.0 instance creating the word at 0) is tried again
/// under the retry policy.
fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    from: i64,
    ours: i64,
    mut begun: Option<Begun<S::Cas>>,
) -> Result<i64, ApiError> {
    let mut failure = StoreError("the claim's swap did not land".into());
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = match begun.take() {
            Some(begun) => begun,
            None => store.cas_begin(&keyed.record_key)?,
        };
        let word = bound(keyed, current.as_deref())?;
        if word != from {
            return Ok(word);
        }
        // An id in the counters' encoding (8 bytes on SQLite, text
        // elsewhere); a word claimed absent is text, as DynamoDB's are.
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
        let now = store.get(&keyed.record_key)?;
        match bound(keyed, now.as_deref())? {
            word if word == from && backoff.wait() => continue,
            word if word == from => return Err(ApiError::StoreUnavailable(failure)),
            word => return Ok(word),
        }
    }
}

/// The id a word binds its key to: 0 if free (absent, where the word is
/// claimed by put-if-absent). A lanes intent there means the store moved
/// to lanes (a client retried a create it began on a lanes instance):
/// this instance's misconfiguration, answered as its creates are.
fn bound(keyed: &Keyed, word: Option<&[u8]>) -> Result<i64, ApiError> {
    match word {
        None => Ok(0),
        Some(bytes) if bytes.starts_with(INTENT_HEADER.as_bytes()) => {
            Err(not_this_layout(LayoutName::Lanes, LayoutName::Counters))
        }
        Some(bytes) => decode_counter(bytes)
            .filter(|id| *id >= 0)
            .ok_or_else(|| unreadable(&keyed.record_key)),
    }
}
