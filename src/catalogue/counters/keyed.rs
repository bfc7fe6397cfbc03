//! A counters create under an `Idempotency-Key`: its word (0, or a pet's
//! id), the slot and a pending record staged before the word is claimed,
//! so that whoever finds the claim can finish it. The id it stages is
//! `layout.rs`'s to take: a create here asks for one (`take`).

use super::create::{read_back, Taken};
use crate::catalogue::backend::KvBackend;
use crate::catalogue::created::{failed, Created, Followed, Keyed, Result};
use crate::catalogue::keys::{decode_counter, encode_counter_like, pet_key};
use crate::catalogue::record::{encode_pet, unreadable, Pending, PetRecord};
use crate::store::{KvStore, StoreError, SwapReport};
use crate::{errors::ApiError, retry::Retrying};

/// A keyed create: reads the key's word (as the `backend` allows without
/// writing where it can: a store this build does not serve is left as it
/// was) and follows a pet it binds, a replay being that read and one `get`;
/// or, the key free, with an id from `take`, reserves, stages, claims,
/// commits, or follows the create that claimed it first.
pub fn keyed<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    backend: KvBackend,
    take: &dyn Fn() -> Result<Taken>,
) -> Result<Created> {
    let key = keyed.record_key();
    // DynamoDB's compare-and-swap on an absent key is an atomic
    // put-if-absent, so it is begun; Redis's `WATCH`es the key, absent or
    // not, so a `get`; SQLite's is an upsert (Cosmos DB's is untried), so an
    // `increment` by 0, which makes the word.
    let (mut owner, mut begun) = match backend {
        KvBackend::Spin | KvBackend::AzureCosmos => (store.increment(key, 0)?, None),
        KvBackend::Redis => (bound(keyed, store.get(key)?.as_deref())?, None),
        KvBackend::AwsDynamo => {
            let (cas, current) = store.cas_begin(key)?;
            (bound(keyed, current.as_deref())?, Some((cas, current)))
        }
    };
    // The word a claim swaps from: 0, or an abandoned create's id.
    let mut from = 0;
    loop {
        if owner != from {
            match follow(store, keyed, owner)? {
                Followed::Done(created) => return Ok(created),
                Followed::Abandoned(id) => (from, begun) = (id, None),
            }
        }
        let reserved = take()?.reserve(store, keyed.asked().status)?;
        let (id, pet) = (reserved.id(), keyed.pet(reserved.id()));
        let pending = Pending::new(reserved.position(), keyed.lease().now_ms, encode_pet(&pet)?);
        // Staged in one set-many everywhere: a pending record is no pet.
        reserved.commit(store, &pending.encode(), true)?;
        owner = claim(store, keyed, from, begun.take(), id)?;
        if owner == id {
            if !pending.finishable(store.now_ms(), keyed.lease().lease_ms) {
                return Err(failed("the keyed create ran past its commit window"));
            }
            commit_pet(store, id, pending.record())?;
            return Ok(Created::Pet(pet));
        }
    }
}

/// The word swapped from `from` to `ours` (by the compare-and-swap the
/// first read began, if it did); the word after, read back unless the swap
/// reported success (Redis reports a conflict after writing). A swap that
/// did not land is tried again.
fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    from: i64,
    mut begun: Option<(S::Cas, Option<Vec<u8>>)>,
    ours: i64,
) -> Result<i64> {
    let (record, mut backoff) = (keyed.record_key(), store.backoff());
    let mut failure = StoreError("the claim's swap did not land".into());
    loop {
        let (cas, current) = match begun.take() {
            Some(begun) => begun,
            None => store.cas_begin(record)?,
        };
        let word = bound(keyed, current.as_deref())?;
        if word != from {
            return Ok(word);
        }
        // In the counters' encoding (8 bytes on SQLite); text if absent.
        let bytes = encode_counter_like(current.as_deref().unwrap_or(b"0"), ours);
        match store.cas_swap(cas, &bytes) {
            Ok(SwapReport::Swapped) => return Ok(ours),
            Ok(SwapReport::Conflict) => {}
            Err(e) => {
                store.learn(&e, &mut backoff);
                failure = e;
            }
        }
        match bound(keyed, store.get(record)?.as_deref())? {
            word if word == from && backoff.wait() => {}
            word if word == from => return Err(ApiError::StoreUnavailable(failure)),
            word => return Ok(word),
        }
    }
}

/// The id a word binds its key to (0: free or absent); anything else no
/// release wrote here (`layout.rs` asks the store's layout why).
fn bound(keyed: &Keyed, held: Option<&[u8]>) -> Result<i64> {
    let word = held.map_or(Some(0), decode_counter);
    word.ok_or_else(|| unreadable(keyed.record_key()))
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
    let set = store.set(&key, record);
    set.or_else(|e| read_back(store, &key, record, e))
}
