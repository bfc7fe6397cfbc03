//! A page of a counters walk (`Part`) and the positions it carries (issued, not
//! committed yet): listed once they commit, given up when long empty (`hole:`).
//! docs/key-value-layout.md, "The counters layout", "A page".

use crate::errors::ApiError;
use crate::model::{parse_digits, ListName};
use crate::store::KvStore;

use crate::catalogue::keys::{pet_key, sighting_key, slot_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::pending::{Clock, Pending, SEAL_AFTER_MS};
use crate::catalogue::reader::Reader;

use super::cursor::Cursor;
use super::truth::Truth;

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
    /// Carried positions where nothing at all is stored yet (this page's).
    sealable: Vec<i64>,
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

    /// Carries `position`: its create has not finished.
    pub(super) fn carry(&mut self, position: i64, sealable: bool, clock: &Clock) {
        if self.carried.is_empty() {
            self.since_s = clock.now_ms / 1000;
        }
        self.carried.push(position);
        if sealable {
            self.sealable.push(position);
        }
    }

    /// The first `count` carried positions (from earlier pages): listed if
    /// they committed since (as a page of `limit` has room), dropped if
    /// given up, carried on if not.
    pub(super) fn recheck<S: KvStore>(
        &mut self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        count: usize,
        limit: usize,
    ) -> Result<(), ApiError> {
        let mut carried = std::mem::take(&mut self.carried);
        let later = carried.split_off(count.min(carried.len()));
        if carried.is_empty() {
            self.carried = later;
            return Ok(());
        }
        if reader.batched() {
            let keys = carried.iter().map(|p| Truth::key(list, *p)).collect();
            Truth::fetch(reader, list, keys)?;
        }
        let since_s = self.since_s;
        for position in carried {
            match Truth::at(reader, clock, list, position)? {
                Truth::Pet(pet) if self.pets.len() < limit => self.pets.push(pet),
                Truth::Dead => {}
                Truth::Pet(_) => self.carried.push(position),
                Truth::Unresolved { sealable } => self.carry(position, sealable, clock),
            }
        }
        self.since_s = since_s;
        self.carried.extend(later);
        Ok(())
    }

    /// Once the carried positions are old, gives up those where nothing is
    /// stored: each first found so more than [`SEAL_AFTER_MS`] ago by the
    /// store's record of it. Best effort: a failed call leaves it carried.
    pub(super) fn seal_old<S: KvStore>(
        &mut self,
        store: &S,
        clock: &Clock,
        list: ListName,
    ) -> Result<(), ApiError> {
        let now_ms = clock.now_ms;
        let old = now_ms / 1000 >= self.since_s + SEAL_AFTER_MS / 1000;
        if !old || self.sealable.is_empty() {
            return Ok(());
        }
        for position in std::mem::take(&mut self.sealable) {
            let key = sighting_key(list, position);
            let seen = store.get(&key).ok().flatten();
            let seen_ms = seen.and_then(|v| std::str::from_utf8(&v).ok().and_then(parse_digits));
            match seen_ms {
                Some(ms) if now_ms >= ms as u64 + SEAL_AFTER_MS => {
                    if seal(store, list, position).is_ok() {
                        self.carried.retain(|p| *p != position);
                        self.notes.push(format!(
                            "position {position} of {} given up: nothing stored since {ms}",
                            list.as_str()
                        ));
                    }
                }
                Some(_) => {}
                None => {
                    let _ = store.set(&key, now_ms.to_string().as_bytes());
                }
            }
        }
        Ok(())
    }
}

/// Writes what every reader (1.2.0's too) takes for no pet where the
/// position's create stored nothing: a void pending record at `pet:{id}`,
/// or a slot naming no pet (`0`).
fn seal<S: KvStore>(store: &S, list: ListName, position: i64) -> Result<(), ApiError> {
    let void = Pending::void(position).encode();
    match list {
        ListName::All => store.set(&pet_key(position), &void)?,
        ListName::Status(status) => {
            let slot = slot_key(status, position);
            match store.get(&slot)? {
                None => store.set(&slot, b"0")?,
                Some(id) => {
                    let id = std::str::from_utf8(&id).ok().and_then(parse_digits);
                    if let Some(id) = id.filter(|id| *id > 0) {
                        store.set(&pet_key(id), &void)?;
                    }
                }
            }
        }
    }
    Ok(())
}
