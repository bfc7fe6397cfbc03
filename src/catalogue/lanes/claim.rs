//! A create of the lanes layout: the claim of a lane's next round by
//! compare-and-swap of its head, after storing the pet the head held; and
//! how a create learns whose a round is when a reply was lost.

use crate::errors::ApiError;
use crate::model::NewPet;
use crate::model::Pet;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use crate::catalogue::keys::{head_key, pet_key};
use crate::catalogue::record::PetRecord;

use super::choice::{first_choice, other_choice, AHEAD};
use super::head::{Claimed, Head};
use super::heads::Heads;

/// A create: the next round of the lane [`first_choice`] names, of another
/// after a race lost (at once: a race lost is another create's progress; from
/// the [`QUICK_TRIES`]th loss after a wait). A lane is claimed only while at
/// most [`AHEAD`] rounds past the fewest the create read: the id bound.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    mut lanes: Heads,
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
        let lost = match claim(store, &lanes, lane, Want::Next { ceiling }, nonce, &make)? {
            Claim::Won(id) => return Ok(new.into_pet(id)),
            Claim::Lost(lost) => lost,
        };
        if tries >= QUICK_TRIES && !backoff.wait() {
            return Err(ApiError::StoreUnavailable(StoreError(format!(
                "{tries} lanes tried were each taken by creates at the same moment"
            ))));
        }
        // Where the lane is now; and where every lane is, when the choice
        // and ceiling were made on what has passed.
        if lost.stale {
            lanes = super::store::heads(store, Some(*lanes.geometry()))?;
        } else {
            lanes.set(lane, lost.head);
        }
        rounds = lanes.rounds();
        lane = other_choice(&rounds, lane, store.random());
    }
}

/// Heads tried one after the other without a wait.
pub const QUICK_TRIES: u32 = 4;

/// 64 random bits that name one create.
pub fn nonce(random: [u8; 16]) -> u64 {
    let mut bits = [0u8; 8];
    bits.copy_from_slice(&random[..8]);
    u64::from_le_bytes(bits)
}

/// `new` as the pet of `id`, claimed by the create named `nonce`.
pub fn claimed(new: &NewPet, id: i64, nonce: u64) -> Result<Claimed, ApiError> {
    Claimed::of(&new.clone().into_pet(id), nonce)
}

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
    Lost(Lost),
}

/// A round that went to another create, or a lane past the ceiling.
pub struct Lost {
    /// The lane's head as the claim last read it.
    pub head: Head,
    /// The lane is past the ceiling: the rounds the create chose by have
    /// passed.
    pub stale: bool,
}

impl Lost {
    fn at(head: Head, stale: bool) -> Claim {
        Claim::Lost(Lost { head, stale })
    }
}

/// Claims the round `want` names of `lane` for the create named `nonce`:
/// the store of the pet the head held, then the head's `current` and `swap`
/// (storing first keeps the window in which another swap wins to one round
/// trip). A failed or conflicting swap is settled by reading back.
pub fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    lanes: &Heads,
    lane: usize,
    want: Want,
    nonce: u64,
    make: &dyn Fn(i64) -> Result<Claimed, ApiError>,
) -> Result<Claim, ApiError> {
    let key = head_key(lane);
    let mut backoff = store.backoff();
    // The head's pet, stored where every earlier round is (the same bytes
    // whoever writes them): the round whose pet is stored.
    let read = lanes.head(lane);
    let mut stored = None;
    let worth = match want {
        Want::Next { ceiling } => read.round() <= ceiling,
        Want::Round(wanted) => wanted == read.round() + 1,
    };
    if let (true, Some(writes)) = (worth, read.stored(lane)) {
        store.set_many(&writes)?;
        stored = Some(read.round());
    }
    loop {
        let (cas, current) = store.cas_begin(&key)?;
        let head = Head::decode(&key, current.as_deref())?;
        let next = head.round() + 1;
        match want {
            Want::Next { ceiling } if head.round() > ceiling => return Ok(Lost::at(head, true)),
            Want::Round(wanted) if wanted < next => {
                return Ok(match pet_at(store, lane, wanted, lanes.id(lane, wanted))? {
                    Some((owner, _)) if owner == nonce => Claim::Won(lanes.id(lane, wanted)),
                    _ => Lost::at(head, false),
                })
            }
            Want::Round(wanted) if wanted > next => {
                return Err(ApiError::Internal(format!(
                    "{key} is behind round {wanted}"
                )))
            }
            _ => {}
        }
        if stored != Some(head.round()) {
            if let Some(writes) = head.stored(lane) {
                store.set_many(&writes)?;
            }
            stored = Some(head.round());
        }
        let pet = make(lanes.id(lane, next))?;
        match store.cas_swap(cas, &head.next(pet.clone()).encode()) {
            Ok(SwapReport::Swapped) => return Ok(Claim::Won(pet.id())),
            Ok(SwapReport::Conflict) => {}
            Err(e) => store.learn(&e, &mut backoff),
        }
        // Lost, or not known (Spin's DynamoDB reports every failed swap,
        // a lost reply too, as a conflict): what the store holds decides.
        let (owner, head) = round_at(store, lane, next, pet.id())?;
        match owner {
            Some((owner, _)) if owner == nonce => return Ok(Claim::Won(pet.id())),
            Some(_) => return Ok(Lost::at(head, false)),
            None if backoff.wait() => {}
            None => {
                return Err(ApiError::StoreUnavailable(StoreError(format!(
                    "the claim of {key} did not land"
                ))))
            }
        }
    }
}

/// Whose a round is: the nonce of the create that claimed it, and its
/// pet's JSON.
pub type Owner = (u64, Vec<u8>);

/// The pet at `round` of `lane`, whose id is `id` (the nonce of the create
/// that claimed it, and its JSON), or `None` if no create claimed that
/// round yet: one `get-many` of the head and the stored pet.
pub fn pet_at<S: KvStore>(
    store: &S,
    lane: usize,
    round: u64,
    id: i64,
) -> Result<Option<Owner>, ApiError> {
    Ok(round_at(store, lane, round, id)?.0)
}

/// As [`pet_at`], with the lane's head as read.
fn round_at<S: KvStore>(
    store: &S,
    lane: usize,
    round: u64,
    id: i64,
) -> Result<(Option<Owner>, Head), ApiError> {
    let (key, pet) = (head_key(lane), pet_key(id));
    let mut found = store.get_many(&[key.clone(), pet.clone()])?;
    let head = Head::decode(&key, take(&mut found, &key).as_deref())?;
    let owner = owner(&head, round, &pet, take(&mut found, &pet))?;
    Ok((owner, head))
}

/// The value of `key` among what a `get-many` found, taken out.
fn take(found: &mut Vec<(String, Vec<u8>)>, key: &str) -> Option<Vec<u8>> {
    let at = found.iter().position(|(k, _)| k == key)?;
    Some(found.swap_remove(at).1)
}

/// Whose `round` of the lane whose head is `head` is, given the pet stored
/// at `pet` (`stored`).
fn owner(
    head: &Head,
    round: u64,
    pet: &str,
    stored: Option<Vec<u8>>,
) -> Result<Option<Owner>, ApiError> {
    if head.round() < round {
        return Ok(None);
    }
    if head.round() == round {
        return Ok(head.last().map(|last| (last.nonce(), last.json().to_vec())));
    }
    match PetRecord::of(pet, stored)? {
        PetRecord::Committed {
            json,
            nonce: Some(nonce),
        } => Ok(Some((nonce, json))),
        _ => Err(ApiError::Internal(format!(
            "{pet} is below its lane's head and not stored"
        ))),
    }
}
