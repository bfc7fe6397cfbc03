//! A lanes create under an `Idempotency-Key`: its intent (lane, round,
//! start, nonce, pet) claimed by put-if-absent, then its round; replayed,
//! refused, finished or moved on by whoever finds it.

use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use super::create::{claim, draw, first_choice, nonce, owner_of, Claim, Want, QUICK_TRIES};
use super::head::{Claimed, Heads};

use crate::catalogue::created::{Created, Followed, Keyed};
use crate::catalogue::record::{first_line, unreadable};

/// `petstore-intent 1 <lane> <round> <id> <started ms> <nonce>`, a
/// newline, the pet's JSON.
const HEADER: &str = "petstore-intent 1 ";

#[derive(Debug, Clone, PartialEq, Eq)]
struct Intent {
    lane: usize,
    round: u64,
    started_ms: u64,
    pet: Claimed,
}

impl Intent {
    /// `keyed`'s pet as the next round of `lane` in `lanes`.
    fn new(
        keyed: &Keyed,
        lanes: &Heads,
        lane: usize,
        started_ms: u64,
        nonce: u64,
    ) -> Result<Intent, ApiError> {
        let round = lanes.head(lane).round() + 1;
        let pet = Claimed::of(&keyed.pet(lanes.geometry().id(lane, round)), nonce)?;
        Ok(Intent {
            lane,
            round,
            started_ms,
            pet,
        })
    }

    fn encode(&self) -> Vec<u8> {
        let (lane, round, id, nonce) = (self.lane, self.round, self.pet.id(), self.pet.nonce());
        let meta = format!(
            "{HEADER}{lane} {round} {id} {} {nonce:016x}\n",
            self.started_ms
        );
        [meta.as_bytes(), self.pet.json()].concat()
    }

    /// The intent, if `bytes` is one; `keyed`'s pet decides whether the
    /// JSON is that request's (else, 422).
    fn decode(keyed: &Keyed, bytes: &[u8]) -> Option<Result<Intent, ApiError>> {
        let rest = bytes.strip_prefix(HEADER.as_bytes())?;
        let read = || {
            let (meta, json) = first_line(rest)?;
            let mut words = meta.split(' ');
            let (lane, round, id, started_ms) = (
                words.next()?.parse().ok()?,
                words.next()?.parse().ok()?,
                words.next()?.parse().ok()?,
                words.next()?.parse().ok()?,
            );
            let nonce = u64::from_str_radix(words.next()?, 16).ok()?;
            words
                .next()
                .is_none()
                .then_some((lane, round, id, started_ms, nonce, json))
        };
        let Some((lane, round, id, started_ms, nonce, json)) = read() else {
            return Some(Err(unreadable(&keyed.record_key)));
        };
        Some(match Claimed::of(&keyed.pet(id), nonce) {
            Ok(pet) if pet.json() == json => Ok(Intent {
                lane,
                round,
                started_ms,
                pet,
            }),
            Ok(_) => Err(ApiError::IdempotencyKeyReused),
            Err(e) => Err(e),
        })
    }
}

/// What a record this layout did not write leads to: a moved store's
/// counters part follows its word (`None`: no part of the store wrote it).
pub type Older<'o> = &'o dyn Fn(&[u8]) -> Option<Result<Followed, ApiError>>;

