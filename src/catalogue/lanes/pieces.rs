//! The lanes' index pieces, a cache built by readers: `ix3:all:{block}` (32 ids
//! by id) and `ix3:{status}:{lane}:{k}` (32 positions of a lane's status).

use crate::errors::ApiError;
use crate::model::ListName;

use crate::catalogue::reader::BATCH_WRITES;

use crate::catalogue::keys::{lane_piece_key, PIECE_LEN};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::{sort_by_key, Piece, Stored};
use crate::catalogue::record::PetRecord;

use super::geometry::Geometry;

/// Rounds of every lane a block of the unfiltered list holds, on a store
/// of `width` lanes.
pub fn block_rounds(width: usize) -> u64 {
    Geometry::assumed(Some(width)).block_rounds()
}

/// Entries of one lane a piece of `list` holds, on a store of `width`
/// lanes.
fn span(list: ListName, width: usize) -> u64 {
    match list {
        ListName::All => block_rounds(width),
        ListName::Status(_) => PIECE_LEN as u64,
    }
}

/// The key of the piece of `list` that holds entry `index` of `lane` on a
/// store of `width` lanes.
pub fn piece_of(list: ListName, width: usize, lane: usize, index: u64) -> String {
    lane_piece_key(list, lane, ((index - 1) / span(list, width)) as i64)
}

/// The first entry of a lane past the piece that holds entry `index`.
pub fn after_piece(list: ListName, width: usize, index: u64) -> u64 {
    let span = span(list, width);
    (index - 1) / span * span + span + 1
}

/// A pet a lane stored below its head (so it must be there): `pet:{id}`'s
/// committed record, or a status entry.
pub fn stored_pet(list: ListName, key: &str, value: Option<Vec<u8>>) -> Result<Listed, ApiError> {
    let json = match list.status() {
        None => match PetRecord::of(key, value)? {
            PetRecord::Committed { json, .. } => Some(json),
            _ => None,
        },
        Some(_) => value,
    };
    json.and_then(Listed::from_json)
        .ok_or_else(|| ApiError::Internal(format!("{key} is below its lane's head and not stored")))
}

/// The pieces a page from `from` (a number per lane of the store) reads
/// with the heads, before it knows where each lane ends: the unfiltered
/// list's blocks of the rounds a page of `limit` spans when the lanes are
/// even, and the block of each lane's next round; a status list's piece of
/// each lane's next position (and the one after, when the page may reach
/// it): at most 64 keys with 32 lanes, so that with the heads and `ctr:id`
/// they fit one `get-many`.
pub fn first_keys(list: ListName, from: &[u64], limit: usize) -> Vec<String> {
    let width = from.len().max(1);
    let mut keys = Vec::new();
    let mut add = |key: String| {
        if !keys.contains(&key) {
            keys.push(key);
        }
    };
    let rounds = limit as u64 / width as u64 + 2;
    if list == ListName::All {
        let first = from.iter().copied().min().unwrap_or(0) + 1;
        for round in (first..=first + rounds).step_by(block_rounds(width) as usize) {
            add(piece_of(list, width, 0, round));
        }
    }
    // A status may sit in half the lanes only (ids of one parity, say): a
    // page then takes twice as many positions from each of those.
    let positions = 2 * (limit as u64 / width as u64) + 2;
    for (lane, done) in from.iter().enumerate() {
        add(piece_of(list, width, lane, done + 1));
        if list != ListName::All {
            add(piece_of(list, width, lane, done + positions));
        }
    }
    keys
}

/// Pets a piece learned, by position.
type Entries = Vec<(i64, Listed)>;

/// The pieces a page has read, and what it learned that they lack.
#[derive(Default)]
pub struct Pieces {
    /// Each piece read, and whether it was missing or unreadable (rebuilt,
    /// and said so); in order of key (a `Vec`, as `added`).
    read: Vec<(String, (Piece, bool))>,
    /// What the page learned that pieces lack, in order of key (a `Vec`:
    /// one more `BTreeMap` costs the module some 3 KB).
    added: Vec<(String, Entries)>,
    pub notes: Vec<String>,
}

