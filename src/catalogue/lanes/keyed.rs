//! A lanes create under an `Idempotency-Key`: its intent (lane, round,
//! start, nonce, pet) claimed by put-if-absent, then its round; replayed,
//! refused, finished or moved on by whoever finds it.

use super::create::{claim, draw, first_choice, nonce, owner_of, Claim, Want, QUICK_TRIES};
use super::head::{Claimed, Heads};
use crate::catalogue::created::{failed, Created, Followed, Keyed, Result};
use crate::catalogue::{counters, keys::decode_counter, record::unreadable, record::words};
use crate::store::{KvStore, SwapReport};
use crate::{errors::ApiError, model::number, model::padded, retry::Retrying};

impl Keyed {
    /// A lanes keyed create's intent, its record (here, where `formats.rs`
    /// reads it): `petstore-intent 1 <lane> <round> <id> <started ms>
    /// <nonce>`, a newline, the pet's JSON.
    pub const LANES_INTENT: &'static str = "petstore-intent 1 ";
}

const HEADER: &str = Keyed::LANES_INTENT;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Intent {
    /// The lane and round it claims.
    at: (usize, u64),
    /// When it began (ms).
    started: u64,
    pet: Claimed,
}

impl Intent {
    fn encode(&self) -> Vec<u8> {
        let ((lane, round), started) = (self.at, self.started);
        let (id, nonce) = (self.pet.id(), self.pet.nonce());
        let meta = format!("{HEADER}{lane} {round} {id} {started} {nonce:016x}\n");
        [meta.as_bytes(), self.pet.json()].concat()
    }
}

/// An intent's lane and round; its pet's id, its start, its create's nonce.
type Words = ((usize, u64), (i64, u64, u64));

/// The words of an intent, strictly (none: unreadable), and its JSON; or
/// `None` if `bytes` hold no intent.
fn read(bytes: &[u8]) -> Option<(Option<Words>, &[u8])> {
    let (words, json) = words(bytes, HEADER)?;
    let read = || match words[..] {
        [lane, round, id, started, nonce] => Some((
            (usize::try_from(number(lane)?).ok()?, number(round)? as u64),
            (number(id)?, number(started)? as u64, padded(nonce, 16, 16)?),
        )),
        _ => None,
    };
    Some((read(), json))
}

struct Key<'k, 's, S: KvStore> {
    store: &'k Retrying<'s, S>,
    keyed: &'k Keyed,
    lanes: &'k dyn Fn() -> Result<Heads>,
}

/// The request's pet, once per key: the record's `current`, the heads, its
/// `swap` (the intent), the claim; a replay: `current` and one `get-many`.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    lanes: &dyn Fn() -> Result<Heads>,
) -> Result<Created> {
    let key = Key {
        store,
        keyed,
        lanes,
    };
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = store.cas_begin(keyed.record_key())?;
        match current.as_deref().map(|held| (key.decode(held), held)) {
            Some((Some(intent), _)) => return key.follow(intent?),
            // A key bound before a move: the moved store's counters part
            // follows its word.
            Some((None, held)) => match decode_counter(held) {
                Some(0) => {}
                Some(id) => match counters::follow(store, keyed, id)? {
                    Followed::Done(created) => return Ok(created),
                    Followed::Abandoned(_) => {}
                },
                None => return Err(unreadable(keyed.record_key())),
            },
            None => {}
        }
        let read = lanes()?;
        let lane = first_choice(&read.rounds(), store.random());
        let intent = key.intent(&read, lane, keyed.lease().now_ms, nonce(store.random()))?;
        match store.cas_swap(cas, &intent.encode()) {
            Ok(SwapReport::Swapped) => return key.finish(read, intent),
            Ok(SwapReport::Conflict) => {}
            Err(e) => store.learn(&e, &mut backoff),
        }
        match key.read()? {
            Some(Ok(held)) if held == intent => return key.finish(read, intent),
            Some(held) => return key.follow(held?),
            None if backoff.wait() => {}
            None => return Err(failed("the key's claim did not land")),
        }
    }
}

impl<S: KvStore> Key<'_, '_, S> {
    fn intent(&self, lanes: &Heads, lane: usize, started: u64, nonce: u64) -> Result<Intent> {
        let at = (lane, lanes.all()[lane].round() + 1);
        let pet = Claimed::of(&self.keyed.pet(lanes.geometry().id(lane, at.1)), nonce)?;
        Ok(Intent { at, started, pet })
    }

