//! A lanes create under an `Idempotency-Key`: its intent (lane, round, start,
//! nonce, pet) claimed by put-if-absent, then its round; replayed, refused,
//! finished or moved on by whoever finds it. docs/key-value-layout.md.

use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use crate::catalogue::bound::{follow, Followed};
use crate::catalogue::created::{Created, Keyed};
use crate::catalogue::keys::{decode_counter, INTENT_HEADER};
use crate::catalogue::record::unreadable;

use super::choice::{first_choice, other_choice};
use super::claim::{claim, claimed, nonce, pet_at, Claim, Want, QUICK_TRIES};
use super::heads::Heads;

// An intent: [`INTENT_HEADER`], then `<lane> <round> <id> <started ms>
// <nonce>`, a newline, the pet's JSON.

#[derive(Debug, Clone, PartialEq, Eq)]
struct Intent {
    lane: usize,
    round: u64,
    id: i64,
    started_ms: u64,
    nonce: u64,
    json: Vec<u8>,
}

impl Intent {
    fn encode(&self) -> Vec<u8> {
        let mut out = format!(
            "{INTENT_HEADER}{} {} {} {} {:016x}\n",
            self.lane, self.round, self.id, self.started_ms, self.nonce
        )
        .into_bytes();
        out.extend_from_slice(&self.json);
        out
    }

    fn decode(bytes: &[u8]) -> Option<Intent> {
        let rest = bytes.strip_prefix(INTENT_HEADER.as_bytes())?;
        let line = rest.iter().position(|b| *b == b'\n')?;
        let mut words = std::str::from_utf8(&rest[..line]).ok()?.split(' ');
        let intent = Intent {
            lane: words.next()?.parse().ok()?,
            round: words.next()?.parse().ok()?,
            id: words.next()?.parse().ok()?,
            started_ms: words.next()?.parse().ok()?,
            nonce: u64::from_str_radix(words.next()?, 16).ok()?,
            json: rest[line + 1..].to_vec(),
        };
        words.next().is_none().then_some(intent)
    }
}

/// What the key's record holds.
enum Record {
    /// Nothing, or a counters word of 0: free.
    Free,
    Intent(Intent),
    /// A counters word: the id of the pet the key was bound to before the
    /// move.
    Bound(i64),
}

/// Creates the request's pet once per key. When the key is new: the
/// record's `current` (absent), the heads' read (`lanes`), the record's
/// `swap` (the intent), then the claim of the intent's round (the head's
/// `current`, the store of its pet, the head's `swap`): six calls. A
/// replay: the record's `current`, and one `get-many` of the head and the
/// pet.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    lanes: &dyn Fn() -> Result<Heads, ApiError>,
) -> Result<Created, ApiError> {
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = store.cas_begin(&keyed.record_key)?;
        let intent = match record(keyed, current.as_deref())? {
            Record::Intent(intent) => return follow_intent(store, keyed, intent, lanes),
            Record::Bound(id) => match follow(store, keyed, id)? {
                Followed::Done(created) => return Ok(created),
                // Given up: the key is bound anew, from that word.
                Followed::Abandoned(_) => lead(store, keyed, lanes()?)?,
            },
            Record::Free => lead(store, keyed, lanes()?)?,
        };
        match store.cas_swap(cas, &intent.0.encode()) {
            Ok(SwapReport::Swapped) => return finish(store, keyed, intent.1, lanes, intent.0),
            Ok(SwapReport::Conflict) => {}
            Err(e) => store.learn(&e, &mut backoff),
        }
        // Whatever the swap reported, what the record holds decides.
        match record(keyed, store.get(&keyed.record_key)?.as_deref())? {
            Record::Intent(held) if held == intent.0 => {
                return finish(store, keyed, intent.1, lanes, intent.0)
            }
            Record::Intent(held) => return follow_intent(store, keyed, held, lanes),
            _ if backoff.wait() => {}
            _ => {
                return Err(ApiError::StoreUnavailable(StoreError(
                    "the key's claim did not land".into(),
                )))
            }
        }
    }
}

/// The intent of a create that leads: the next round of the lane
/// [`first_choice`] names.
fn lead<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    lanes: Heads,
) -> Result<(Intent, Heads), ApiError> {
    let lane = first_choice(&lanes.rounds(), store.random());
    let round = lanes.head(lane).round() + 1;
    let intent = intent(
        keyed,
        &lanes,
        lane,
        round,
        keyed.lease.now_ms,
        nonce(store.random()),
    )?;
    Ok((intent, lanes))
}

