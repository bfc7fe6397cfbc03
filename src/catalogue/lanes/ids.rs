//! A lanes store as one read found it: its mark and its heads (32, or 16
//! on a store 1.3.0 claimed); which id each round of each lane is.

use crate::errors::ApiError;
use crate::model::WIDTHS;

use crate::catalogue::keys::head_key;
use crate::catalogue::layout::Mark;

use super::head::Head;

/// A store of the lanes layout as one read found it: its mark and the
/// heads of its lanes.
#[derive(Debug, Clone)]
pub struct Lanes {
    pub mark: Mark,
    pub heads: Vec<Head>,
}

impl Lanes {
    /// The keys of the heads of a store of `width` lanes; of [`LANES`](crate::model::LANES)
    /// (every store's), as a create or a page reads them with `ctr:id`, in
    /// one `get-many`, before it knows how many the store has.
    pub fn head_keys(width: usize) -> impl Iterator<Item = String> {
        (0..width).map(head_key)
    }

    /// The heads of the store `mark` names, from what a `get-many` found.
    pub fn read<'v>(
        mark: Mark,
        value: impl Fn(&str) -> Option<&'v [u8]>,
    ) -> Result<Lanes, ApiError> {
        Ok(Lanes {
            mark,
            heads: Lanes::heads(mark.lanes, value)?,
        })
    }

    /// `width` heads, each decoded from its key's value (`None`: round 0).
    pub fn heads<'v>(
        width: usize,
        value: impl Fn(&str) -> Option<&'v [u8]>,
    ) -> Result<Vec<Head>, ApiError> {
        (0..width)
            .map(|k| Head::decode(&head_key(k), value(&head_key(k))))
            .collect()
    }

    /// How many lanes the store has.
    pub fn width(&self) -> usize {
        self.mark.lanes
    }

    /// The id of round `round` (from 1) of `lane`.
    pub fn id(&self, lane: usize, round: u64) -> i64 {
        self.mark.base + self.width() as i64 * (round as i64 - 1) + lane as i64
    }

    /// The lane and round of a lane id (at least the base).
    pub fn place(&self, id: i64) -> (usize, u64) {
        let offset = id - self.mark.base;
        let width = self.width() as i64;
        ((offset % width) as usize, (offset / width) as u64 + 1)
    }

    /// Each lane's round, as read.
    pub fn rounds(&self) -> Vec<u64> {
        self.heads.iter().map(|head| head.round).collect()
    }
}

/// The lanes an id may be in, on a store of 16 lanes and on one of 32,
/// whatever the base (always 1 more than a multiple of 32): where getPet
/// finds a pet its lane has not stored yet, before it knows which the
/// store has (the same lane twice when the id is in the first 16).
pub fn lanes_of(id: i64) -> [usize; 2] {
    WIDTHS.map(|width| ((id - 1) % width as i64) as usize)
}

/// The rounds of `width` lanes that begin at `base` whose ids are below
/// `position` (a counters cursor: every id below it was listed).
pub fn rounds_below(base: i64, position: Option<i64>, width: usize) -> Vec<u64> {
    let mut rounds = vec![0; width];
    if let Some(position) = position.filter(|p| *p > base) {
        for (lane, round) in rounds.iter_mut().enumerate() {
            let below = position - 1 - base - lane as i64;
            if below >= 0 {
                *round = (below / width as i64) as u64 + 1;
            }
        }
    }
    rounds
}