    /// The intent `bytes` hold, if an intent: this request's, or a 422.
    fn decode(&self, bytes: &[u8]) -> Option<Result<Intent>> {
        let (read, json) = read(bytes)?;
        let Some((at, (id, started, nonce))) = read else {
            return Some(Err(unreadable(self.keyed.record_key())));
        };
        let pet = Claimed::of(&self.keyed.pet(id), nonce);
        Some(pet.and_then(|pet| match pet.json() == json {
            true => Ok(Intent { at, started, pet }),
            false => Err(ApiError::IdempotencyKeyReused),
        }))
    }

    fn read(&self) -> Result<Option<Result<Intent, ApiError>>> {
        let held = self.store.get(self.keyed.record_key())?;
        Ok(held.and_then(|held| self.decode(&held)))
    }

    /// Claims the intent's round; when another took it, moves the intent to
    /// another lane's next (swapped from this intent only), and claims it.
    fn finish(&self, mut read: Heads, mut intent: Intent) -> Result<Created> {
        let (store, mut backoff) = (self.store, self.store.backoff());
        for tries in 1.. {
            let (pet, want) = (intent.pet.clone(), Want::Round(intent.at.1));
            let make = |_| Ok(pet.clone());
            if let Claim::Won(id) = claim(store, &read, (intent.at.0, want), pet.nonce(), &make)? {
                return Ok(Created::Pet(self.keyed.pet(id)));
            }
            if tries >= QUICK_TRIES && !backoff.wait() {
                return Err(failed("each round tried was taken by another create"));
            }
            read = (self.lanes)()?;
            let lane = draw(&read.rounds(), Some(intent.at.0), store.random());
            let moved = self.intent(&read, lane, intent.started, intent.pet.nonce())?;
            let (cas, current) = store.cas_begin(self.keyed.record_key())?;
            let swapped = match current.and_then(|held| self.decode(&held)) {
                Some(Ok(held)) if held == intent => store.cas_swap(cas, &moved.encode()),
                Some(held) => return self.follow(held?),
                None => return Err(self.lost()),
            };
            if let Ok(SwapReport::Swapped) = swapped {
                intent = moved;
                continue;
            }
            match self.read()? {
                Some(Ok(held)) if held == moved => intent = moved,
                Some(Ok(held)) if held == intent => {}
                Some(held) => return self.follow(held?),
                None => return Err(self.lost()),
            }
        }
        Err(self.lost())
    }

    /// This request's intent: claimed → a replay; not yet, within the
    /// lease → 409; after → finished as its owner would.
    fn follow(&self, intent: Intent) -> Result<Created> {
        let ((lane, round), id) = (intent.at, intent.pet.id());
        if let (Some((owner, body)), _) = owner_of(self.store, lane, round, id)? {
            if owner == intent.pet.nonce() {
                return Ok(Created::Replayed { id, body });
            }
        }
        self.keyed.within_lease(intent.started)?;
        self.finish((self.lanes)()?, intent)
    }

    fn lost(&self) -> ApiError {
        ApiError::Internal(format!("{} lost its intent", self.keyed.record_key()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_is_read_strictly() {
        let good = format!("{HEADER}3 7 100 1800000000123 000000000000feed\n{{}}");
        let words = ((3, 7), (100, 1_800_000_000_123, 0xfeed));
        assert_eq!(read(good.as_bytes()), Some((Some(words), &b"{}"[..])));
        assert_eq!(
            read(b"petstore-intent 2 3 7 100 1 000000000000feed\n{}"),
            None
        );
        for bad in [
            "+3 7 100 1 000000000000feed",
            "3 -7 100 1 000000000000feed",
            "03 7 100 1 000000000000feed",
            "3 7 0100 1 000000000000feed",
            "3 7 +100 1 000000000000feed",
            "3 7 100 01 000000000000feed",
            "3 7 100 1 +00000000000feed",
            "3 7 100 1 feed",
            "3 7 100 1 0000000000000feed",
            "3 7 100 1",
        ] {
            let text = format!("{HEADER}{bad}\n{{}}");
            assert_eq!(read(text.as_bytes()).map(|r| r.0), Some(None), "{bad}");
        }
    }
}
