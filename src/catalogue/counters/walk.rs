//! A page of a counters list: the walk along its positions and pieces, a
//! gap filled from the truth (`pet:{id}`; a status's slot, then its pet),
//! the pieces the truth added to written back.

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use super::carry::{Part, Truth};

use crate::catalogue::created::Clock;
use crate::catalogue::cursor::MAX_CARRIED;
use crate::catalogue::keys::{
    counter_key, decode_counter, piece_key, piece_of, EMPTY_POSITIONS, PIECE_LEN,
};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::{sort_by_key, write_back, Piece};
use crate::catalogue::reader::{Reader, BATCH_KEYS};
use crate::catalogue::record::unreadable;

/// Where a list ends: at its counter (read when needed), or, on a store
/// moved to lanes, at the last id the counter handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Counter,
    Fixed(i64),
}

/// The keys a page from `from` reads first where reads are batched: the
/// pieces it spans if it meets no hole, the list's counter, the truth of
/// the positions it carries.
pub fn first_keys(list: ListName, from: &Part, limit: usize) -> Vec<String> {
    let last = piece_of(from.position + limit.max(1) as i64 - 1);
    let mut keys: Vec<String> = (piece_of(from.position)..=last)
        .map(|k| piece_key(list, k))
        .collect();
    keys.push(counter_key(list));
    keys.extend(from.carried.iter().map(|p| Truth::key(list, *p)));
    keys
}

/// One page's walk along a counters list.
pub struct Walk<'w, 's, S: KvStore> {
    pub reader: &'w mut Reader<'s, S>,
    pub clock: &'w Clock<'w>,
    pub list: ListName,
    pub end: End,
    /// Reads `ctr:id` when it is not a counter: the store's refusal.
    pub refuse: &'w dyn Fn(&[u8]) -> ApiError,
    pub limit: usize,
    /// Positions without a pet the page may still pass.
    empty_left: usize,
    pub part: Part,
    last: Option<i64>,
    /// The page ended before the list: full, empty positions, carry full.
    stopped: bool,
    /// Pieces fetched ahead, decoded, each taken once.
    ahead: BTreeMap<i64, Option<Result<Option<Piece>, String>>>,
}

impl<'w, 's, S: KvStore> Walk<'w, 's, S> {
    pub fn new(
        reader: &'w mut Reader<'s, S>,
        clock: &'w Clock<'w>,
        list: ListName,
        end: End,
        refuse: &'w dyn Fn(&[u8]) -> ApiError,
        limit: usize,
        part: Part,
    ) -> Self {
        let (empty_left, last, stopped, ahead) = (EMPTY_POSITIONS, None, false, BTreeMap::new());
        Walk {
            reader,
            clock,
            list,
            end,
            refuse,
            limit,
            empty_left,
            part,
            last,
            stopped,
            ahead,
        }
    }

    /// Up to `limit` pets from the part's position, sorted by id: the
    /// pieces the page spans, a gap filled from the truth, the pieces the
    /// truth added to written back; at the list's end, the positions
    /// earlier pages carried, looked at again.
    pub fn page(mut self) -> Result<Part, ApiError> {
        let carried_before = self.part.carried.len();
        self.part.pets.reserve(self.limit);
        let first = piece_of(self.part.position);
        let pieces = first..first + self.limit as i64 / PIECE_LEN + 2;
        if self.reader.batched() {
            for piece in pieces.clone() {
                let key = piece_key(self.list, piece);
                if self.reader.holds(&key) {
                    let stored = Piece::read(self.reader.peek(&key));
                    self.ahead.insert(piece, Some(stored));
                }
            }
        }
        let mut writes = Vec::new();
        let mut rebuilt = Vec::new();
        for piece in pieces {
            let key = piece_key(self.list, piece);
            let stored = match self.ahead.get_mut(&piece).and_then(Option::take) {
                Some(stored) => stored,
                None => Piece::read(self.reader.get(&key)?.as_deref()),
            };
            let (mut held, missing) = match stored {
                Ok(Some(piece)) => (piece, false),
                Ok(None) => (Piece::default(), true),
                Err(e) => {
                    self.part
                        .notes
                        .push(format!("index piece {key} unreadable ({e}): rebuilt"));
                    (Piece::default(), false)
                }
            };
            let added = self.take(piece, &held)?;
            if !added.is_empty() {
                if missing {
                    rebuilt.push(format!(
                        "index piece {key} missing: rebuilt with {} entries",
                        added.len()
                    ));
                }
                held.add(added);
                writes.push((key, held.encode()));
            }
            if self.part.ended || self.stopped || self.full() {
                break;
            }
        }
        let before = self.part.notes.len();
        write_back(self.reader.store(), &writes, true, &mut self.part.notes);
        if self.part.notes.len() == before {
            self.part.notes.extend(rebuilt);
        }
        if self.part.ended {
            let (reader, clock, list) = (&mut *self.reader, self.clock, self.list);
            self.part
                .recheck(reader, clock, list, carried_before, self.limit)?;
            self.part.seal_old(reader.store(), clock, list)?;
        }
        sort_by_key(&mut self.part.pets, |p| p.id);
        Ok(self.part)
    }

