//! A page of a counters list: the walk along its positions and pieces, a
//! gap filled from the truth, the pieces it added to written back.

use super::carry::{Part, Truth};
use crate::catalogue::created::{Clock, Result};
use crate::catalogue::cursor::{Counted, MAX_CARRIED};
use crate::catalogue::keys::{
    counter_key, decode_counter, piece_key, piece_of, EMPTY_POSITIONS, PIECE_LEN,
};
use crate::catalogue::piece::{rebuilt_note, sort_by_key, write_back, Piece};
use crate::catalogue::reader::{Reader, BATCH_KEYS};
use crate::catalogue::{listed::Listed, record::unreadable};
use crate::{model::ListName, store::KvStore};

/// Where a list ends: at a status's counter (read when needed), at a
/// position (the id counter as `layout.rs` read it; a moved store's last id
/// before the move), or not known yet: the walk stops where it needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Counter,
    Fixed(i64),
    Unread,
}

/// The keys a page reads first, batched: its pieces, the list's counter,
/// the truth of what it carries.
pub fn first_keys(list: ListName, from: &Counted, limit: usize) -> Vec<String> {
    let pieces = piece_of(from.position())..=piece_of(from.position() + limit.max(1) as i64 - 1);
    let mut keys: Vec<String> = pieces.map(|k| piece_key(list, k)).collect();
    keys.extend(list.status().map(counter_key));
    keys.extend(from.carried().iter().map(|p| Truth::key(list, *p)));
    keys
}

/// Up to `limit` pets of `list` from `from`, sorted by id (past
/// [`EMPTY_POSITIONS`] empty positions, the page stops); at the list's
/// end or a full carry, the positions earlier pages carried looked at again.
/// `None` where it needed an end not read ([`End::Unread`]): it wrote
/// nothing, and walks again once told. A page of its own: [`Part::page`].
pub fn walk<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    (list, end): (ListName, End),
    from: &Counted,
    limit: usize,
) -> Result<Option<Part>> {
    let (first, found) = (piece_of(from.position()), reader.fetched());
    let pieces = first..first + limit as i64 / PIECE_LEN + 2;
    // Batched reads: the pieces fetched ahead, decoded, each taken once.
    let ahead = pieces.clone().map(|k| piece_key(list, k));
    let ahead = ahead.map(|key| found.holds(&key).then(|| Piece::read(found.peek(&key))));
    let mut walk = Walk {
        ahead: ahead.collect(),
        reader,
        clock,
        at: (list, first, end),
        limit,
        part: Part::at(from),
        empty_left: EMPTY_POSITIONS,
    };
    let (mut writes, mut rebuilt) = (Vec::new(), Vec::new());
    for piece in pieces {
        let key = piece_key(list, piece);
        let stored = match walk.ahead[(piece - first) as usize].take() {
            Some(stored) => stored,
            None => Piece::read(walk.reader.get(&key)?.as_deref()),
        };
        let (mut held, missing) = match stored {
            Ok(Some(piece)) => (piece, false),
            Ok(None) => (Piece::default(), true),
            Err(e) => {
                let note = format!("index piece {key} unreadable ({e}): rebuilt");
                walk.part.notes.push(note);
                (Piece::default(), false)
            }
        };
        let Some(added) = walk.take(piece, &held)? else {
            return Ok(None);
        };
        if !added.is_empty() {
            rebuilt.extend(missing.then(|| rebuilt_note(&key, added.len())));
            held.add(added);
            writes.push((key, held.encode()));
        }
        if walk.part.ended || walk.full() {
            break;
        }
    }
    let (mut part, failed) = (walk.part, write_back(walk.reader.store(), &writes, true));
    part.notes
        .extend(if failed.is_empty() { rebuilt } else { failed });
    // A full carry stops the walk where it is: looked at again, as at the
    // end, its positions resolve or are given up, and the walk goes on.
    if part.ended || part.carried.len() >= MAX_CARRIED {
        part.recheck(walk.reader, clock, list, (from.carried().len(), limit))?;
        part.seal_old(walk.reader.store(), clock, list);
    }
    sort_by_key(&mut part.pets, Listed::id);
    Ok(Some(part))
}

