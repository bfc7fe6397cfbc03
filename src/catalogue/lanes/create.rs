//! A lanes create: the lane it tries, the claim of its next round by
//! compare-and-swap of the head after storing the pet the head held.

use super::head::{Claimed, Head, Heads};
use crate::catalogue::{created::failed, created::Result, keys::head_key, keys::pet_key};
use crate::{catalogue::reader::found as found_in, catalogue::record::PetRecord, store::KvStore};
use crate::{errors::ApiError, model::NewPet, model::Pet, retry::Retrying, store::SwapReport};

/// How many rounds past the fewest a create may claim a lane: no lane runs
/// more than `AHEAD + 1` rounds ahead of another, so an id is at most
/// `width × (AHEAD + 1) − 1` below one acknowledged before it.
pub const AHEAD: u64 = 3;
/// Heads tried one after the other without a wait.
pub const QUICK_TRIES: u32 = 4;

pub fn heads<S: KvStore>(store: &Retrying<'_, S>, known: &Heads) -> Result<Heads> {
    let g = *known.geometry();
    let found = store.get_many(&Heads::keys(g.width()).collect::<Vec<_>>())?;
    Heads::read(g, |key| found_in(&found, key))
}

/// The next round of a lane at most [`AHEAD`] past the fewest; after a race
/// lost, of another (at once; from the [`QUICK_TRIES`]th, after a wait).
pub fn create<S: KvStore>(store: &Retrying<'_, S>, mut lanes: Heads, new: NewPet) -> Result<Pet> {
    let nonce = nonce(store.random());
    let mut lane = first_choice(&lanes.rounds(), store.random());
    let mut backoff = store.backoff();
    for tries in 1.. {
        let ceiling = lanes.rounds().into_iter().min().unwrap_or(0) + AHEAD;
        let make = |id| Claimed::of(&new.clone().into_pet(id), nonce);
        match claim(store, &lanes, (lane, Want::Next { ceiling }), nonce, &make)? {
            Claim::Won(id) => return Ok(new.into_pet(id)),
            _ if tries >= QUICK_TRIES && !backoff.wait() => break,
            // Where every lane is, if the choice was made on what passed.
            Claim::Lost(_, true) => lanes = heads(store, &lanes)?,
            Claim::Lost(head, false) => lanes.set(lane, head),
        }
        lane = draw(&lanes.rounds(), Some(lane), store.random());
    }
    Err(failed("each lane tried was taken by another create"))
}

pub fn nonce(random: [u8; 16]) -> u64 {
    u64::from_le_bytes(random[..8].try_into().unwrap_or_default())
}

/// The next lane in turn when they were filled one at a time (so creates
/// one at a time get 1, 2, 3, …); else one drawn, so racing ones spread.
pub fn first_choice(rounds: &[u64], random: [u8; 16]) -> usize {
    let fewest = rounds.iter().copied().min().unwrap_or(0);
    let descending = rounds.windows(2).all(|w| w[0] >= w[1]);
    match descending && rounds.first().is_some_and(|f| f - fewest <= 1) {
        true => rounds.iter().position(|r| *r == fewest).unwrap_or(0),
        false => draw(rounds, None, random),
    }
}

/// The fewer-rounds of two lanes drawn among those (but `tried`) at most
/// [`AHEAD`] past the fewest: creates spread, and fill those behind first.
pub fn draw(rounds: &[u64], tried: Option<usize>, random: [u8; 16]) -> usize {
    let fewest = rounds.iter().copied().min().unwrap_or(0);
    let pool = (0..rounds.len()).filter(|k| Some(*k) != tried && rounds[*k] <= fewest + AHEAD);
    let pool: Vec<usize> = pool.collect();
    let pick = |at: usize| {
        let bits = u32::from_le_bytes(random[at..at + 4].try_into().unwrap_or_default());
        *pool.get(bits as usize % pool.len().max(1)).unwrap_or(&0)
    };
    // The first on a tie.
    let picks = [pick(8), pick(12)];
    picks.into_iter().min_by_key(|k| rounds[*k]).unwrap_or(0)
}

#[derive(Debug, Clone, Copy)]
pub enum Want {
    /// The lane's next, unless the lane is past round `ceiling`.
    Next { ceiling: u64 },
    /// Exactly this one (a keyed create's intent), which must be the next.
    Round(u64),
}

/// Won: the round's id. Lost: the head as last read, and whether it is
/// past the ceiling (the rounds the create chose by have passed).
pub enum Claim {
    Won(i64),
    Lost(Head, bool),
}

