//! A page of a list: the walk along its positions, reading index pieces,
//! filling gaps from the truth within a budget, and writing back a piece the
//! truth added to.

use std::ops::Range;
use std::rc::Rc;

use crate::errors::ApiError;
use crate::model::{Cursor, ListName, Pet, PetStatus};
use crate::store::KvStore;

use super::keys::{
    counter_key, decode_counter, piece_key, piece_of, slot_key, FALLBACK_BUDGET, PIECE_LEN,
};
use super::piece::{Piece, Stored};
use super::{encode_pet, Catalogue};

/// One page of a list, where the walk goes on if more may follow, and what
/// the page did to the index (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    pub notes: Vec<String>,
}

/// A pet as a list holds it: its id, and its JSON exactly as the response
/// carries it, so a page is served without decoding and re-encoding pets.
/// The JSON is a span of a shared text (the index piece it was read from):
/// cloning a `Listed` copies no text.
#[derive(Debug, Clone)]
pub struct Listed {
    pub id: i64,
    text: Rc<String>,
    span: Range<usize>,
}

impl Listed {
    /// The pet at `span` of `text`.
    pub(super) fn shared(id: i64, text: &Rc<String>, span: Range<usize>) -> Listed {
        Listed {
            id,
            text: Rc::clone(text),
            span,
        }
    }

    fn of(pet: &Pet) -> Result<Listed, ApiError> {
        let json = String::from_utf8(encode_pet(pet)?)
            .map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))?;
        let span = 0..json.len();
        Ok(Listed {
            id: pet.id,
            text: Rc::new(json),
            span,
        })
    }

    /// The pet's JSON text, as in responses.
    pub fn json(&self) -> &str {
        &self.text[self.span.clone()]
    }
}

impl PartialEq for Listed {
    fn eq(&self, other: &Listed) -> bool {
        self.id == other.id && self.json() == other.json()
    }
}

impl Eq for Listed {}

impl<S: KvStore> Catalogue<'_, S> {
    /// Up to `limit` pets of `list` from position `from` on, in list order
    /// (ascending id for `all`; for a status, the order pets entered its
    /// list), each page sorted by id. In steps:
    ///
    /// 1. plan: the pieces the page may span;
    /// 2. read each piece (one `get`);
    /// 3. take its pets, filling gaps from the truth (`pet`, `slot`) within
    ///    the budget, stopping at the end of the list;
    /// 4. repair: write back a piece the truth added to (plain `set`);
    /// 5. decide the cursor.
    pub fn list(&self, list: ListName, from: i64, limit: usize) -> Result<Page, ApiError> {
        let mut walk = Walk {
            store: self.store,
            list,
            position: from,
            limit,
            pets: Vec::with_capacity(limit),
            budget: FALLBACK_BUDGET,
            last: None,
            ended: false,
            more_held: false,
            notes: Vec::new(),
        };
        for piece in walk.plan() {
            let stored = walk.read(piece)?;
            let missing = matches!(stored, Stored::Missing);
            let (held, added) = walk.take(piece, stored)?;
            walk.repair(piece, held, added, missing);
            if walk.stopped() {
                break;
            }
        }
        walk.finish()
    }
}

/// One page's walk along a list.
struct Walk<'s, S: KvStore> {
    store: &'s S,
    list: ListName,
    /// The next position to visit.
    position: i64,
    limit: usize,
    pets: Vec<Listed>,
    /// Key-value calls left for this page's look-ups of the truth.
    budget: usize,
    /// The list's last position handed out, read once if a gap needs it.
    last: Option<i64>,
    /// The walk passed the last position: nothing more to list.
    ended: bool,
    /// The last piece read holds positions past the walk's: more follow.
    more_held: bool,
    notes: Vec<String>,
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

    /// Step 2.
    fn read(&mut self, piece: i64) -> Result<Stored, ApiError> {
        let key = piece_key(self.list, piece);
        Ok(match self.store.get(&key)? {
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

    /// Step 4: what the truth added goes back into the piece (best effort: a
    /// failed write only leaves the work to the next reader).
    ///
    /// A piece that only lagged (pets created since it was written) is
    /// updated silently: that is how the index grows. A missing one is logged
    /// (an unreadable one was, when read), and so is a write that failed.
    fn repair(&mut self, piece: i64, mut held: Piece, added: Vec<(i64, Listed)>, missing: bool) {
        if added.is_empty() {
            return;
        }
        let key = piece_key(self.list, piece);
        let count = added.len();
        held.add(added);
        match self.store.set(&key, &held.encode()) {
            Ok(()) if missing => self.notes.push(format!(
                "index piece {key} missing: rebuilt with {count} entries"
            )),
            Ok(()) => {}
            Err(e) => self
                .notes
                .push(format!("index piece {key}: repair not written ({e})")),
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

    /// The list's highest position handed out, with one plain `get`.
    fn last(&mut self) -> Result<i64, ApiError> {
        if let Some(last) = self.last {
            return Ok(last);
        }
        let key = counter_key(self.list);
        let last = match self.store.get(&key)? {
            None => 0,
            Some(bytes) => decode_counter(&bytes).ok_or_else(|| {
                ApiError::Internal(format!("stored counter '{key}' is unreadable"))
            })?,
        };
        self.last = Some(last);
        Ok(last)
    }

    /// The committed pet at a position, from the truth: `pet:{position}` for
    /// `all`; `slot` then `pet` for a status. `None`: a hole (a create that
    /// failed, or one not committed yet). Each call spends the budget.
    fn committed_at(&mut self, position: i64) -> Result<Option<Listed>, ApiError> {
        let pet = match self.list {
            ListName::All => self.pet(position)?,
            ListName::Status(status) => self.slotted(status, position)?,
        };
        pet.as_ref().map(Listed::of).transpose()
    }

    fn pet(&mut self, id: i64) -> Result<Option<Pet>, ApiError> {
        self.budget = self.budget.saturating_sub(1);
        Catalogue::new(self.store).get(id)
    }

    /// The pet that `slot:{status}:{position}` names, if it is committed.
    fn slotted(&mut self, status: PetStatus, position: i64) -> Result<Option<Pet>, ApiError> {
        let key = slot_key(status, position);
        self.budget = self.budget.saturating_sub(1);
        let Some(bytes) = self.store.get(&key)? else {
            return Ok(None);
        };
        let id = std::str::from_utf8(&bytes)
            .ok()
            .and_then(crate::model::parse_digits)
            .ok_or_else(|| ApiError::Internal(format!("stored value '{key}' is unreadable")))?;
        Ok(self.pet(id)?.filter(|p| p.status == status))
    }
}
