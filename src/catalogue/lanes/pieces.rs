//! The lanes' index pieces, a cache readers build: those a page reads
//! first, and those it writes back.

use super::geometry::Geometry;
use crate::catalogue::keys::{block_key, PIECE_LEN};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::{rebuilt_note, sort_by_key, Piece};
use crate::catalogue::reader::BATCH_WRITES;
use crate::model::ListName;

/// The pieces a page reads with the heads: of the ids it spans if the
/// lanes are even; each lane's next (of a status, and the one after it).
pub fn first_keys(g: &Geometry, list: ListName, from: &[u64], limit: usize) -> Vec<String> {
    let width = from.len().max(1) as u64;
    let mut keys = Vec::new();
    let mut add = |key: String| {
        if !keys.contains(&key) {
            keys.push(key);
        }
    };
    if list == ListName::All {
        let first = from.iter().copied().min().unwrap_or(0) + 1;
        let last = g.id(g.width() - 1, first + limit as u64 / width + 2);
        (g.block(g.id(0, first))..=g.block(last)).for_each(|k| add(block_key(list, k)));
    }
    let positions = 2 * (limit as u64 / width) + 2;
    for (lane, done) in from.iter().enumerate() {
        add(g.piece(list, lane, done + 1));
        if list != ListName::All {
            add(g.piece(list, lane, done + positions));
        }
    }
    keys
}

type Entries = Vec<(i64, Listed)>;

/// The pieces a page read (and whether rebuilt), and what they lack; in
/// `Vec`s sorted by key (a `BTreeMap` more costs some 3 KB of module).
#[derive(Default)]
pub struct Pieces {
    read: Vec<(String, (Piece, bool))>,
    added: Vec<(String, Entries)>,
    pub notes: Vec<String>,
}

impl Pieces {
    pub fn has(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.read.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The piece at `key`, as a batch found it (`value`): read once, kept.
    pub fn absorb(&mut self, key: &str, value: Option<&[u8]>) -> &[(i64, Listed)] {
        let read = match Piece::read(value) {
            Ok(Some(piece)) => (piece, false),
            Ok(None) => (Piece::default(), true),
            Err(e) => {
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

    pub fn learn(&mut self, key: &str, position: i64, pet: &Listed) {
        let Ok(at) = self.find(key) else {
            return;
        };
        if self.read[at].1 .0.get(position).is_some() {
            return;
        }
        let at = match self.added.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
            Ok(at) => at,
            Err(at) => {
                self.added.insert(at, (key.to_string(), Vec::new()));
                at
            }
        };
        if !self.added[at].1.iter().any(|(p, _)| *p == position) {
            self.added[at].1.push((position, pet.clone()));
        }
    }

    /// The pieces that learned pets, at most [`BATCH_WRITES`]: first those a
    /// page before skipped (so a follower's are written within two pages),
    /// then those that add the most entries.
    pub fn repairs(&mut self) -> Vec<(String, Vec<u8>)> {
        let mut ranked: Vec<(i64, String, Entries)> = Vec::new();
        for (key, added) in std::mem::take(&mut self.added) {
            let first = added.first().map_or(1, |(p, _)| *p);
            let skipped = (first - 1) % PIECE_LEN != 0
                && self
                    .find(&key)
                    .is_ok_and(|at| self.read[at].1 .0.get(first - 1).is_none());
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
            let Ok(at) = self.find(&key) else {
                continue;
            };
            let (mut piece, rebuilt) =
                (std::mem::take(&mut self.read[at].1 .0), self.read[at].1 .1);
            if rebuilt {
                self.notes.push(rebuilt_note(&key, added.len()));
            }
            piece.add(added);
            writes.push((key, piece.encode()));
        }
        writes
    }
}
