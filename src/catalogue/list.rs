//! A page of a list: the walk along its positions, reading index pieces,
//! filling gaps from the truth within a budget, and writing back a piece the
//! truth added to.

use std::collections::HashMap;

use crate::errors::ApiError;
use crate::model::{Cursor, ListName};
use crate::store::KvStore;

use super::ahead::Reader;
use super::backend::Reads;
use super::keys::{
    counter_key, decode_counter, piece_key, piece_of, BATCHED_BUDGET, FALLBACK_BUDGET, PIECE_LEN,
};
use super::listed::Listed;
use super::piece::{Piece, Stored};
use super::record::Catalogue;

/// One page of a list, where the walk goes on if more may follow, and what
/// the page did to the index (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    pub notes: Vec<String>,
}

impl<S: KvStore> Catalogue<'_, S> {
    /// Up to `limit` pets of `list` from position `from` on, in list order
    /// (ascending id for `all`; for a status, the order pets entered its
    /// list), each page sorted by id. In steps:
    ///
    /// 1. plan: the pieces the page may span;
    /// 2. read each piece (one `get`; [`Reads::Batched`]: the pieces the page
    ///    spans and the list's counter in one `get-many`);
    /// 3. take its pets, filling gaps from the truth (`pet`, `slot`) within
    ///    the budget, stopping at the end of the list (batched: the truth of
    ///    all the gaps the page needs in one `get-many`, two on a status
    ///    list: slots, then pets);
    /// 4. repair: write back the pieces the truth added to (one `set`, or
    ///    one `set-many` for several);
    /// 5. decide the cursor.
    pub fn list(
        &self,
        list: ListName,
        from: i64,
        limit: usize,
        reads: Reads,
    ) -> Result<Page, ApiError> {
        let mut walk = Walk {
            reader: Reader::new(self.store, reads),
            list,
            position: from,
            limit,
            pets: Vec::with_capacity(limit),
            budget: match reads {
                Reads::OneByOne => FALLBACK_BUDGET,
                Reads::Batched => BATCHED_BUDGET,
            },
            last: None,
            ended: false,
            more_held: false,
            plan_end: 0,
            ahead: HashMap::new(),
            repairs: Vec::new(),
            notes: Vec::new(),
        };
        let plan = walk.plan();
        walk.plan_end = plan.end * PIECE_LEN;
        walk.fetch_pieces()?;
        for piece in plan {
            let stored = walk.read(piece)?;
            let missing = matches!(stored, Stored::Missing);
            let (held, added) = walk.take(piece, stored)?;
            walk.repair(piece, held, added, missing);
            if walk.stopped() {
                break;
            }
        }
        walk.write_repairs();
        walk.finish()
    }
}

/// One page's walk along a list.
pub(super) struct Walk<'s, S: KvStore> {
    pub(super) reader: Reader<'s, S>,
    pub(super) list: ListName,
    /// The next position to visit.
    pub(super) position: i64,
    pub(super) limit: usize,
    pub(super) pets: Vec<Listed>,
    /// Key-value calls left for this page's look-ups of the truth.
    pub(super) budget: usize,
    /// The list's last position handed out, read once if a gap needs it.
    pub(super) last: Option<i64>,
    /// The walk passed the last position: nothing more to list.
    pub(super) ended: bool,
    /// The last piece read holds positions past the walk's: more follow.
    pub(super) more_held: bool,
    /// The last position of the pieces planned.
    pub(super) plan_end: i64,
    /// Pieces fetched ahead (batched reads), decoded, by number.
    pub(super) ahead: HashMap<i64, Stored>,
    /// Pieces to write back: key, text, whether it was missing, entries added.
    pub(super) repairs: Vec<(String, Vec<u8>, bool, usize)>,
    pub(super) notes: Vec<String>,
}

