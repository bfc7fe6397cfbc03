//! A lanes store as one read found it: its mark and the 16 heads; which id
//! each round of each lane is.

use crate::errors::ApiError;
use crate::model::LANES;

use crate::catalogue::keys::head_key;
use crate::catalogue::layout::Mark;

use super::head::Head;

/// A store of the lanes layout as one read found it: its mark and the 16
/// heads.
#[derive(Debug, Clone)]
pub struct Lanes {
    pub mark: Mark,
    pub heads: Vec<Head>,
}

impl Lanes {
    /// The keys of the heads, as a create or a page reads them (with
    /// `ctr:id`, in one `get-many`).
    pub fn head_keys() -> impl Iterator<Item = String> {
        (0..LANES).map(head_key)
    }

    /// The heads, from what a `get-many` found.
    pub fn read<'v>(
        mark: Mark,
        value: impl Fn(&str) -> Option<&'v [u8]>,
    ) -> Result<Lanes, ApiError> {
        Ok(Lanes {
            mark,
            heads: Lanes::heads(value)?,
        })
    }

    /// The 16 heads, each decoded from its key's value (`None`: round 0).
    pub fn heads<'v>(value: impl Fn(&str) -> Option<&'v [u8]>) -> Result<Vec<Head>, ApiError> {
        (0..LANES)
            .map(|k| Head::decode(&head_key(k), value(&head_key(k))))
            .collect()
    }

    /// The id of round `round` (from 1) of `lane`.
    pub fn id(&self, lane: usize, round: u64) -> i64 {
        self.mark.base + LANES as i64 * (round as i64 - 1) + lane as i64
    }

    /// The lane and round of a lane id (at least the base).
    pub fn place(&self, id: i64) -> (usize, u64) {
        let offset = id - self.mark.base;
        (
            (offset % LANES as i64) as usize,
            (offset / LANES as i64) as u64 + 1,
        )
    }

    pub fn rounds(&self) -> [u64; LANES] {
        let mut rounds = [0; LANES];
        for (round, head) in rounds.iter_mut().zip(&self.heads) {
            *round = head.round;
        }
        rounds
    }
}

/// The lane of an id, whatever the base (always 1 more than a multiple of
/// 32): where getPet finds a pet its lane has not stored yet.
pub fn lane_of(id: i64) -> usize {
    ((id - 1) % LANES as i64) as usize
}
