//! A page of a counters list: the walk along its positions, reading index
//! pieces, filling gaps from the truth (past 64 empty positions it stops), carrying the
//! positions whose create has not finished, and writing back a piece the
//! truth added to.

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::ListName;

use super::cursor::{Cursor, MAX_CARRIED};

use crate::catalogue::keys::{
    counter_key, decode_counter, pet_key, piece_key, piece_of, slot_key, EMPTY_POSITIONS, PIECE_LEN,
};
use crate::catalogue::listed::Listed;
use crate::catalogue::pending::Clock;
use crate::catalogue::piece::{sort_by_key, Piece, Stored};
use crate::catalogue::reader::{Reader, BATCH_WRITES};

/// What a position of a list holds.
#[derive(Debug, Clone)]
pub enum Truth {
    Pet(Listed),
    /// No pet, ever: a create given up, withdrawn or sealed, or a pending
    /// record too old to be committed.
    Dead,
    /// Issued, not committed: a create still at work, or one that stopped.
    /// `sealable`: nothing at all is stored there yet (no pending record),
    /// so a reader may give it up once it is old.
    Unresolved {
        sealable: bool,
    },
}

impl Truth {
    /// The key a position is looked up at first.
    pub fn key(list: ListName, position: i64) -> String {
        match list {
            ListName::All => pet_key(position),
            ListName::Status(status) => slot_key(status, position),
        }
    }
}

/// Where a counters list ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// At its counter (`ctr:id`, `ctr:{status}`), read when needed.
    Counter,
    /// At a fixed position: a store moved to lanes, whose ids before the
    /// move end at the last its counter handed out.
    Fixed(i64),
}

/// A page of a walk: its pets, and where the walk goes on (the next
/// position, and the positions before it carried until their create
/// resolves).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    pub pets: Vec<Listed>,
    /// The next position to visit.
    pub position: i64,
    pub carried: Vec<i64>,
    /// When the oldest carried position was first seen (Unix seconds).
    pub since_s: u64,
    /// The walk passed the list's last position.
    pub ended: bool,
    pub notes: Vec<String>,
}

impl Part {
    /// A page's start: where `cursor` says.
    pub fn from(cursor: &Cursor) -> Part {
        Part {
            position: cursor.position,
            carried: cursor.carried.clone(),
            since_s: cursor.since_s,
            ..Part::default()
        }
    }

    /// Where the walk goes on after this page.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            position: self.position,
            carried: self.carried.clone(),
            since_s: self.since_s,
        }
    }
}

/// The keys a page from `position` reads first where reads are batched:
/// the pieces it spans if it meets no hole, the list's counter, and the
/// truth of the positions it carries.
pub fn first_keys(list: ListName, from: &Part, limit: usize) -> Vec<String> {
    let first = piece_of(from.position);
    let last = piece_of(from.position + limit.max(1) as i64 - 1);
    let mut keys: Vec<String> = (first..=last).map(|k| piece_key(list, k)).collect();
    keys.push(counter_key(list));
    keys.extend(from.carried.iter().map(|p| Truth::key(list, *p)));
    keys
}

/// Up to `limit` pets of `list` after `from`: the walk on from
/// `from.position`, then, at the list's end, the carried positions that
/// committed since; each page sorted by id. In steps: plan the pieces the
/// page may span; read each (one `get`, or fetched ahead with the first
/// `get-many`); take its pets, filling gaps from the truth (`pet`, `slot`)
/// (past 64 positions without a pet it stops), carrying the positions whose create has not
/// finished; write back the pieces the truth added to; at the end, look
/// again at what earlier pages carried.
pub fn page<S: crate::store::KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    list: ListName,
    from: Part,
    limit: usize,
    end: End,
) -> Result<Part, ApiError> {
    let carried_before = from.carried.len();
    let mut walk = Walk {
        reader,
        clock,
        list,
        end,
        limit,
        empty_left: EMPTY_POSITIONS,
        part: Part {
            pets: Vec::with_capacity(limit),
            ..from
        },
        last: None,
        stopped: false,
        sealable: Vec::new(),
        ahead: BTreeMap::new(),
        repairs: Vec::new(),
    };
    walk.fetch_ahead()?;
    let first = piece_of(walk.part.position);
    for piece in first..first + limit as i64 / PIECE_LEN + 2 {
        let stored = walk.read(piece)?;
        let missing = matches!(stored, Stored::Missing);
        let (held, added) = walk.take(piece, stored)?;
        walk.repair(piece, held, added, missing);
        if walk.done() {
            break;
        }
    }
    walk.write_repairs();
    // At the list's end, the positions carried from earlier pages: listed
    // if they committed since, given up if long empty.
    if walk.part.ended {
        walk.recheck(carried_before)?;
        walk.seal_old()?;
    }
    sort_by_key(&mut walk.part.pets, |p| p.id);
    Ok(walk.part)
}