    fn full(&self) -> bool {
        self.part.pets.len() >= self.limit || self.empty_left == 0
    }

    /// The piece's positions from the walk's on: its pets, and for one it
    /// lacks (up to the end), the truth; what the truth added.
    fn take(&mut self, piece: i64, held: &Piece) -> Result<Vec<(i64, Listed)>, ApiError> {
        let mut added = Vec::new();
        let end = (piece + 1) * PIECE_LEN;
        // The common case: the piece holds every position wanted of it.
        let wanted = self.limit.saturating_sub(self.part.pets.len()) as i64;
        let last_wanted = end.min(self.part.position + wanted - 1);
        let run = held.range(self.part.position, last_wanted);
        if wanted > 0 && run.len() as i64 == last_wanted - self.part.position + 1 {
            self.part
                .pets
                .extend(run.iter().map(|(_, pet)| pet.clone()));
            self.part.position = last_wanted + 1;
            self.stopped = self.full();
            return Ok(added);
        }
        while self.part.position <= end {
            if self.full() {
                self.stopped = true;
                break;
            }
            let position = self.part.position;
            if let Some(pet) = held.get(position) {
                self.part.pets.push(pet.clone());
            } else if position > self.last()? {
                self.part.ended = true;
                break;
            } else {
                self.fetch_truth(position, held)?;
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
        Ok(added)
    }

    /// Batched reads, at a gap whose truth is not fetched: the truth of the
    /// gaps from `position` on the page may need, in one batch, up to twice
    /// as many as it still needs, so that holes among them cost no second.
    fn fetch_truth(&mut self, position: i64, current: &Piece) -> Result<(), ApiError> {
        if !self.reader.batched() || self.reader.holds(&Truth::key(self.list, position)) {
            return Ok(());
        }
        let (end, need) = (
            self.last()?,
            self.limit.saturating_sub(self.part.pets.len()).max(1),
        );
        let (mut held, mut keys, mut p) = (0, Vec::new(), position);
        while p <= end && held < need && held + keys.len() < 2 * need && keys.len() < BATCH_KEYS {
            let in_piece = match piece_of(p) == piece_of(position) {
                true => current.get(p).is_some(),
                false => {
                    matches!(self.ahead.get(&piece_of(p)), Some(Some(Ok(Some(piece)))) if piece.get(p).is_some())
                }
            };
            match in_piece {
                true => held += 1,
                false => keys.push(Truth::key(self.list, p)),
            }
            p += 1;
        }
        Truth::fetch(self.reader, self.list, keys)
    }

    /// The list's last position: fixed, or its counter.
    fn last(&mut self) -> Result<i64, ApiError> {
        if let Some(last) = self.last {
            return Ok(last);
        }
        let last = match self.end {
            End::Fixed(last) => last,
            End::Counter => {
                let key = counter_key(self.list);
                match self.reader.get(&key)? {
                    None => 0,
                    Some(bytes) => decode_counter(&bytes).ok_or_else(|| match self.list {
                        ListName::All => (self.refuse)(&bytes),
                        ListName::Status(_) => unreadable(&key),
                    })?,
                }
            }
        };
        self.last = Some(last);
        Ok(last)
    }
}