impl<S: KvStore> Walk<'_, S> {
    /// Step 1: a page spans at most this many pieces; holes (creates that
    /// failed before their commit) may end it early, with a `next` cursor.
    fn plan(&self) -> std::ops::Range<i64> {
        let first = piece_of(self.position);
        first..first + self.limit as i64 / PIECE_LEN + 2
    }

    fn stopped(&self) -> bool {
        self.ended || self.pets.len() >= self.limit || self.budget == 0
    }

    /// Batched reads: the pieces the page spans if it meets no hole, and
    /// the list's counter, in one `get-many` (pieces further on, which only
    /// holes make a page reach, are read when reached).
    fn fetch_pieces(&mut self) -> Result<(), ApiError> {
        if !self.reader.batched() {
            return Ok(());
        }
        let first = piece_of(self.position);
        let last = piece_of(self.position + self.limit.max(1) as i64 - 1);
        let mut keys: Vec<String> = (first..=last).map(|k| piece_key(self.list, k)).collect();
        keys.push(counter_key(self.list));
        self.reader.fetch(keys)?;
        for piece in first..=last {
            let stored = self.read_stored(piece)?;
            self.ahead.insert(piece, stored);
        }
        Ok(())
    }

    /// Step 2.
    fn read(&mut self, piece: i64) -> Result<Stored, ApiError> {
        match self.ahead.remove(&piece) {
            Some(stored) => Ok(stored),
            None => self.read_stored(piece),
        }
    }

    fn read_stored(&mut self, piece: i64) -> Result<Stored, ApiError> {
        let key = piece_key(self.list, piece);
        Ok(match self.reader.get(&key)? {
            None => Stored::Missing,
            Some(bytes) => match Piece::decode(bytes) {
                Ok(p) => Stored::Found(p),
                Err(e) => Stored::Unreadable(e),
            },
        })
    }

    /// Step 3: the piece's positions from the walk's on. Returns what the
    /// piece held and what the truth added.
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
                self.notes
                    .push(format!("index piece {key} unreadable ({e}): rebuilt"));
                Piece::default()
            }
        };
        let mut added = Vec::new();
        let end = (piece + 1) * PIECE_LEN;
        // The common case: the piece holds every position the page wants
        // from it. Its pets go into the page; nothing to repair.
        let wanted = (self.limit - self.pets.len()) as i64;
        let last_wanted = end.min(self.position + wanted - 1);
        let run = held.range(self.position, last_wanted);
        if wanted > 0 && run.len() as i64 == last_wanted - self.position + 1 {
            self.pets.extend(run.iter().map(|(_, pet)| pet.clone()));
            self.position = last_wanted + 1;
            self.more_held = held.holds_after(last_wanted);
            return Ok((Piece::default(), added));
        }
        while self.position <= end && !self.stopped() {
            let position = self.position;
            if let Some(pet) = held.get(position) {
                self.pets.push(pet.clone());
            } else if position > self.last()? {
                self.ended = true;
                break;
            } else {
                self.fetch_truth(position, &held)?;
                if let Some(pet) = self.committed_at(position)? {
                    added.push((position, pet.clone()));
                    self.pets.push(pet);
                }
            }
            self.position += 1;
        }
        self.more_held = held.holds_after(self.position - 1);
        Ok((held, added))
    }

    /// Step 4: what the truth added goes back into the piece, written with
    /// the others at the end of the page (best effort: a failed write only
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
            many => {
                let pairs: Vec<(String, Vec<u8>)> = many
                    .iter()
                    .map(|(key, text, _, _)| (key.clone(), text.clone()))
                    .collect();
                self.reader.store().set_many(&pairs)
            }
        };
        for (key, _, missing, count) in repairs {
            match &written {
                Ok(()) if missing => self.notes.push(format!(
                    "index piece {key} missing: rebuilt with {count} entries"
                )),
                Ok(()) => {}
                Err(e) => self
                    .notes
                    .push(format!("index piece {key}: repair not written ({e})")),
            }
        }
    }

    /// Step 5: more follow if the piece holds them, or if the list's counter
    /// says positions remain (read only when the piece cannot tell).
    fn finish(mut self) -> Result<Page, ApiError> {
        let more = !self.ended && (self.more_held || self.position <= self.last()?);
        self.pets.sort_by_key(|p| p.id);
        Ok(Page {
            pets: self.pets,
            next: more.then_some(Cursor {
                position: self.position,
            }),
            notes: self.notes,
        })
    }

    /// The list's highest position handed out, with one plain `get` (batched
    /// reads fetched it with the pieces).
    pub(super) fn last(&mut self) -> Result<i64, ApiError> {
        if let Some(last) = self.last {
            return Ok(last);
        }
        let key = counter_key(self.list);
        let last = match self.reader.get(&key)? {
            None => 0,
            Some(bytes) => decode_counter(&bytes).ok_or_else(|| {
                ApiError::Internal(format!("stored counter '{key}' is unreadable"))
            })?,
        };
        self.last = Some(last);
        Ok(last)
    }
}
