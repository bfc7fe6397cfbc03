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
//! | `ix2:{list}:{k}`    | index piece `k`: a cache of positions `32k+1..=32k+32` | readers, plain `set` |
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
/// (200 characters that each escape to 6 bytes, the longest numbers) stay
/// under 43 KB, within the 64 KiB bound on any stored value.
pub const PIECE_LEN: i64 = 32;
/// Look-ups of the truth (a position its piece does not hold) one page may
/// spend; past it the page ends early with a `next` link.
pub const FALLBACK_BUDGET: usize = 64;

pub const ID_COUNTER: &str = "ctr:id";
/// The index pieces' key prefix, which is also their format's version: 1.0.0
/// wrote `ix:` pieces of another format, which this release never reads, so
/// instances of both can share a store during a rolling upgrade.
pub const PIECE_PREFIX: &str = "ix2";

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
    format!("{PIECE_PREFIX}:{}:{piece}", list.as_str())
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
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    pub notes: Vec<String>,
}

/// A pet as a list holds it: its id, and its JSON exactly as the response
/// carries it, so a page is served without decoding and re-encoding pets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub id: i64,
    json: String,
}

impl Listed {
    fn of(pet: &Pet) -> Result<Listed, ApiError> {
        let json = serde_json::to_string(pet)
            .map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))?;
        Ok(Listed { id: pet.id, json })
    }

    /// The pet's JSON text, as in responses.
    pub fn json(&self) -> &str {
        &self.json
    }
}

/// The JSON array of a page's pets: the response body.
pub fn json_array(pets: &[Listed]) -> Vec<u8> {
    let mut body = Vec::with_capacity(2 + pets.iter().map(|p| p.json.len() + 1).sum::<usize>());
    body.push(b'[');
    for (i, pet) in pets.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(pet.json.as_bytes());
    }
    body.push(b']');
    body
}

/// First line of a stored piece: its format.
const PIECE_HEADER: &str = "petstore-index-piece 2";

/// An index piece: the pets it holds, by position. Stored as text: the
/// header line, then one line per pet, `<position> <id> <pet JSON>` (JSON
/// text never holds a raw newline), so reading a piece splits lines instead
/// of parsing JSON, and serving it copies the pets' JSON as it is.
#[derive(Debug, Default, Clone)]
struct Piece(BTreeMap<i64, Listed>);

/// What reading a piece found.
enum Stored {
    Found(Piece),
    Missing,
    Unreadable(String),
}

impl Piece {
    /// Checks each line's shape (a pet object that states the line's id): a
    /// piece is our own derived data, and parsing every pet would cost what
    /// serving them as stored saves.
    fn decode(bytes: &[u8]) -> Result<Piece, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        let mut lines = text.split('\n');
        if lines.next() != Some(PIECE_HEADER) {
            return Err("not an index piece of this format".into());
        }
        lines.map(Piece::entry).collect::<Result<_, _>>().map(Piece)
    }

    fn entry(line: &str) -> Result<(i64, Listed), String> {
        let bad = || format!("bad line '{line}'");
        let mut fields = line.splitn(3, ' ');
        let mut number = || fields.next().and_then(|f| f.parse::<i64>().ok());
        let (Some(position), Some(id)) = (number(), number()) else {
            return Err(bad());
        };
        let json = fields.next().ok_or_else(bad)?;
        let stated = json
            .strip_prefix(r#"{"id":"#)
            .and_then(|rest| rest.split_once(','))
            .and_then(|(digits, _)| digits.parse::<i64>().ok());
        if stated != Some(id) || !json.ends_with('}') {
            return Err(bad());
        }
        let json = json.to_string();
        Ok((position, Listed { id, json }))
    }

    fn encode(&self) -> Vec<u8> {
        let mut text = String::from(PIECE_HEADER);
        for (position, pet) in &self.0 {
            text.push_str(&format!("\n{position} {} {}", pet.id, pet.json));
        }
        text.into_bytes()
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
    ///
    /// A piece that only lagged (pets created since it was written) is
    /// updated silently: that is how the index grows. A missing one is logged
    /// (an unreadable one was, when read), and so is a write that failed.
    fn repair(&mut self, piece: i64, mut held: Piece, added: Piece, missing: bool) {
        if added.0.is_empty() {
            return;
        }
        let key = piece_key(self.list, piece);
        let count = added.0.len();
        held.0.extend(added.0);
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
    /// failed, or one not committed yet).
    fn committed_at(&self, position: i64) -> Result<Option<Listed>, ApiError> {
        let pet = match self.list {
            ListName::All => Catalogue::new(self.store).get(position)?,
            ListName::Status(status) => self.slotted(status, position)?,
        };
        pet.as_ref().map(Listed::of).transpose()
    }

    /// The pet that `slot:{status}:{position}` names, if it is committed.
    fn slotted(&self, status: PetStatus, position: i64) -> Result<Option<Pet>, ApiError> {
        let catalogue = Catalogue::new(self.store);
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
    fn pieces_hold_each_pet_as_its_response_json_and_check_its_shape() {
        let stored = "petstore-index-piece 2\n\
            1 1 {\"id\":1,\"name\":\"a b\",\"categoryId\":3,\"status\":\"sold\"}\n\
            2 5 {\"id\":5,\"name\":\"b\\n\",\"categoryId\":3,\"status\":\"sold\"}";
        let piece = Piece::decode(stored.as_bytes()).unwrap();
        assert_eq!(piece.0[&2].id, 5);
        assert_eq!(
            piece.0[&2].json(),
            r#"{"id":5,"name":"b\n","categoryId":3,"status":"sold"}"#
        );
        assert_eq!(piece.encode(), stored.as_bytes());
        assert_eq!(
            json_array(&[piece.0[&1].clone(), piece.0[&2].clone()]),
            format!("[{},{}]", piece.0[&1].json(), piece.0[&2].json()).into_bytes()
        );
        for bad in [
            "[[1,1,3,\"sold\",\"a\"]]",
            "petstore-index-piece 2\n1 2 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1 {\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1",
            "petstore-index-piece 2\nx 1 {\"id\":1,}",
            "petstore-index-piece 3",
        ] {
            assert!(Piece::decode(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
