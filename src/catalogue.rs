//! The catalogue in the key-value store: how a pet is written, indexed and read.
//!
//! Layout (README, "Key-value layout", says why it is safe on every backend):
//!
//! | key                 | value                                         | written by |
//! |---------------------|-----------------------------------------------|------------|
//! | `ctr:id`            | id counter; also the positions of list `all`  | `increment` |
//! | `ctr:{status}`      | position counter of that status's list        | `increment` |
//! | `slot:{status}:{n}` | id of the pet at position `n` of that list    | its one creator, `set` |
//! | `pet:{id}`          | the pet (JSON): **the commit point**          | its one creator, `set` |
//! | `ix:{list}:{k}`     | piece `k` of a list: pets at positions `32k+1..=32k+32` | one creator (`set`), then CAS |
//!
//! The pieces are an index over data that is complete without them: a reader
//! that finds a position missing from its piece falls back to `slot`/`pet`
//! and repairs the piece. So a failed or lost index write costs a few reads,
//! never a pet.

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::{Cursor, ListName, NewPet, Pet, PetStatus};
use crate::store::{KvStore, StoreError};

/// Positions per index piece. 32 pets of the largest possible JSON size
/// (200 characters that each escape to 6 bytes) stay under 41 KB, within the
/// 64 KiB bound on any stored value.
pub const PIECE_LEN: i64 = 32;
/// Compare-and-swap rounds for one index insert before leaving it to readers.
pub const CAS_ATTEMPTS: usize = 4;
/// Fallback reads (pets missing from their piece) one page may spend.
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

/// One page of a list, and where the walk goes on if more may follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub pets: Vec<Pet>,
    pub next: Option<Cursor>,
}

/// An index piece: the pets at some positions of one list's piece range.
#[derive(Debug, Default)]
struct Piece(BTreeMap<i64, Pet>);

/// Stored form of one entry: `[position, id, categoryId, status, name]`.
type StoredEntry = (i64, i64, i64, PetStatus, String);

impl Piece {
    fn decode(key: &str, bytes: &[u8]) -> Result<Piece, ApiError> {
        let entries: Vec<StoredEntry> = serde_json::from_slice(bytes)
            .map_err(|e| ApiError::Internal(format!("stored value '{key}' is unreadable: {e}")))?;
        Ok(Piece(
            entries
                .into_iter()
                .map(|(n, id, category_id, status, name)| {
                    let pet = Pet {
                        id,
                        name,
                        category_id,
                        status,
                    };
                    (n, pet)
                })
                .collect(),
        ))
    }

    fn encode(&self) -> Vec<u8> {
        let entries: Vec<(i64, i64, i64, PetStatus, &str)> = self
            .0
            .iter()
            .map(|(n, p)| (*n, p.id, p.category_id, p.status, p.name.as_str()))
            .collect();
        // A Vec of tuples of numbers, enums and strings always serializes.
        serde_json::to_vec(&entries).unwrap_or_default()
    }

