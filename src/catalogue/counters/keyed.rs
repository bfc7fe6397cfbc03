//! A counters create under an `Idempotency-Key`: its word (0, or a pet's
//! id), the slot and a pending record staged before the word is claimed,
//! so that whoever finds the claim can finish it. The id it stages is
//! `layout.rs`'s to take: a create here stops where it needs one.

use super::create::{commit, read_back, reserve, Taken};
use crate::catalogue::backend::WordRead;
use crate::catalogue::created::{failed, Created, Followed, Keyed, Result};
use crate::catalogue::keys::{decode_counter, encode_counter_like, pet_key};
use crate::catalogue::record::{encode_pet, unreadable, Pending, PetRecord};
use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

/// The id a word binds its key to (0: free), if it is a word.
pub fn word(bytes: &[u8]) -> Option<i64> {
    decode_counter(bytes)
}

/// Where a keyed create stands: done, or its key free and an id wanted.
pub enum Step<C> {
    Done(Created),
    Free(Free<C>),
}

/// A free key: its word (0, or an abandoned create's id), and the
/// compare-and-swap its first read began, if it did.
pub struct Free<C> {
    from: i64,
    begun: Option<(C, Option<Vec<u8>>)>,
}

/// Reads the key's word (`read`, as the backend allows without writing
/// where it can) and follows a pet it binds: a replay is that read and one
/// `get`.
pub fn begin<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    read: WordRead,
) -> Result<Step<S::Cas>> {
    let key = keyed.record_key();
    let (word, begun) = match read {
        WordRead::Increment => (store.increment(key, 0)?, None),
        WordRead::Get => (bound(keyed, store.get(key)?.as_deref())?, None),
        WordRead::Cas => {
            let (cas, current) = store.cas_begin(key)?;
            (bound(keyed, current.as_deref())?, Some((cas, current)))
        }
    };
    match word {
        0 => Ok(Step::Free(Free { from: 0, begun })),
        id => follow(store, keyed, id).map(step),
    }
}

/// The key is free: with the id `taken`, reserve, stage, claim, commit;
/// or follow the create that claimed it first.
pub fn lead<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    free: Free<S::Cas>,
    taken: Taken,
) -> Result<Step<S::Cas>> {
    let reserved = reserve(store, taken, keyed.asked().status)?;
    let (id, pet) = (reserved.id(), keyed.pet(reserved.id()));
    let pending = Pending::new(reserved.position(), keyed.lease().now_ms, encode_pet(&pet)?);
    // Staged in one set-many everywhere: a pending record is no pet.
    commit(store, reserved, &pending.encode(), true)?;
    match claim(store, keyed, free, id)? {
        owner if owner != id => follow(store, keyed, owner).map(step),
        _ if !pending.finishable(store.now_ms(), keyed.lease().lease_ms) => {
            Err(failed("the keyed create ran past its commit window"))
        }
        _ => {
            commit_pet(store, id, pending.record())?;
            Ok(Step::Done(Created::Pet(pet)))
        }
    }
}

fn step<C>(followed: Followed) -> Step<C> {
    match followed {
        Followed::Done(created) => Step::Done(created),
        Followed::Abandoned(from) => Step::Free(Free { from, begun: None }),
    }
}

/// The word swapped from `free.from` to `ours`; the word after, read back
/// unless the swap reported success (Redis reports a conflict after
/// writing). A swap that did not land is tried again.
fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    mut free: Free<S::Cas>,
    ours: i64,
) -> Result<i64> {
    let record = keyed.record_key();
    let mut failure = StoreError("the claim's swap did not land".into());
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = match free.begun.take() {
            Some(begun) => begun,
            None => store.cas_begin(record)?,
        };
        let word = bound(keyed, current.as_deref())?;
        if word != free.from {
            return Ok(word);
        }
        // In the counters' encoding (8 bytes on SQLite); text if absent.
        let bytes = current.map_or(ours.to_string().into_bytes(), |seen| {
            encode_counter_like(&seen, ours)
        });
        match store.cas_swap(cas, &bytes) {
            Ok(SwapReport::Swapped) => return Ok(ours),
            Ok(SwapReport::Conflict) => {}
            Err(e) => {
                store.learn(&e, &mut backoff);
                failure = e;
            }
        }
        match bound(keyed, store.get(record)?.as_deref())? {
            word if word == free.from && backoff.wait() => {}
            word if word == free.from => return Err(ApiError::StoreUnavailable(failure)),
            word => return Ok(word),
        }
    }
}

/// The id a word binds its key to (0: free or absent); anything else no
/// release wrote here (`layout.rs` asks the store's layout why).
fn bound(keyed: &Keyed, held: Option<&[u8]>) -> Result<i64> {
    held.map_or(Ok(0), |bytes| {
        word(bytes).ok_or_else(|| unreadable(keyed.record_key()))
    })
}

/// The key is bound to pet `id`: replay it, refuse another request, finish
/// a create stopped before its commit, or give it up past its window.
pub fn follow<S: KvStore>(store: &Retrying<'_, S>, keyed: &Keyed, id: i64) -> Result<Followed> {
    let (expected, key) = (encode_pet(&keyed.pet(id))?, pet_key(id));
    match PetRecord::of(&key, store.get(&key)?)? {
        PetRecord::Committed { json, .. } if json == expected => {
            Ok(Followed::Done(Created::Replayed { id, body: json }))
        }
        PetRecord::Pending(p) if p.record() == expected => {
            keyed.within_lease(p.started_ms())?;
            let (now_ms, lease_ms) = (store.now_ms(), keyed.lease().lease_ms);
            if p.finishable(now_ms, lease_ms) {
                // The owner's own commit, byte for byte.
                commit_pet(store, id, p.record())?;
                return Ok(Followed::Done(Created::Pet(keyed.pet(id))));
            }
            // An owner's commit begun in its window may still land, its
            // retries included, until readers give the record up: only
            // then is the key free, or one key would get two pets.
            match p.dead(now_ms, lease_ms) {
                true => Ok(Followed::Abandoned(id)),
                false => Err(keyed.in_use_until(p.dead_at_ms(lease_ms))),
            }
        }
        PetRecord::Committed { .. } | PetRecord::Pending(_) => Err(ApiError::IdempotencyKeyReused),
        // The claim is made only once the pending record is written.
        PetRecord::Absent => Err(ApiError::Internal(format!(
            "{} names pet {id}, which has no record",
            keyed.record_key()
        ))),
    }
}

/// The pet over its pending record: one `set`, read back if it fails.
fn commit_pet<S: KvStore>(store: &Retrying<'_, S>, id: i64, record: &[u8]) -> Result<()> {
    let key = pet_key(id);
    store
        .set(&key, record)
        .or_else(|e| read_back(store, &key, record, e))
}
