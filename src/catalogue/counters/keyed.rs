//! A counters create under an `Idempotency-Key`: its word (0, or a pet's
//! id), the slot and a pending record staged before the word is claimed,
//! so that whoever finds the claim can finish it.

use super::create::{commit, reserve, Refuse};
use crate::catalogue::created::{failed, Created, Followed, Keyed, Result};
use crate::catalogue::keys::{decode_counter, encode_counter_like, pet_key, ID_COUNTER};
use crate::catalogue::record::{encode_pet, unreadable, Pending, PetRecord};
use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

/// The id a word binds its key to (0: free), if it is a word.
pub fn word(bytes: &[u8]) -> Option<i64> {
    decode_counter(bytes).filter(|id| *id >= 0)
}

type Begun<C> = Option<(C, Option<Vec<u8>>)>;

/// The request's pet, once per key: the read of its word (`increment` by
/// 0, or a compare-and-swap begun), reserve, stage, claim, commit; a
/// replay: that read and one `get`.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    put_if_absent: bool,
    refuse: Refuse,
) -> Result<Created> {
    let key = Key {
        store,
        keyed,
        refuse,
    };
    let (word, mut begun) = match put_if_absent {
        false => (store.increment(&keyed.record_key, 0)?, None),
        true => {
            let (cas, current) = store.cas_begin(&keyed.record_key)?;
            (key.bound(current.as_deref())?, Some((cas, current)))
        }
    };
    let mut from = (word == 0).then_some(0);
    loop {
        let followed = match from {
            Some(from) => key.lead(from, begun.take())?,
            None => follow(store, keyed, word)?,
        };
        match followed {
            Followed::Done(created) => return Ok(created),
            Followed::Abandoned(id) => from = Some(id),
        }
    }
}

struct Key<'k, 's, S: KvStore> {
    store: &'k Retrying<'s, S>,
    keyed: &'k Keyed,
    refuse: Refuse<'k>,
}

impl<S: KvStore> Key<'_, '_, S> {
    /// The key is free (its word `from`: 0, or an abandoned create's id).
    fn lead(&self, from: i64, begun: Begun<S::Cas>) -> Result<Followed> {
        let (store, keyed) = (self.store, self.keyed);
        let reserved = reserve(store, keyed.new.status, self.refuse)?;
        let pet = keyed.pet(reserved.id);
        let pending = Pending::new(reserved.position, keyed.lease.now_ms, encode_pet(&pet)?);
        // Staged in one set-many everywhere: a pending record is no pet.
        commit(store, reserved, &pending.encode(), true)?;
        match self.claim(from, reserved.id, begun)? {
            owner if owner != reserved.id => follow(store, keyed, owner),
            _ if !pending.finishable(store.now_ms(), keyed.lease.lease_ms) => {
                Err(failed("the keyed create ran past its commit window"))
            }
            _ => {
                commit_pet(store, reserved.id, &pending.record)?;
                Ok(Followed::Done(Created::Pet(pet)))
            }
        }
    }

    /// The word swapped from `from` to `ours`; the word after, read back
    /// unless the swap reported success (Redis reports a conflict after
    /// writing). A swap that did not land is tried again.
    fn claim(&self, from: i64, ours: i64, mut begun: Begun<S::Cas>) -> Result<i64> {
        let (store, record) = (self.store, &self.keyed.record_key);
        let mut failure = StoreError("the claim's swap did not land".into());
        let mut backoff = store.backoff();
        loop {
            let (cas, current) = match begun.take() {
                Some(begun) => begun,
                None => store.cas_begin(record)?,
            };
            let word = self.bound(current.as_deref())?;
            if word != from {
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
            match self.bound(store.get(record)?.as_deref())? {
                word if word == from && backoff.wait() => {}
                word if word == from => return Err(ApiError::StoreUnavailable(failure)),
                word => return Ok(word),
            }
        }
    }

    /// The id a word binds its key to (0: free); another layout's record,
    /// refused as `ctr:id` says.
    fn bound(&self, held: Option<&[u8]>) -> Result<i64> {
        let Some(bytes) = held else {
            return Ok(0);
        };
        word(bytes).ok_or_else(|| match self.store.get(ID_COUNTER) {
            Ok(Some(mark)) if decode_counter(&mark).is_none() => (self.refuse)(&mark),
            _ => unreadable(&self.keyed.record_key),
        })
    }
}

/// The key is bound to pet `id`: replay it, refuse another request, finish
/// a create stopped before its commit, or give it up past its window.
pub fn follow<S: KvStore>(store: &Retrying<'_, S>, keyed: &Keyed, id: i64) -> Result<Followed> {
    let (expected, key) = (encode_pet(&keyed.pet(id))?, pet_key(id));
    match PetRecord::of(&key, store.get(&key)?)? {
        PetRecord::Committed { json, .. } if json == expected => {
            Ok(Followed::Done(Created::Replayed { id, body: json }))
        }
        PetRecord::Pending(p) if p.record == expected => {
            keyed.within_lease(p.started_ms)?;
            let (now_ms, lease_ms) = (store.now_ms(), keyed.lease.lease_ms);
            if p.finishable(now_ms, lease_ms) {
                // The owner's own commit, byte for byte.
                commit_pet(store, id, &p.record)?;
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
            keyed.record_key
        ))),
    }
}

/// The pet over its pending record: one `set`, read back if it fails.
fn commit_pet<S: KvStore>(store: &Retrying<'_, S>, id: i64, record: &[u8]) -> Result<()> {
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
