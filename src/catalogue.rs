//! The catalogue in the key-value store: how a pet is written, indexed and read.
//!
//! Layout v2 (README, "Key-value layout", says why it is correct on every
//! backend quirk and what each operation costs):
//!
//! | key                 | value                                          | written by |
//! |---------------------|------------------------------------------------|------------|
//! | `ctr:id`            | last id handed out; list `all`'s positions are ids | `increment` |
//! | `ctr:{status}`      | last position handed out in that status's list | `increment` |
//! | `pet:{id}`          | the pet (JSON); before a keyed create commits, its [`Pending`] record | its creator: one `set-many` with its slot (a keyed create: then a `set`) |
//! | `slot:{status}:{n}` | id of the pet at position `n` of that list     | the same `set-many` |
//! | `ix2:{list}:{k}`    | index piece `k`: a cache of positions `32k+1..=32k+32` | readers, plain `set` |
//! | `idem:{sha256}`     | an `Idempotency-Key`'s counter word: 0 or its pet's id | `increment`, then one CAS (`idempotency`) |
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
    if is_text_counter(bytes) {
        std::str::from_utf8(bytes).ok()?.parse().ok()
    } else {
        Some(i64::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// Redis's decimal text, as opposed to SQLite's 8 bytes little-endian.
fn is_text_counter(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'-')
}

/// `value` in the encoding of `like`, a counter's stored bytes: what a
/// compare-and-swap writes to a key that `increment` also updates (Spin's
/// SQLite host panics on a counter that is not 8 bytes).
pub fn encode_counter_like(like: &[u8], value: i64) -> Vec<u8> {
    if is_text_counter(like) {
        value.to_string().into_bytes()
    } else {
        value.to_le_bytes().to_vec()
    }
}

/// The JSON of a pet as stored in `pet:{id}` and sent in responses.
pub fn encode_pet(pet: &Pet) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(pet).map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))
}

/// An id and a position, taken for one pet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    pub id: i64,
    pub position: i64,
}

/// What `pet:{id}` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PetRecord {
    Absent,
    /// A keyed create's intent, staged with its slot before it claims its
    /// key: the position it reserved, when it started, and the pet's JSON.
    Pending(Pending),
    /// The pet's JSON: the pet exists.
    Committed(Vec<u8>),
}

/// First line of a pending record. Not JSON, so no reader ever takes it
/// for a pet.
pub const PENDING_HEADER: &str = "petstore-pending 1";

/// A keyed create's intent: `petstore-pending 1\n<position> <started ms>\n<pet JSON>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub position: i64,
    /// When the create began (Unix milliseconds, the writer's clock).
    pub started_ms: u64,
    /// The committed record this create will write.
    pub record: Vec<u8>,
}

impl Pending {
    pub fn encode(&self) -> Vec<u8> {
        let mut out =
            format!("{PENDING_HEADER}\n{} {}\n", self.position, self.started_ms).into_bytes();
        out.extend_from_slice(&self.record);
        out
    }

    fn decode(bytes: &[u8]) -> Option<Pending> {
        let rest = bytes
            .strip_prefix(PENDING_HEADER.as_bytes())?
            .strip_prefix(b"\n")?;
        let end = rest.iter().position(|b| *b == b'\n')?;
        let line = std::str::from_utf8(&rest[..end]).ok()?;
        let (position, started) = line.split_once(' ')?;
        Some(Pending {
            position: position.parse().ok()?,
            started_ms: started.parse().ok()?,
            record: rest[end + 1..].to_vec(),
        })
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
        let json = String::from_utf8(encode_pet(pet)?)
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
    /// 1. [`reserve`](Self::reserve) its id and its position in its status's
    ///    list. A failure here stores nothing (a lost reply leaves a hole).
    /// 2. [`commit`](Self::commit) it: both keys or neither. The index is left
    ///    to readers.
    pub fn create(&self, new: NewPet) -> Result<Pet, ApiError> {
        let reserved = self.reserve(new.status)?;
        let pet = new.into_pet(reserved.id);
        let record = encode_pet(&pet)?;
        self.commit(reserved, pet.status, &record)?;
        Ok(pet)
    }

    /// `increment ctr:id` → id; `increment ctr:{status}` → position.
    pub fn reserve(&self, status: PetStatus) -> Result<Reserved, ApiError> {
        let id = self.store.increment(ID_COUNTER, 1)?;
        let position = self
            .store
            .increment(&counter_key(ListName::Status(status)), 1)?;
        Ok(Reserved { id, position })
    }

    /// One `set-many` of `slot:{status}:{position}` and `pet:{id}`: the
    /// commit of a create, or the stage of a keyed create (`pet` then holds
    /// its pending record, which readers take for no pet, so the slot is a
    /// hole until [`commit_staged`](Self::commit_staged)).
    pub fn commit(
        &self,
        reserved: Reserved,
        status: PetStatus,
        record: &[u8],
    ) -> Result<(), ApiError> {
        // Slot first: on a backend whose set-many is a loop of sets in order
        // (not Spin's SQLite or Redis, where it is all or nothing), the pet
        // stays the commit point, as when these were two sets.
        let writes = [
            (
                slot_key(status, reserved.position),
                reserved.id.to_string().into_bytes(),
            ),
            (pet_key(reserved.id), record.to_vec()),
        ];
        match self.store.set_many(&writes) {
            Ok(()) => Ok(()),
            Err(e) => self.settle(reserved.id, record, e),
        }
    }

    /// Replaces a staged create's pending record with the pet: one `set` of
    /// a key that exists (an overwrite, the cheap write on SQLite). Writing
    /// the same record twice changes nothing, which is what lets a retry
    /// finish a keyed create (see `idempotency`).
    pub fn commit_staged(&self, id: i64, record: &[u8]) -> Result<(), ApiError> {
        match self.store.set(&pet_key(id), record) {
            Ok(()) => Ok(()),
            Err(e) => self.settle(id, record, e),
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

    /// What `pet:{id}` holds, undecoded.
    pub fn record(&self, id: i64) -> Result<PetRecord, ApiError> {
        let key = pet_key(id);
        Ok(match self.store.get(&key)? {
            None => PetRecord::Absent,
            Some(bytes) if bytes.starts_with(PENDING_HEADER.as_bytes()) => {
                PetRecord::Pending(Pending::decode(&bytes).ok_or_else(|| {
                    ApiError::Internal(format!("stored value '{key}' is unreadable"))
                })?)
            }
            Some(bytes) => PetRecord::Committed(bytes),
        })
    }

    /// The pet with this id, if it was committed.
    pub fn get(&self, id: i64) -> Result<Option<Pet>, ApiError> {
        match self.record(id)? {
            PetRecord::Absent | PetRecord::Pending(_) => Ok(None),
            PetRecord::Committed(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                ApiError::Internal(format!("stored value '{}' is unreadable: {e}", pet_key(id)))
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
