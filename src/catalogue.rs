//! The catalogue in the key-value store: how a pet is written, indexed and read.
//!
//! Layout v2 (README, "Key-value layout", says why it is correct on every
//! backend quirk and what each operation costs):
//!
//! | key                 | value                                          | written by |
//! |---------------------|------------------------------------------------|------------|
//! | `ctr:id`            | last id handed out; list `all`'s positions are ids | `increment` |
//! | `ctr:{status}`      | last position handed out in that status's list | `increment` |
//! | `pet:{id}`          | the pet (JSON)                                 | its creator: one `set-many` with its slot |
//! | `slot:{status}:{n}` | id of the pet at position `n` of that list     | the same `set-many` |
//! | `ix:{list}:{k}`     | index piece `k`: a cache of positions `32k+1..=32k+32` (format of 1.0.0) | readers, plain `set` |
//!
//! A create is two `increment`s and one `set-many` (one transaction, one
//! `MSET`): it never touches the index. The pieces are a cache over data that
//! never changes (`pet`, `slot`): a reader takes what a piece holds, fills
//! gaps from that truth, and writes the piece back, so a missing, stale or
//! unreadable piece costs reads once and never changes an answer.

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::{Cursor, ListName, NewPet, Pet, PetStatus};
use crate::store::{KvStore, StoreError};

/// Positions per index piece. 32 pets of the largest possible JSON size
/// (200 characters that each escape to 6 bytes) stay under 41 KB, within the
/// 64 KiB bound on any stored value.
pub const PIECE_LEN: i64 = 32;
/// Look-ups of the truth (a position its piece does not hold) one page may
/// spend; past it the page ends early with a `next` link.
pub const FALLBACK_BUDGET: usize = 64;

pub const ID_COUNTER: &str = "ctr:id";

pub fn counter_key(list: ListName) -> String {
    match list {
        ListName::All => ID_COUNTER.to_string(),
        ListName::Status(s) => format!("ctr:{}", s.as_str()),
    }
}

pub fn slot_key(status: PetStatus, position: i64) -> String {
    format!("slot:{}:{position}", status.as_str())
}

pub fn pet_key(id: i64) -> String {
    format!("pet:{id}")
}

pub fn piece_key(list: ListName, piece: i64) -> String {
    format!("ix:{}:{piece}", list.as_str())
}

fn piece_of(position: i64) -> i64 {
    (position - 1) / PIECE_LEN
}

/// Reads a counter written by `increment` with a plain `get`: Spin's SQLite
/// stores 8 bytes little-endian, Redis decimal text. A little-endian counter
/// below 2^56 has a zero last byte, so it is never all ASCII digits.
pub fn decode_counter(bytes: &[u8]) -> Option<i64> {
    let text = !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'-');
    if text {
        std::str::from_utf8(bytes).ok()?.parse().ok()
    } else {
        Some(i64::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// One page of a list, where the walk goes on if more may follow, and what
/// the page did to the index (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub pets: Vec<Pet>,
    pub next: Option<Cursor>,
    pub notes: Vec<String>,
}

/// Stored form of one entry: `[position, id, categoryId, status, name]`. A
/// piece is a JSON array of entries, exactly as 1.0.0 wrote it, so instances
/// of both releases can share one store during a rolling upgrade. The key
/// prefix is the version marker: a future incompatible format gets a new
/// prefix (`ix2:`), never a new meaning under `ix:`.
type StoredEntry = (i64, i64, i64, PetStatus, String);

/// An index piece: the pets it holds, by position.
#[derive(Debug, Default, Clone)]
struct Piece(BTreeMap<i64, Pet>);

/// What reading a piece found.
enum Stored {
    Found(Piece),
    Missing,
    Unreadable(String),
}

impl Piece {
    fn decode(bytes: &[u8]) -> Result<Piece, String> {
        let entries: Vec<StoredEntry> = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let pets = entries
            .into_iter()
            .map(|(n, id, category_id, status, name)| {
                let pet = Pet {
                    id,
                    name,
                    category_id,
                    status,
                };
                (n, pet)
            });
        Ok(Piece(pets.collect()))
    }

    fn encode(&self) -> Vec<u8> {
        let entries: Vec<(i64, i64, i64, PetStatus, &str)> = self
            .0
            .iter()
            .map(|(n, p)| (*n, p.id, p.category_id, p.status, p.name.as_str()))
            .collect();
        // Numbers, enums and strings always serialize.
        serde_json::to_vec(&entries).unwrap_or_default()
    }
}

/// The catalogue over any [`KvStore`].
pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
}

impl<'a, S: KvStore> Catalogue<'a, S> {
    pub fn new(store: &'a S) -> Self {
        Catalogue { store }
    }