/// Creates the request's pet once per key. A new key: the record's
/// `current` (absent), the heads' read, its `swap` (the intent), then the
/// claim of the intent's round. A replay: the record's `current`, one
/// `get-many` of the head and the pet.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    lanes: &dyn Fn() -> Result<Heads, ApiError>,
    older: Older,
) -> Result<Created, ApiError> {
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = store.cas_begin(&keyed.record_key)?;
        match current
            .as_deref()
            .map(|held| (Intent::decode(keyed, held), held))
        {
            Some((Some(intent), _)) => return follow(store, keyed, intent?, lanes),
            Some((None, held)) => {
                match older(held).ok_or_else(|| unreadable(&keyed.record_key))?? {
                    Followed::Done(created) => return Ok(created),
                    Followed::Abandoned(_) => {}
                }
            }
            None => {}
        }
        let read = lanes()?;
        let lane = first_choice(&read.rounds(), store.random());
        let intent = Intent::new(
            keyed,
            &read,
            lane,
            keyed.lease.now_ms,
            nonce(store.random()),
        )?;
        match store.cas_swap(cas, &intent.encode()) {
            Ok(SwapReport::Swapped) => return finish(store, keyed, read, lanes, intent),
            Ok(SwapReport::Conflict) => {}
            Err(e) => store.learn(&e, &mut backoff),
        }
        // Whatever the swap reported, what the record holds decides.
        match store
            .get(&keyed.record_key)?
            .and_then(|held| Intent::decode(keyed, &held))
        {
            Some(Ok(held)) if held == intent => return finish(store, keyed, read, lanes, intent),
            Some(held) => return follow(store, keyed, held?, lanes),
            None if backoff.wait() => {}
            None => {
                return Err(ApiError::StoreUnavailable(StoreError(
                    "the key's claim did not land".into(),
                )))
            }
        }
    }
}

/// Claims the intent's round; when another create took it first, moves the
/// intent to the next round of the lane [`draw`] names in the heads read
/// again (a compare-and-swap of the record from this intent only), so that
/// lanes stay as even as plain creates keep them, and claims that one.
fn finish<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    mut read: Heads,
    lanes: &dyn Fn() -> Result<Heads, ApiError>,
    mut intent: Intent,
) -> Result<Created, ApiError> {
    let (mut backoff, mut tries) = (store.backoff(), 0);
    loop {
        tries += 1;
        let (pet, want) = (intent.pet.clone(), Want::Round(intent.round));
        if let Claim::Won(id) = claim(store, &read, intent.lane, want, pet.nonce(), &|_| {
            Ok(pet.clone())
        })? {
            return Ok(Created::Pet(keyed.pet(id)));
        }
        if tries >= QUICK_TRIES && !backoff.wait() {
            let why = "every round tried was taken by creates at the same moment";
            return Err(ApiError::StoreUnavailable(StoreError(why.into())));
        }
        read = lanes()?;
        let lane = draw(&read.rounds(), Some(intent.lane), store.random());
        let moved = Intent::new(keyed, &read, lane, intent.started_ms, intent.pet.nonce())?;
        let (cas, current) = store.cas_begin(&keyed.record_key)?;
        let swapped = match current.and_then(|held| Intent::decode(keyed, &held)) {
            Some(Ok(held)) if held == intent => store.cas_swap(cas, &moved.encode()),
            Some(held) => return follow(store, keyed, held?, lanes),
            None => return Err(lost(keyed)),
        };
        if let Ok(SwapReport::Swapped) = swapped {
            intent = moved;
            continue;
        }
        match store
            .get(&keyed.record_key)?
            .and_then(|held| Intent::decode(keyed, &held))
        {
            Some(Ok(held)) if held == moved => intent = moved,
            Some(Ok(held)) if held == intent => {}
            Some(held) => return follow(store, keyed, held?, lanes),
            None => return Err(lost(keyed)),
        }
    }
}

/// The key holds this request's intent: its round claimed by it → a
/// replay; not yet, within the lease → 409; after it → finish it as its
/// owner would.
fn follow<S: KvStore>(
    store: &Retrying<'_, S>,
    keyed: &Keyed,
    intent: Intent,
    lanes: &dyn Fn() -> Result<Heads, ApiError>,
) -> Result<Created, ApiError> {
    let id = intent.pet.id();
    if let (Some((owner, body)), _) = owner_of(store, intent.lane, intent.round, id)? {
        if owner == intent.pet.nonce() {
            return Ok(Created::Replayed { id, body });
        }
    }
    keyed.within_lease(intent.started_ms)?;
    finish(store, keyed, lanes()?, lanes, intent)
}

fn lost(keyed: &Keyed) -> ApiError {
    ApiError::Internal(format!("{} lost its intent", keyed.record_key))
}