fn intent(
    keyed: &Keyed,
    lanes: &Heads,
    lane: usize,
    round: u64,
    started_ms: u64,
    nonce: u64,
) -> Result<Intent, ApiError> {
    let pet = claimed(&keyed.new, lanes.id(lane, round), nonce)?;
    Ok(Intent {
        lane,
        round,
        id: pet.id(),
        started_ms,
        nonce,
        json: pet.into_json(),
    })
}

/// Claims the intent's round; when another create took it first, moves the
/// intent to the next round of the lane [`other_choice`] names in the heads
/// read again (a compare-and-swap of the record from this intent), so that
/// lanes stay as even as plain creates keep them, and claims that one.
fn finish<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    mut read: Heads,
    lanes: &dyn Fn() -> Result<Heads, ApiError>,
    mut intent: Intent,
) -> Result<Created, ApiError> {
    let mut backoff = store.backoff();
    let mut tries = 0;
    loop {
        tries += 1;
        // The request's pet is the intent's (a follower checked it).
        let pet = claimed(&keyed.new, intent.id, intent.nonce)?;
        let make = |_| Ok(pet.clone());
        let want = Want::Round(intent.round);
        if let Claim::Won(id) = claim(store, &read, intent.lane, want, intent.nonce, &make)? {
            return Ok(Created::Pet(keyed.new.clone().into_pet(id)));
        }
        if tries >= QUICK_TRIES && !backoff.wait() {
            return Err(ApiError::StoreUnavailable(StoreError(
                "every round tried was taken by creates at the same moment".into(),
            )));
        }
        read = lanes()?;
        let lane = other_choice(&read.rounds(), intent.lane, store.random());
        let round = read.head(lane).round() + 1;
        let moved = self::intent(keyed, &read, lane, round, intent.started_ms, intent.nonce)?;
        let (cas, current) = store.cas_begin(&keyed.record_key)?;
        let swapped = match record(keyed, current.as_deref())? {
            Record::Intent(held) if held == intent => store.cas_swap(cas, &moved.encode()),
            Record::Intent(held) => return follow_intent(store, keyed, held, lanes),
            _ => return Err(lost_intent(keyed)),
        };
        if let Ok(SwapReport::Swapped) = swapped {
            intent = moved;
            continue;
        }
        match record(keyed, store.get(&keyed.record_key)?.as_deref())? {
            Record::Intent(held) if held == moved => intent = moved,
            Record::Intent(held) if held == intent => {}
            Record::Intent(held) => return follow_intent(store, keyed, held, lanes),
            _ => return Err(lost_intent(keyed)),
        }
    }
}

/// The key holds another request's intent: another pet → 422; its round
/// claimed by it → a replay; not yet, within the lease → 409; after it →
/// finish it as its owner would.
fn follow_intent<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    intent: Intent,
    lanes: &dyn Fn() -> Result<Heads, ApiError>,
) -> Result<Created, ApiError> {
    let expected = claimed(&keyed.new, intent.id, intent.nonce)?;
    if expected.json() != intent.json {
        return Err(ApiError::IdempotencyKeyReused);
    }
    if let Some((owner, json)) = pet_at(store, intent.lane, intent.round, intent.id)? {
        if owner == intent.nonce {
            return Ok(Created::Replayed {
                id: intent.id,
                body: json,
            });
        }
    }
    keyed.within_lease(intent.started_ms)?;
    finish(store, keyed, lanes()?, lanes, intent)
}

/// What the key's record holds.
fn record(keyed: &Keyed, bytes: Option<&[u8]>) -> Result<Record, ApiError> {
    let Some(bytes) = bytes else {
        return Ok(Record::Free);
    };
    if bytes.starts_with(INTENT_HEADER.as_bytes()) {
        return Intent::decode(bytes)
            .map(Record::Intent)
            .ok_or_else(|| unreadable(&keyed.record_key));
    }
    // A word of the counters layout: 0 is free, else a pet's id.
    match decode_counter(bytes).filter(|id| *id >= 0) {
        Some(0) => Ok(Record::Free),
        Some(id) => Ok(Record::Bound(id)),
        None => Err(unreadable(&keyed.record_key)),
    }
}

fn lost_intent(keyed: &Keyed) -> ApiError {
    ApiError::Internal(format!("{} lost its intent", keyed.record_key))
}
