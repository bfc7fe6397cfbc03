//! A page of a counters walk ([`Part`]) and the positions it carries
//! (issued, not committed yet): listed once they commit, given up when long
//! empty (`hole:`, the store's clock); what a position holds, looked up in
//! the truth. docs/key-value-layout.md.

use crate::errors::ApiError;
use crate::model::{parse_digits, ListName, PetStatus};
use crate::store::KvStore;

use crate::catalogue::created::Clock;
use crate::catalogue::cursor::Counted;
use crate::catalogue::keys::{pet_key, sighting_key, slot_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::reader::Reader;
use crate::catalogue::record::{unreadable, Pending, PetRecord, SEAL_AFTER_MS};

/// A page of a walk: its pets, where the walk goes on, whether it passed
/// the list's last position.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    pub pets: Vec<Listed>,
    pub position: i64,
    pub carried: Vec<i64>,
    /// When the oldest carried position was first seen (Unix seconds).
    pub since_s: u64,
    pub ended: bool,
    pub notes: Vec<String>,
    /// Carried positions where nothing at all is stored yet (this page's).
    sealable: Vec<i64>,
}

impl Part {
    /// A page's start, where the cursor's part says.
    pub fn at(from: &Counted) -> Part {
        let (position, carried, since_s) = (from.position, from.carried.clone(), from.since_s);
        Part {
            position,
            carried,
            since_s,
            ..Part::default()
        }
    }

    /// Where the walk goes on after this page.
    pub fn counted(&self) -> Counted {
        let (position, carried, since_s) = (self.position, self.carried.clone(), self.since_s);
        Counted {
            position,
            carried,
            since_s,
        }
    }

    /// Carries `position`: its create has not finished.
    pub fn carry(&mut self, position: i64, sealable: bool, clock: &Clock) {
        if self.carried.is_empty() {
            self.since_s = clock.now_ms / 1000;
        }
        self.carried.push(position);
        if sealable {
            self.sealable.push(position);
        }
    }

    /// The first `count` carried positions (earlier pages'): listed if they
    /// committed since (as a page of `limit` has room), dropped if given
    /// up, carried on if not.
    pub fn recheck<S: KvStore>(
        &mut self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        count: usize,
        limit: usize,
    ) -> Result<(), ApiError> {
        let mut carried = std::mem::take(&mut self.carried);
        let later = carried.split_off(count.min(carried.len()));
        if reader.batched() {
            Truth::fetch(
                reader,
                list,
                carried.iter().map(|p| Truth::key(list, *p)).collect(),
            )?;
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
    /// stored, each first found so more than [`SEAL_AFTER_MS`] ago by the
    /// store's record of it. Best effort: a failed call leaves it carried.
    pub fn seal_old<S: KvStore>(
        &mut self,
        store: &S,
        clock: &Clock,
        list: ListName,
    ) -> Result<(), ApiError> {
        let now_ms = clock.now_ms;
        if now_ms / 1000 < self.since_s + SEAL_AFTER_MS / 1000 {
            return Ok(());
        }
        for position in std::mem::take(&mut self.sealable) {
            let key = sighting_key(list, position);
            let seen = store.get(&key).ok().flatten();
            match seen.and_then(|v| std::str::from_utf8(&v).ok().and_then(parse_digits)) {
                Some(ms) if now_ms >= ms as u64 + SEAL_AFTER_MS => {
                    if seal(store, list, position).is_ok() {
                        self.carried.retain(|p| *p != position);
                        let list = list.as_str();
                        self.notes.push(format!(
                            "position {position} of {list} given up: nothing stored since {ms}"
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
/// position's create stored nothing: a void record at `pet:{id}`, or a
/// slot naming no pet (`0`).
fn seal<S: KvStore>(store: &S, list: ListName, position: i64) -> Result<(), ApiError> {
    let void = Pending::void(position).encode();
    let Some(status) = list.status() else {
        return Ok(store.set(&pet_key(position), &void)?);
    };
    let slot = slot_key(status, position);
    match store
        .get(&slot)?
        .map(|id| std::str::from_utf8(&id).ok().and_then(parse_digits))
    {
        None => store.set(&slot, b"0")?,
        Some(Some(id)) if id > 0 => store.set(&pet_key(id), &void)?,
        Some(_) => {}
    }
    Ok(())
}

/// What a position holds.
pub enum Truth {
    Pet(Listed),
    /// No pet, ever: a create given up, withdrawn or sealed.
    Dead,
    /// Issued, not committed; `sealable`: nothing at all is stored there.
    Unresolved {
        sealable: bool,
    },
}

impl Truth {
    /// The key a position is looked up at first.
    pub fn key(list: ListName, position: i64) -> String {
        match list {
            ListName::All => pet_key(position),
            ListName::Status(status) => slot_key(status, position),
        }
    }

    /// Fetches the truth at `keys` ahead (of a status: the slots, then the
    /// pets they name).
    pub fn fetch<S: KvStore>(
        reader: &mut Reader<'_, S>,
        list: ListName,
        keys: Vec<String>,
    ) -> Result<(), ApiError> {
        reader.fetch(keys.clone())?;
        if list != ListName::All {
            let ids = keys.iter().filter_map(|slot| reader.peek(slot));
            let ids = ids.filter_map(|id| std::str::from_utf8(id).ok().and_then(parse_digits));
            let pets = ids.filter(|id| *id > 0).map(pet_key).collect();
            reader.fetch(pets)?;
        }
        Ok(())
    }

    pub fn at<S: KvStore>(
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        position: i64,
    ) -> Result<Truth, ApiError> {
        let Some(status) = list.status() else {
            return Truth::record(reader, clock, position, None);
        };
        let key = slot_key(status, position);
        let Some(bytes) = reader.get(&key)? else {
            return Ok(Truth::Unresolved { sealable: true });
        };
        match std::str::from_utf8(&bytes).ok().and_then(parse_digits) {
            Some(0) => Ok(Truth::Dead),
            Some(id) => Truth::record(reader, clock, id, Some(status)),
            None => Err(unreadable(&key)),
        }
    }

    fn record<S: KvStore>(
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        id: i64,
        status: Option<PetStatus>,
    ) -> Result<Truth, ApiError> {
        let key = pet_key(id);
        Ok(match PetRecord::of(&key, reader.get(&key)?)? {
            PetRecord::Absent => Truth::Unresolved { sealable: true },
            PetRecord::Pending(p) if p.dead(clock.now_ms, (clock.lease_ms)()?) => Truth::Dead,
            PetRecord::Pending(_) => Truth::Unresolved { sealable: false },
            record => match record.listed(&key)? {
                Some(pet) if status.is_none_or(|s| pet.status() == Some(s)) => Truth::Pet(pet),
                _ => Truth::Dead,
            },
        })
    }
}
