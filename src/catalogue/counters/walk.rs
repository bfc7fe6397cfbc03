//! A page of a counters list: the walk along positions and pieces, gaps filled
//! from the truth, positions not committed carried, pieces the truth added to written back.

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::ListName;

use super::carry::Part;
use super::cursor::MAX_CARRIED;
use super::repairs::Repairs;
use super::truth::Truth;

use crate::catalogue::keys::{
    counter_key, decode_counter, piece_key, piece_of, EMPTY_POSITIONS, PIECE_LEN,
};
use crate::catalogue::listed::Listed;
use crate::catalogue::pending::Clock;
use crate::catalogue::piece::{sort_by_key, Piece, Stored};
use crate::catalogue::reader::{Reader, BATCH_KEYS};

/// Where a counters list ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// At its counter (`ctr:id`, `ctr:{status}`), read when needed.
    Counter,
    /// At a fixed position: a store moved to lanes, whose ids before the
    /// move end at the last its counter handed out.
    Fixed(i64),
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

/// Up to `limit` pets of `list` after `from`, sorted by id: the pieces the
/// page spans, gaps filled from the truth (past [`EMPTY_POSITIONS`] empty
/// ones it stops), the pieces the truth added to written back; at the list's
/// end, the positions earlier pages carried, looked at again.
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
        part: from,
        last: None,
        stopped: false,
        ahead: BTreeMap::new(),
        repairs: Repairs::default(),
    };
    walk.part.pets.reserve(limit);
    walk.fetch_ahead()?;
    let first = piece_of(walk.part.position);
    for piece in first..first + limit as i64 / PIECE_LEN + 2 {
        let stored = walk.read(piece)?;
        let missing = matches!(stored, Stored::Missing);
        let (held, added) = walk.take(piece, stored)?;
        walk.repairs
            .add(piece_key(list, piece), held, added, missing);
        if walk.done() {
            break;
        }
    }
    walk.repairs
        .write(walk.reader.store(), &mut walk.part.notes);
    // At the list's end, the positions carried from earlier pages: listed
    // if they committed since, given up if long empty.
    if walk.part.ended {
        walk.part.recheck(
            walk.reader,
            walk.clock,
            walk.list,
            carried_before,
            walk.limit,
        )?;
        walk.part
            .seal_old(walk.reader.store(), walk.clock, walk.list)?;
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
    /// Pieces fetched ahead (batched reads), decoded, by number; each
    /// taken once, leaving `None` (no map in `src/` removes a key: see
    /// `Reader::fetched`).
    ahead: BTreeMap<i64, Option<Stored>>,
    /// Pieces to write back at the end of the page.
    repairs: Repairs,
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

    /// Batched reads, at a gap whose truth was not fetched yet: the truth of
    /// the gaps from `position` on the page may need, in one `get-many` (a
    /// status list: slots, then pets), up to twice as many as it still needs,
    /// so that holes among them cost no second batch.
    pub(super) fn fetch_truth(&mut self, position: i64, current: &Piece) -> Result<(), ApiError> {
        let key = Truth::key(self.list, position);
        if !self.reader.batched() || self.reader.holds(&key) {
            return Ok(());
        }
        let end = self.last()?;
        let need = self.limit_left().max(1);
        let (mut held, mut keys) = (0, Vec::new());
        let mut p = position;
        while p <= end && held < need && held + keys.len() < 2 * need && keys.len() < BATCH_KEYS {
            let in_piece = if piece_of(p) == piece_of(position) {
                current.get(p).is_some()
            } else {
                self.ahead_holds(p)
            };
            if in_piece {
                held += 1;
            } else {
                keys.push(Truth::key(self.list, p));
            }
            p += 1;
        }
        Truth::fetch(self.reader, self.list, keys)
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
                match Truth::at(self.reader, self.clock, self.list, position)? {
                    Truth::Pet(pet) => {
                        added.push((position, pet.clone()));
                        self.part.pets.push(pet);
                    }
                    Truth::Dead => self.empty_left -= 1,
                    Truth::Unresolved { sealable } if self.part.carried.len() < MAX_CARRIED => {
                        self.empty_left -= 1;
                        self.part.carry(position, sealable, self.clock);
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