    fn holds(&self, entries: &[(i64, Pet)]) -> bool {
        entries
            .iter()
            .all(|(n, pet)| self.0.get(n).is_some_and(|p| p.id == pet.id))
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

    /// Creates a pet. Order of writes, so that no failure leaves it half-visible:
    ///
    /// 1. `increment ctr:id` → id; `increment ctr:{status}` → position.
    /// 2. `set slot:{status}:{position}` = id (invisible on its own).
    /// 3. `set pet:{id}`: the commit point. Before it, a failure leaves only
    ///    holes (an unused id and position) and the answer is 503; after it,
    ///    the pet is fetchable and listed (pieces or fallback) and the answer is 201.
    /// 4. Insert into the pieces of `all` and of its status (best effort).
    pub fn create(&self, new: NewPet) -> Result<Pet, ApiError> {
        let id = self.store.increment(ID_COUNTER, 1)?;
        let list = ListName::Status(new.status);
        let position = self.store.increment(&counter_key(list), 1)?;
        self.store
            .set(&slot_key(new.status, position), id.to_string().as_bytes())?;
        let pet = Pet {
            id,
            name: new.name.as_str().to_string(),
            category_id: new.category_id,
            status: new.status,
        };
        let record = serde_json::to_vec(&pet)
            .map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))?;
        self.commit(&pet_key(id), &record)?;
        // Committed. Index failures below are not the client's problem: the
        // read path finds the pet without its piece entry and repairs it.
        self.index(ListName::All, id, &pet);
        self.index(list, position, &pet);
        Ok(pet)
    }

    /// Writes the commit record; a failed reply is settled by reading back.
    fn commit(&self, key: &str, record: &[u8]) -> Result<(), ApiError> {
        match self.store.set(key, record) {
            Ok(()) => Ok(()),
            Err(e) => match self.store.get(key) {
                Ok(Some(stored)) if stored == record => Ok(()),
                _ => Err(e.into()),
            },
        }
    }

    fn index(&self, list: ListName, position: i64, pet: &Pet) {
        let piece = piece_of(position);
        if (position - 1) % PIECE_LEN == 0 {
            // The holder of a piece's first position is alone in creating the
            // next piece, ahead of need (and piece 0, for position 1). No
            // other writer creates a piece, so none is created through CAS.
            if piece == 0 {
                let _ = self.create_piece(list, 0);
            }
            let _ = self.create_piece(list, piece + 1);
        }
        let _ = self.insert(&piece_key(list, piece), &[(position, pet.clone())]);
    }

    /// Creates an empty piece. Only its one designated creator calls this, so
    /// between the `get` that finds it absent and the `set`, nobody else can
    /// have written it (others insert only into pieces that exist).
    fn create_piece(&self, list: ListName, piece: i64) -> Result<(), StoreError> {
        let key = piece_key(list, piece);
        let mut outcome = Ok(());
        for _ in 0..2 {
            if self.store.get(&key)?.is_some() {
                return Ok(());
            }
            outcome = self.store.set(&key, b"[]");
            if outcome.is_ok() {
                return Ok(());
            }
        }
        outcome
    }

    /// Inserts entries into an existing piece by compare-and-swap. Idempotent
    /// (entries already there are not added twice) and decided by reading
    /// back, because a backend may report failure after writing (Redis) or
    /// lose the reply. Returns whether the entries are in the piece.
    fn insert(&self, key: &str, entries: &[(i64, Pet)]) -> Result<bool, ApiError> {
        for _ in 0..CAS_ATTEMPTS {
            let (cas, current) = self.store.cas_begin(key)?;
            // An absent piece is never created here: on SQLite a CAS on an
            // absent key is an upsert that can drop a concurrent writer's entry.
            let Some(current) = current else {
                return Ok(false);
            };
            let mut piece = Piece::decode(key, &current)?;
            if piece.holds(entries) {
                return Ok(true);
            }
            piece.0.extend(entries.iter().map(|(n, p)| (*n, p.clone())));
            // The reported outcome is not trusted either way; the read decides.
            let _ = self.store.cas_swap(cas, &piece.encode());
            match self.store.get(key)? {
                Some(back) if Piece::decode(key, &back)?.holds(entries) => return Ok(true),
                _ => continue,
            }
        }
        Ok(false)
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
    /// list, and each page sorted by id).
    pub fn list(&self, list: ListName, from: i64, limit: usize) -> Result<Page, ApiError> {
        let mut reader = Reader {
            catalogue: self,
            list,
            last: None,
        };
        let mut pets: Vec<Pet> = Vec::with_capacity(limit);
        let mut position = from;
        let mut budget = FALLBACK_BUDGET;
        // A page spans at most this many pieces; holes (failed creates) may
        // end it early, with a `next` cursor, so its cost stays bounded.
        let max_pieces = limit / PIECE_LEN as usize + 2;
        let mut more_in_piece = false;
        for _ in 0..max_pieces {
            let key = piece_key(list, piece_of(position));
            let piece = match self.store.get(&key)? {
                Some(bytes) => Some(Piece::decode(&key, &bytes)?),
                None => None,
            };
            let piece_end = (piece_of(position) + 1) * PIECE_LEN;
            let mut repairs = Vec::new();
            let mut ended = false;
            while position <= piece_end && pets.len() < limit {
                if let Some(pet) = piece.as_ref().and_then(|p| p.0.get(&position)) {
                    pets.push(pet.clone());
                } else if position > reader.last()? {
                    ended = true;
                    break;
                } else if budget == 0 {
                    break;
                } else {
                    budget -= 1;
                    if let Some(pet) = reader.committed_at(position)? {
                        repairs.push((position, pet.clone()));
                        pets.push(pet);
                    }
                }
                position += 1;
            }
            if piece.is_some() && !repairs.is_empty() {
                // Read repair: put what the fallback found back into the piece.
                let _ = self.insert(&key, &repairs);
            }
            if ended {
                pets.sort_by_key(|p| p.id);
                return Ok(Page { pets, next: None });
            }
            more_in_piece = piece
                .as_ref()
                .is_some_and(|p| p.0.range(position..).next().is_some());
            if pets.len() >= limit || budget == 0 {
                break;
            }
        }
        let more = more_in_piece || position <= reader.last()?;
        pets.sort_by_key(|p| p.id);
        Ok(Page {
            pets,
            next: more.then_some(Cursor { position }),
        })
    }
}

/// Read-path helpers that share the lazily read list counter.
struct Reader<'c, 'a, S: KvStore> {
    catalogue: &'c Catalogue<'a, S>,
    list: ListName,
    last: Option<i64>,
}

impl<S: KvStore> Reader<'_, '_, S> {
    /// The list's highest position handed out (read once, only if needed).
    fn last(&mut self) -> Result<i64, ApiError> {
        if let Some(last) = self.last {
            return Ok(last);
        }
        // `increment` by 0 reads a counter the same way on every backend
        // (a plain `get` returns SQLite's 8 raw bytes, Redis's decimal text).
        let last = self.catalogue.store.increment(&counter_key(self.list), 0)?;
        self.last = Some(last);
        Ok(last)
    }

    /// The committed pet at a list position that its piece does not hold.
    fn committed_at(&self, position: i64) -> Result<Option<Pet>, ApiError> {
        let status = match self.list {
            ListName::All => return self.catalogue.get(position),
            ListName::Status(s) => s,
        };
        let key = slot_key(status, position);
        let Some(bytes) = self.catalogue.store.get(&key)? else {
            return Ok(None);
        };
        let id = std::str::from_utf8(&bytes)
            .ok()
            .and_then(crate::model::parse_digits)
            .ok_or_else(|| ApiError::Internal(format!("stored value '{key}' is unreadable")))?;
        Ok(self.catalogue.get(id)?.filter(|p| p.status == status))
    }
}