struct Walk<'w, 's, S: KvStore> {
    reader: &'w mut Reader<'s, S>,
    clock: &'w Clock<'w>,
    /// The list, the page's first piece, where the list ends.
    at: (ListName, i64, End),
    limit: usize,
    part: Part,
    /// Positions without a pet the page may still pass (none: it ends).
    empty_left: usize,
    ahead: Vec<Option<Result<Option<Piece>, String>>>,
}

impl<S: KvStore> Walk<'_, '_, S> {
    /// Whether the page ends: full, past its empty positions, carry full.
    fn full(&self) -> bool {
        self.part.pets.len() >= self.limit || self.empty_left == 0
    }

    /// The piece's positions from the walk's on: its pets, and for one it
    /// lacks, the truth; what the truth added (`None`: the end is unread).
    fn take(&mut self, piece: i64, held: &Piece) -> Result<Option<Vec<(i64, Listed)>>> {
        let (mut added, end) = (Vec::new(), (piece + 1) * PIECE_LEN);
        while self.part.position <= end && !self.full() {
            let position = self.part.position;
            if let Some(pet) = held.get(position) {
                self.part.pets.push(pet.clone());
            } else if let Some(last) = self.last()? {
                if position > last {
                    self.part.ended = true;
                    break;
                }
                self.fetch_truth(position, last, held)?;
                if !self.truth(position, &mut added)? {
                    break;
                }
            } else {
                return Ok(None);
            }
            self.part.position += 1;
        }
        Ok(Some(added))
    }

    /// What the truth holds at `position`: a pet (added), nothing ever, or
    /// a create not finished, carried; `false`: no room to carry it, the
    /// page ends before it.
    fn truth(&mut self, position: i64, added: &mut Vec<(i64, Listed)>) -> Result<bool> {
        match Truth::at(self.reader, self.clock, self.at.0, position)? {
            Truth::Pet(pet) => {
                added.push((position, pet.clone()));
                self.part.pets.push(pet);
            }
            Truth::Dead => self.empty_left -= 1,
            Truth::Unresolved(sealable) if self.part.carried.len() < MAX_CARRIED => {
                self.empty_left -= 1;
                self.part.carry(position, sealable, self.clock);
            }
            Truth::Unresolved(_) => {
                self.empty_left = 0;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Batched, at a gap: the truth of the positions on to the list's `end`
    /// that their pieces lack, up to twice what the page needs, so holes
    /// cost no more batch.
    fn fetch_truth(&mut self, position: i64, end: i64, current: &Piece) -> Result<()> {
        let key = Truth::key(self.at.0, position);
        if !self.reader.batched() || self.reader.fetched().holds(&key) {
            return Ok(());
        }
        let need = self.limit.saturating_sub(self.part.pets.len()).max(1);
        let (mut held, mut keys) = (0, Vec::new());
        for p in position..=end {
            if held >= need || held + keys.len() >= 2 * need || keys.len() >= BATCH_KEYS {
                break;
            }
            let in_piece = match self.ahead.get((piece_of(p) - self.at.1) as usize) {
                _ if piece_of(p) == piece_of(position) => current.get(p).is_some(),
                Some(Some(Ok(Some(piece)))) => piece.get(p).is_some(),
                _ => false,
            };
            match in_piece {
                true => held += 1,
                false => keys.push(Truth::key(self.at.0, p)),
            }
        }
        Truth::fetch(self.reader, self.at.0, keys)
    }

    /// Where the list ends, once read (`None`: not read here).
    fn last(&mut self) -> Result<Option<i64>> {
        let status = match (self.at.2, self.at.0) {
            (End::Fixed(last), _) => return Ok(Some(last)),
            (End::Counter, ListName::Status(status)) => status,
            _ => return Ok(None),
        };
        let key = counter_key(status);
        let read = self.reader.get(&key)?;
        let last = read.as_deref().map_or(Some(0), decode_counter);
        let last = last.ok_or_else(|| unreadable(&key))?;
        self.at.2 = End::Fixed(last);
        Ok(Some(last))
    }
}
