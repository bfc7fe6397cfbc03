//! A create of the lanes layout: the claim of a lane's next round by
//! compare-and-swap of its head, after storing the pet the head held; and
//! how a create learns whose a round is when a reply was lost.

use crate::errors::ApiError;
use crate::model::NewPet;
use crate::model::Pet;
use crate::model::LANES;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use crate::catalogue::keys::{head_key, pet_key};
use crate::catalogue::record::{encode_pet, PetRecord};

use super::head::{first_choice, other_choice, Claimed, Head};
use super::ids::Lanes;

/// A create: the next round of a lane, tried first in the one
/// [`first_choice`] names, in another after a race lost. Four calls when
/// nothing races: the heads' read (done by the caller), the head's
/// compare-and-swap `current`, the store of the pet it held, the `swap`.
/// A lane is claimed only while it is at most [`AHEAD`] rounds past the
/// fewest the create read (rounds only grow, so that is at most the
/// store's fewest): no lane ever runs more than `AHEAD + 1` rounds ahead of
/// another. A race lost is another create's progress: the heads are read
/// again (one `get-many`) and another lane tried at once, and only from
/// the [`QUICK_TRIES`]th loss on after a wait of the retry policy's.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    lanes: &Lanes,
    new: NewPet,
) -> Result<Pet, ApiError> {
    let nonce = nonce(store.random());
    let mut rounds = lanes.rounds();
    let mut lane = first_choice(&rounds, store.random());
    let mut backoff = store.backoff();
    let mut tries = 0;
    loop {
        tries += 1;
        let make = |id| claimed(&new, id, nonce);
        let ceiling = rounds.iter().copied().min().unwrap_or(0) + AHEAD;
        match claim(store, lanes, lane, Want::Next { ceiling }, nonce, &make)? {
            Claim::Won(id) => return Ok(new.into_pet(id)),
            Claim::Lost => {}
        }
        if tries >= QUICK_TRIES && !backoff.wait() {
            return Err(ApiError::StoreUnavailable(StoreError(format!(
                "{tries} lanes tried were each taken by creates at the same moment"
            ))));
        }
        // Others moved on: where every lane is now, so that the next
        // choice and ceiling are not made on what has passed.
        rounds = current_rounds(store)?;
        lane = other_choice(&rounds, lane, store.random());
    }
}

/// Lanes tried one after the other without a wait.
const QUICK_TRIES: u32 = 4;

/// The rounds of the 16 heads: one `get-many`.
fn current_rounds<S: KvStore>(store: &Retrying<'_, S>) -> Result<[u64; LANES], ApiError> {
    let keys: Vec<String> = Lanes::head_keys().collect();
    let found = store.get_many(&keys)?;
    let mut rounds = [0; LANES];
    for (round, key) in rounds.iter_mut().zip(&keys) {
        let value = found
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice());
        *round = Head::decode(key, value)?.round;
    }
    Ok(rounds)
}

/// 64 random bits that name one create.
pub fn nonce(random: [u8; 16]) -> u64 {
    let mut bits = [0u8; 8];
    bits.copy_from_slice(&random[..8]);
    u64::from_le_bytes(bits)
}

/// `new` as the pet of `id`, claimed by the create named `nonce`.
pub fn claimed(new: &NewPet, id: i64, nonce: u64) -> Result<Claimed, ApiError> {
    let pet = new.clone().into_pet(id);
    Ok(Claimed {
        id,
        status: pet.status,
        nonce,
        json: encode_pet(&pet)?,
    })
}

/// How far past the fewest rounds a lane may be claimed: lanes stay within
/// 4 rounds of each other, so an id is at most 16 × 3 + 15 = 63 below one
/// acknowledged before its create began (docs/decisions.md, "Ids").
pub const AHEAD: u64 = 3;

/// Which round a claim takes.
#[derive(Debug, Clone, Copy)]
pub enum Want {
    /// The lane's next, unless the lane is past round `ceiling`.
    Next { ceiling: u64 },
    /// Exactly this one (a keyed create's intent), which must be the next.
    Round(u64),
}