/// One page's walk along a counters list.
pub(super) struct Walk<'w, 'r, 's, S: crate::store::KvStore> {
    pub(super) reader: &'w mut Reader<'s, S>,
    pub(super) clock: &'r Clock<'r>,
    pub(super) list: ListName,
    end: End,
    limit: usize,
    /// Positions without a pet this page may still pass.
    pub(super) empty_left: usize,
    pub(super) part: Part,
    /// The list's last position, once read.
    last: Option<i64>,
    /// The page ended before the list: limit, empty positions, or carry full.
    stopped: bool,
    /// Carried positions where nothing at all is stored yet.
    pub(super) sealable: Vec<i64>,
    /// Pieces fetched ahead (batched reads), decoded, by number; each
    /// taken once, leaving `None` (no map in `src/` removes a key: see
    /// `Reader::fetched`).
    ahead: BTreeMap<i64, Option<Stored>>,
    /// Pieces to write back: key, text, whether it was missing, entries added.
    repairs: Vec<(String, Vec<u8>, bool, usize)>,
}

impl<S: crate::store::KvStore> Walk<'_, '_, '_, S> {
    fn done(&self) -> bool {
        self.part.ended || self.stopped || self.full()
    }

    fn full(&self) -> bool {
        self.part.pets.len() >= self.limit || self.empty_left == 0
    }

    /// Pets the page still has room for.
    pub(super) fn limit_left(&self) -> usize {
        self.limit.saturating_sub(self.part.pets.len())
    }

    /// Batched reads: the pieces the page spans that the first `get-many`
    /// fetched, decoded.
    fn fetch_ahead(&mut self) -> Result<(), ApiError> {
        if !self.reader.batched() {
            return Ok(());
        }
        let first = piece_of(self.part.position);
        for piece in first..first + self.limit as i64 / PIECE_LEN + 2 {
            if self.reader.holds(&piece_key(self.list, piece)) {
                let stored = self.read_stored(piece)?;
                self.ahead.insert(piece, Some(stored));
            }
        }
        Ok(())
    }

    /// Whether a piece fetched ahead holds `position`.
    pub(super) fn ahead_holds(&self, position: i64) -> bool {
        matches!(self.ahead.get(&piece_of(position)), Some(Some(Stored::Found(p))) if p.get(position).is_some())
    }

    fn read(&mut self, piece: i64) -> Result<Stored, ApiError> {
        match self.ahead.get_mut(&piece).and_then(Option::take) {
            Some(stored) => Ok(stored),
            None => self.read_stored(piece),
        }
    }

    fn read_stored(&mut self, piece: i64) -> Result<Stored, ApiError> {
        let key = piece_key(self.list, piece);
        Ok(Piece::stored(self.reader.get(&key)?))
    }

    /// The piece's positions from the walk's on: its pets, and for a
    /// position it lacks (up to the end), the truth. Returns what the piece
    /// held and what the truth added.
    fn take(
        &mut self,
        piece: i64,
        stored: Stored,
    ) -> Result<(Piece, Vec<(i64, Listed)>), ApiError> {
        let held = match stored {
            Stored::Found(p) => p,
            Stored::Missing => Piece::default(),
            Stored::Unreadable(e) => {
                let key = piece_key(self.list, piece);
                self.part
                    .notes
                    .push(format!("index piece {key} unreadable ({e}): rebuilt"));
                Piece::default()
            }
        };
        let mut added = Vec::new();
        let end = (piece + 1) * PIECE_LEN;
        // The common case: the piece holds every position the page wants
        // from it. Its pets go into the page; nothing to repair.
        let wanted = self.limit.saturating_sub(self.part.pets.len()) as i64;
        let last_wanted = end.min(self.part.position + wanted - 1);
        let run = held.range(self.part.position, last_wanted);
        if wanted > 0 && run.len() as i64 == last_wanted - self.part.position + 1 {
            self.part
                .pets
                .extend(run.iter().map(|(_, pet)| pet.clone()));
            self.part.position = last_wanted + 1;
            self.stopped = self.full();
            return Ok((Piece::default(), added));
        }
        while self.part.position <= end {
            if self.full() {
                self.stopped = true;
                break;
            }
            let position = self.part.position;
            if let Some(pet) = held.get(position) {
                self.part.pets.push(pet.clone());
            } else {
                if position > self.last()? {
                    self.part.ended = true;
                    break;
                }
                self.fetch_truth(position, &held)?;
                match self.truth_at(position)? {
                    Truth::Pet(pet) => {
                        added.push((position, pet.clone()));
                        self.part.pets.push(pet);
                    }
                    Truth::Dead => self.empty_left -= 1,
                    Truth::Unresolved { sealable } if self.part.carried.len() < MAX_CARRIED => {
                        self.empty_left -= 1;
                        self.carry(position, sealable);
                    }
                    Truth::Unresolved { .. } => {
                        self.stopped = true;
                        break;
                    }
                }
            }
            self.part.position += 1;
        }
        Ok((held, added))
    }

    /// What the truth added goes back into the piece, written with the
    /// others at the end of the page (best effort: a failed write only
    /// leaves the work to the next reader).
    fn repair(&mut self, piece: i64, mut held: Piece, added: Vec<(i64, Listed)>, missing: bool) {
        if added.is_empty() {
            return;
        }
        let count = added.len();
        held.add(added);
        let key = piece_key(self.list, piece);
        self.repairs.push((key, held.encode(), missing, count));
    }

    /// The pieces repaired, in one `set`, or one `set-many` for several. A
    /// piece that only lagged (pets created since it was written) is
    /// updated silently: that is how the index grows. A missing one is
    /// logged (an unreadable one was, when read), and so is a failed write.
    fn write_repairs(&mut self) {
        let repairs = std::mem::take(&mut self.repairs);
        let written = match repairs.as_slice() {
            [] => return,
            [(key, text, _, _)] => self.reader.store().set(key, text),
            many => many.chunks(BATCH_WRITES).try_for_each(|chunk| {
                let pairs: Vec<(String, Vec<u8>)> = chunk
                    .iter()
                    .map(|(key, text, _, _)| (key.clone(), text.clone()))
                    .collect();
                self.reader.store().set_many(&pairs)
            }),
        };
        for (key, _, missing, count) in repairs {
            match &written {
                Ok(()) if missing => self.part.notes.push(format!(
                    "index piece {key} missing: rebuilt with {count} entries"
                )),
                Ok(()) => {}
                Err(e) => self
                    .part
                    .notes
                    .push(format!("index piece {key}: repair not written ({e})")),
            }
        }
    }

    /// The list's last position: fixed, or its counter (fetched with the
    /// pieces where reads are batched, else one plain `get`).
    pub(super) fn last(&mut self) -> Result<i64, ApiError> {
        if let Some(last) = self.last {
            return Ok(last);
        }
        let last = match self.end {
            End::Fixed(last) => last,
            End::Counter => {
                let key = counter_key(self.list);
                match self.reader.get(&key)? {
                    None => 0,
                    Some(bytes) => decode_counter(&bytes).ok_or_else(|| {
                        ApiError::Internal(format!("stored counter '{key}' is unreadable"))
                    })?,
                }
            }
        };
        self.last = Some(last);
        Ok(last)
    }
}