impl Pieces {
    pub fn has(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Where `key` is in `read`, or would go.
    fn find(&self, key: &str) -> Result<usize, usize> {
        self.read.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The piece read at `key`, and whether it was rebuilt.
    fn piece(&mut self, key: &str) -> Option<&mut (Piece, bool)> {
        let at = self.find(key).ok()?;
        Some(&mut self.read[at].1)
    }

    /// Takes what a read of `key` found; its entries, with their positions.
    pub fn absorb(&mut self, key: &str, stored: Stored) -> &[(i64, Listed)] {
        let read = match stored {
            Stored::Found(piece) => (piece, false),
            Stored::Missing => (Piece::default(), true),
            Stored::Unreadable(e) => {
                self.notes
                    .push(format!("index piece {key} unreadable ({e}): rebuilt"));
                (Piece::default(), true)
            }
        };
        let at = self.find(key).unwrap_or_else(|at| {
            self.read.insert(at, (key.to_string(), read));
            at
        });
        self.read[at].1 .0.entries()
    }

    /// A pet the piece at `key` (read) does not hold yet, learned from the
    /// lane: written back at the end of the page.
    pub fn learn(&mut self, key: &str, position: i64, pet: &Listed) {
        let Some((piece, _)) = self.piece(key) else {
            return;
        };
        if piece.get(position).is_none() {
            let at = match self.added.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
                Ok(at) => at,
                Err(at) => {
                    self.added.insert(at, (key.to_string(), Vec::new()));
                    at
                }
            };
            let added = &mut self.added[at].1;
            if !added.iter().any(|(p, _)| *p == position) {
                added.push((position, pet.clone()));
            }
        }
    }

    /// The pieces that learned pets, whole: what they held and what was
    /// learned, never less than was read. At most [`BATCH_WRITES`]: first
    /// those a page before skipped (they lack the entry just before the
    /// first this page learned of them, which that page listed: so every
    /// piece is written within two pages of a client that follows the
    /// list), then those that add the most entries (the reads a later page
    /// saves), then by key.
    pub fn repairs(&mut self) -> Vec<(String, Vec<u8>)> {
        // Skipped first, then by entries added: a rank of one number.
        let mut ranked: Vec<(i64, String, Entries)> = Vec::new();
        for (key, added) in std::mem::take(&mut self.added) {
            // Learned in order of position (in a status list's piece).
            let first = added.first().map_or(1, |(p, _)| *p);
            let skipped = (first - 1) % PIECE_LEN != 0
                && self
                    .piece(&key)
                    .is_some_and(|(p, _)| p.get(first - 1).is_none());
            ranked.push(((i64::from(!skipped) << 32) - added.len() as i64, key, added));
        }
        sort_by_key(&mut ranked, |(rank, _, _)| *rank);
        if ranked.len() > BATCH_WRITES {
            let left = ranked.len() - BATCH_WRITES;
            self.notes
                .push(format!("{left} index pieces left for a later page"));
        }
        let mut writes = Vec::new();
        for (_, key, added) in ranked.into_iter().take(BATCH_WRITES) {
            // Taken, not removed: see `Reader::fetched`.
            let Some((mut piece, rebuilt)) = self.piece(&key).map(|(p, r)| (std::mem::take(p), *r))
            else {
                continue;
            };
            let count = added.len();
            piece.add(added);
            if rebuilt {
                self.notes.push(format!(
                    "index piece {key} missing: rebuilt with {count} entries"
                ));
            }
            writes.push((key, piece.encode()));
        }
        writes
    }
}

/// The lane of a status list's piece key `ix3:{status}:{lane}:{k}`.
pub fn lane_of_piece(key: &str) -> usize {
    key.split(':')
        .nth(2)
        .and_then(|l| l.parse().ok())
        .unwrap_or(0)
}