/// How a claim ended.
pub enum Claim {
    /// The round, and so this id, is the create's.
    Won(i64),
    /// The round went to another create, or the lane is past the ceiling.
    Lost,
}

/// Claims the round `want` names of `lane` for the create named `nonce`:
/// `current` of the head, the store of the pet it holds, the `swap`. A
/// failed or conflicting swap is settled by reading back whose the round
/// is.
pub fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    lanes: &Lanes,
    lane: usize,
    want: Want,
    nonce: u64,
    make: &dyn Fn(i64) -> Result<Claimed, ApiError>,
) -> Result<Claim, ApiError> {
    let key = head_key(lane);
    let mut backoff = store.backoff();
    loop {
        let (cas, current) = match store.cas_begin(&key) {
            Ok(begun) => begun,
            Err(e) => {
                store.learn(&e, &mut backoff);
                if backoff.wait() {
                    continue;
                }
                return Err(ApiError::StoreUnavailable(e));
            }
        };
        let head = Head::decode(&key, current.as_deref())?;
        let next = head.round + 1;
        match want {
            Want::Next { ceiling } if head.round > ceiling => return Ok(Claim::Lost),
            Want::Round(wanted) if wanted < next => {
                return Ok(match pet_at(store, lane, wanted, lanes.id(lane, wanted))? {
                    Some((owner, _)) if owner == nonce => Claim::Won(lanes.id(lane, wanted)),
                    _ => Claim::Lost,
                })
            }
            Want::Round(wanted) if wanted > next => {
                return Err(ApiError::Internal(format!(
                    "{key} is behind round {wanted}"
                )))
            }
            _ => {}
        }
        if let Some(writes) = head.stored(lane) {
            store.set_many(&writes)?;
        }
        let pet = make(lanes.id(lane, next))?;
        match store.cas_swap(cas, &head.next(pet.clone()).encode()) {
            Ok(SwapReport::Swapped) => return Ok(Claim::Won(pet.id)),
            Ok(SwapReport::Conflict) => {}
            Err(e) => store.learn(&e, &mut backoff),
        }
        // Lost, or not known: what the store holds decides.
        match pet_at(store, lane, next, pet.id)? {
            Some((owner, _)) if owner == nonce => return Ok(Claim::Won(pet.id)),
            Some(_) => return Ok(Claim::Lost),
            None if backoff.wait() => {}
            None => {
                return Err(ApiError::StoreUnavailable(StoreError(format!(
                    "the claim of {key} did not land"
                ))))
            }
        }
    }
}

/// The pet at `round` of `lane`, whose id is `id` (the nonce of the create
/// that claimed it, and its JSON), or `None` if no create claimed that
/// round yet: one `get-many` of the head and the stored pet.
pub fn pet_at<S: KvStore>(
    store: &S,
    lane: usize,
    round: u64,
    id: i64,
) -> Result<Option<(u64, Vec<u8>)>, ApiError> {
    let (key, pet) = (head_key(lane), pet_key(id));
    let mut found = store.get_many(&[key.clone(), pet.clone()])?;
    let mut take = |k: &str| {
        let at = found.iter().position(|(found, _)| found == k)?;
        Some(found.swap_remove(at).1)
    };
    let (head_bytes, stored) = (take(&key), take(&pet));
    let head = Head::decode(&key, head_bytes.as_deref())?;
    if head.round < round {
        return Ok(None);
    }
    if head.round == round {
        return Ok(head.last.map(|last| (last.nonce, last.json)));
    }
    match PetRecord::of(&pet, stored)? {
        PetRecord::Committed {
            json,
            nonce: Some(nonce),
        } => Ok(Some((nonce, json))),
        _ => Err(ApiError::Internal(format!(
            "{pet} is below its lane's head and not stored"
        ))),
    }
}
