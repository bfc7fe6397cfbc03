//! The heads of a lanes store as one read found them, with its geometry:
//! each lane's round, its counts, its newest pet.

use crate::errors::ApiError;

use crate::catalogue::keys::head_key;

use super::geometry::Geometry;
use super::head::Head;

/// A lanes store as one read found it.
#[derive(Debug, Clone)]
pub struct Heads {
    geometry: Geometry,
    heads: Vec<Head>,
}

impl Heads {
    /// The keys of the heads of a store of `width` lanes.
    pub fn keys(width: usize) -> impl Iterator<Item = String> {
        (0..width).map(head_key)
    }

    /// The heads of the store `geometry` says, from what a `get-many`
    /// found (`value` of a key; `None`: absent, round 0).
    pub fn read<'v>(
        geometry: Geometry,
        value: impl Fn(&str) -> Option<&'v [u8]>,
    ) -> Result<Heads, ApiError> {
        let heads = (0..geometry.width())
            .map(|k| Head::decode(&head_key(k), value(&head_key(k))))
            .collect::<Result<_, _>>()?;
        Ok(Heads { geometry, heads })
    }

    /// Heads known only to be past round `stored` (a cursor's word), for
    /// a page of the unfiltered list within those rounds.
    pub fn past(geometry: Geometry, stored: u64) -> Heads {
        Heads {
            geometry,
            heads: vec![Head::past(stored); geometry.width()],
        }
    }

    /// Rounds every lane has stored: those below the least head's.
    pub fn stored_rounds(&self) -> u64 {
        let least = self.heads.iter().map(Head::round).min();
        least.unwrap_or(0).saturating_sub(1)
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn width(&self) -> usize {
        self.geometry.width()
    }

    /// The id of round `round` (from 1) of `lane`.
    pub fn id(&self, lane: usize, round: u64) -> i64 {
        self.geometry.id(lane, round)
    }

    pub fn head(&self, lane: usize) -> &Head {
        &self.heads[lane]
    }

    pub fn all(&self) -> &[Head] {
        &self.heads
    }

    /// A lane's head as read again.
    pub fn set(&mut self, lane: usize, head: Head) {
        self.heads[lane] = head;
    }

    /// Each lane's round, as read.
    pub fn rounds(&self) -> Vec<u64> {
        self.heads.iter().map(Head::round).collect()
    }
}