    /// Creates a pet:
    ///
    /// 1. `increment ctr:id` → id; `increment ctr:{status}` → position. A
    ///    failure here stores nothing (a lost reply leaves an unused number).
    /// 2. `set-many` of `pet:{id}` and `slot:{status}:{position}`: both or
    ///    neither, the commit. The index is left to readers.
    pub fn create(&self, new: NewPet) -> Result<Pet, ApiError> {
        let id = self.store.increment(ID_COUNTER, 1)?;
        let position = self
            .store
            .increment(&counter_key(ListName::Status(new.status)), 1)?;
        let pet = Pet {
            id,
            name: new.name.as_str().to_string(),
            category_id: new.category_id,
            status: new.status,
        };
        let record = serde_json::to_vec(&pet)
            .map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))?;
        // Slot first: on a backend whose set-many is a loop of sets in order
        // (not Spin's SQLite or Redis, where it is all or nothing), the pet
        // stays the commit point, as when these were two sets.
        let writes = [
            (slot_key(new.status, position), id.to_string().into_bytes()),
            (pet_key(id), record.clone()),
        ];
        match self.store.set_many(&writes) {
            Ok(()) => Ok(pet),
            Err(e) => self.settle(id, &record, e).map(|()| pet),
        }
    }

    /// A commit whose reply failed: the read-back decides. The record there →
    /// it was applied (a lost reply); absent → nothing was stored; the read
    /// failing too → nobody knows, and the client is told so.
    fn settle(&self, id: i64, record: &[u8], error: StoreError) -> Result<(), ApiError> {
        match self.store.get(&pet_key(id)) {
            Ok(Some(stored)) if stored == record => Ok(()),
            Ok(_) => Err(ApiError::StoreUnavailable(error)),
            Err(_) => Err(ApiError::CreateOutcomeUnknown(error)),
        }
    }

    /// The pet with this id, if it was committed.
    pub fn get(&self, id: i64) -> Result<Option<Pet>, ApiError> {
        let key = pet_key(id);
        match self.store.get(&key)? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                ApiError::Internal(format!("stored value '{key}' is unreadable: {e}"))
            }),
        }
    }

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
            let (held, added) = walk.take(piece, stored)?;
            walk.repair(piece, held, added);
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
    pets: Vec<Pet>,
    /// Look-ups of the truth left for this page.
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
            Some(bytes) => match Piece::decode(&bytes) {
                Ok(p) => Stored::Found(p),
                Err(e) => Stored::Unreadable(e),
            },
        })
    }

    /// Step 3: the piece's positions from the walk's on. Returns what the
    /// piece held and what the truth added.
    fn take(&mut self, piece: i64, stored: Stored) -> Result<(Piece, Piece), ApiError> {
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
        let mut added = Piece::default();
        let end = (piece + 1) * PIECE_LEN;
        // The common case: the piece holds every position the page wants
        // from it. Its pets move into the page; nothing to repair.
        let wanted = (self.limit - self.pets.len()) as i64;
        let last_wanted = end.min(self.position + wanted - 1);
        if wanted > 0
            && held.0.range(self.position..=last_wanted).count() as i64
                == last_wanted - self.position + 1
        {
            let mut held = held;
            let mut taken = held.0.split_off(&self.position);
            let beyond = taken.split_off(&(last_wanted + 1));
            self.pets.extend(taken.into_values());
            self.position = last_wanted + 1;
            self.more_held = !beyond.is_empty();
            return Ok((Piece::default(), added));
        }
        while self.position <= end && !self.stopped() {
            let position = self.position;
            if let Some(pet) = held.0.get(&position) {
                self.pets.push(pet.clone());
            } else if position > self.last()? {
                self.ended = true;
                break;
            } else {
                self.budget -= 1;
                if let Some(pet) = self.committed_at(position)? {
                    added.0.insert(position, pet.clone());
                    self.pets.push(pet);
                }
            }
            self.position += 1;
        }
        self.more_held = held.0.range(self.position..).next().is_some();
        Ok((held, added))
    }

    /// Step 4: what the truth added goes back into the piece (best effort: a
    /// failed write only leaves the work to the next reader).
    fn repair(&mut self, piece: i64, mut held: Piece, added: Piece) {
        if added.0.is_empty() {
            return;
        }
        let key = piece_key(self.list, piece);
        let count = added.0.len();
        held.0.extend(added.0);
        let note = match self.store.set(&key, &held.encode()) {
            Ok(()) => format!("index piece {key}: {count} entries added from the truth"),
            Err(e) => format!("index piece {key}: repair not written ({e})"),
        };
        self.notes.push(note);
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
    /// failed, or one not committed yet).
    fn committed_at(&self, position: i64) -> Result<Option<Pet>, ApiError> {
        let catalogue = Catalogue::new(self.store);
        let status = match self.list {
            ListName::All => return catalogue.get(position),
            ListName::Status(s) => s,
        };
        let key = slot_key(status, position);
        let Some(bytes) = self.store.get(&key)? else {
            return Ok(None);
        };
        let id = std::str::from_utf8(&bytes)
            .ok()
            .and_then(crate::model::parse_digits)
            .ok_or_else(|| ApiError::Internal(format!("stored value '{key}' is unreadable")))?;
        Ok(catalogue.get(id)?.filter(|p| p.status == status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_with_get_decode_in_both_backends_encodings() {
        assert_eq!(decode_counter(&42i64.to_le_bytes()), Some(42), "SQLite");
        assert_eq!(decode_counter(b"42"), Some(42), "Redis");
        assert_eq!(decode_counter(&(1i64 << 40).to_le_bytes()), Some(1 << 40));
        assert_eq!(
            decode_counter(b"12345678"),
            Some(12_345_678),
            "8 digits are text"
        );
        assert_eq!(decode_counter(b""), None);
        assert_eq!(decode_counter(b"abc"), None);
    }

    #[test]
    fn pieces_are_written_exactly_as_1_0_0_wrote_them() {
        let stored = br#"[[1,1,3,"sold","a"],[2,5,3,"sold","b"]]"#;
        let piece = Piece::decode(stored).unwrap();
        assert_eq!(piece.0[&2].id, 5);
        assert_eq!(piece.encode(), stored);
        assert!(Piece::decode(br#"{"v":3,"e":[]}"#).is_err());
        assert!(Piece::decode(br#"[[1]]"#).is_err());
    }
}