/// Claims a round of `lane` for the create `nonce`: stores the pet the
/// head held first (another swap then wins only within one round trip),
/// then swaps the head; a failed swap is settled by reading back.
pub fn claim<S: KvStore>(
    store: &Retrying<'_, S>,
    lanes: &Heads,
    (lane, want): (usize, Want),
    nonce: u64,
    make: &dyn Fn(i64) -> Result<Claimed>,
) -> Result<Claim> {
    let (key, mut backoff, g) = (head_key(lane), store.backoff(), lanes.geometry());
    let (read, mut stored) = (&lanes.all()[lane], None);
    let worth = match want {
        Want::Next { ceiling } => read.round() <= ceiling,
        Want::Round(wanted) => wanted == read.round() + 1,
    };
    if let (true, Some(writes)) = (worth, read.stored(lane)) {
        store.set_many(&writes)?;
        stored = Some(read.round());
    }
    let behind = |round| ApiError::Internal(format!("{key} is behind round {round}"));
    loop {
        let (cas, current) = store.cas_begin(&key)?;
        let head = Head::decode(&key, current.as_deref())?;
        let next = head.round() + 1;
        match want {
            Want::Next { ceiling } if head.round() > ceiling => return Ok(Claim::Lost(head, true)),
            Want::Round(wanted) if wanted < next => {
                return Ok(match owner_of(store, lane, wanted, g.id(lane, wanted))?.0 {
                    Some((owner, _)) if owner == nonce => Claim::Won(g.id(lane, wanted)),
                    _ => Claim::Lost(head, false),
                })
            }
            Want::Round(wanted) if wanted > next => return Err(behind(wanted)),
            _ => {}
        }
        if let (true, Some(writes)) = (stored != Some(head.round()), head.stored(lane)) {
            store.set_many(&writes)?;
        }
        stored = Some(head.round());
        let pet = make(g.id(lane, next))?;
        match store.cas_swap(cas, &head.next(pet.clone()).encode()) {
            Ok(SwapReport::Swapped) => return Ok(Claim::Won(pet.id())),
            Ok(SwapReport::Conflict) => {}
            Err(e) => store.learn(&e, &mut backoff),
        }
        // Lost, or not known (DynamoDB reports a lost reply as a conflict).
        match owner_of(store, lane, next, pet.id())? {
            (Some((owner, _)), _) if owner == nonce => return Ok(Claim::Won(pet.id())),
            (Some(_), head) => return Ok(Claim::Lost(head, false)),
            (None, _) if backoff.wait() => {}
            (None, _) => return Err(failed("the claim of a lane's head did not land")),
        }
    }
}

/// Whose a round is (its nonce and JSON; none yet), and the lane's head.
pub type Owner = (Option<(u64, Vec<u8>)>, Head);

/// Whose `round` of `lane` is, and the lane's head: one `get-many` of the
/// head and the stored pet.
pub fn owner_of(store: &impl KvStore, lane: usize, round: u64, id: i64) -> Result<Owner> {
    let (key, pet) = (head_key(lane), pet_key(id));
    let found = store.get_many(&[key.clone(), pet.clone()])?;
    let head = Head::decode(&key, found_in(&found, &key))?;
    let owner = match head.round() {
        r if r < round => None,
        r if r == round => head.last().map(|last| (last.nonce(), last.json().to_vec())),
        _ => match PetRecord::of(&pet, found_in(&found, &pet).map(<[u8]>::to_vec))? {
            PetRecord::Committed { json, nonce } => nonce.map(|nonce| (nonce, json)),
            _ => None,
        }
        .map(Some)
        .ok_or_else(|| ApiError::Internal(format!("{pet} is below its lane's head, not stored")))?,
    };
    Ok((owner, head))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` random inputs, each different (a xorshift's words).
    fn draw_bits(n: usize) -> Vec<[u8; 16]> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                let mut out = [0u8; 16];
                for half in out.chunks_mut(8) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    half.copy_from_slice(&x.to_le_bytes());
                }
                out
            })
            .collect()
    }

    #[test]
    fn one_at_a_time_creates_fill_the_lanes_in_turn_and_racing_ones_spread() {
        for width in [16, 32, 64] {
            let mut rounds = vec![0u64; width];
            for n in 0..200u64 {
                let k = first_choice(&rounds, [n as u8; 16]);
                assert_eq!(k as u64, n % width as u64, "in turn, {width} lanes");
                rounds[k] += 1;
            }
            // Racing creates: lanes 0 and 5 two rounds ahead, 9 past the
            // ceiling, 3 a round behind the rest.
            let mut rounds = vec![1u64; width];
            (rounds[0], rounds[5], rounds[9], rounds[3]) = (3, 3, 5, 0);
            let mut drawn = vec![0usize; width];
            for bits in draw_bits(8000) {
                drawn[first_choice(&rounds, bits)] += 1;
                let other = draw(&rounds, Some(3), bits);
                assert!(other != 3 && rounds[other] <= AHEAD, "{other}");
            }
            assert_eq!(drawn[9], 0, "past the fewest + AHEAD: never");
            assert_eq!(
                drawn.iter().filter(|n| **n > 0).count(),
                width - 1,
                "every lane but 9: {drawn:?}"
            );
            // Two choices: the lane behind drawn most, those ahead least.
            let even = drawn[1];
            assert!(2 * drawn[3] > 3 * even && 4 * drawn[0] < even, "{drawn:?}");
        }
    }
}
