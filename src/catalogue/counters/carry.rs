//! What a counters position holds, looked up in the truth (`pet:{id}`; a
//! status's slot, then its pet); a page of a walk (and its cursor) and the
//! positions it carries: listed once they commit, given up when long empty.

use crate::catalogue::created::{Clock, Page, Result};
use crate::catalogue::keys::{pet_key, sighting_key, slot_key};
use crate::catalogue::record::{unreadable, Pending, PetRecord, SEAL_AFTER_MS};
use crate::catalogue::{cursor::Counted, cursor::Parts, listed::Listed, reader::Reader};
use crate::model::{number, ListName};
use crate::store::KvStore;

pub enum Truth {
    Pet(Listed),
    /// No pet, ever: a create given up, withdrawn or sealed.
    Dead,
    /// Issued, not committed; sealable if nothing at all is stored there.
    Unresolved(bool),
}

impl Truth {
    pub fn key(list: ListName, position: i64) -> String {
        list.status()
            .map_or_else(|| pet_key(position), |s| slot_key(s, position))
    }

    /// Fetches `keys` ahead (a status's slots, then the pets they name).
    pub fn fetch(
        reader: &mut Reader<impl KvStore>,
        list: ListName,
        keys: Vec<String>,
    ) -> Result<()> {
        reader.fetch(keys.clone())?;
        if list != ListName::All {
            let ids = keys.iter().filter_map(|s| id_in(reader.fetched().peek(s)));
            reader.fetch(ids.filter(|id| *id > 0).map(pet_key).collect())?;
        }
        Ok(())
    }

    pub fn at<S: KvStore>(
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        position: i64,
    ) -> Result<Truth> {
        // A status's slot names the pet's id, which the list's status holds.
        let (id, status) = match list.status() {
            None => (position, None),
            Some(status) => {
                let key = slot_key(status, position);
                match reader.get(&key)?.map(|slot| id_in(Some(&slot))) {
                    None => return Ok(Truth::Unresolved(true)),
                    Some(Some(0)) => return Ok(Truth::Dead),
                    Some(Some(id)) => (id, Some(status)),
                    Some(None) => return Err(unreadable(&key)),
                }
            }
        };
        let key = pet_key(id);
        Ok(match PetRecord::of(&key, reader.get(&key)?)? {
            PetRecord::Absent => Truth::Unresolved(true),
            PetRecord::Pending(p) if p.dead(clock.now_ms, (clock.lease_ms)()?) => Truth::Dead,
            PetRecord::Pending(_) => Truth::Unresolved(false),
            record => match record.listed(&key)? {
                Some(pet) if status.is_none_or(|s| pet.status() == Some(s)) => Truth::Pet(pet),
                _ => Truth::Dead,
            },
        })
    }
}

/// The number a slot (an id, `0`: given up) or a `hole:` (Unix ms) holds,
/// strictly: as written, `{n}`.
fn id_in(slot: Option<&[u8]>) -> Option<i64> {
    std::str::from_utf8(slot?).ok().and_then(number)
}

/// A page of a walk: its pets, where the walk goes on (the position, those
/// carried below it, since when: a [`Counted`] once done), whether it ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    pub(super) pets: Vec<Listed>,
    pub(super) position: i64,
    pub(super) carried: Vec<i64>,
    pub(super) since_s: u64,
    pub(super) ended: bool,
    pub(super) notes: Vec<String>,
    /// This page's carried positions where nothing at all is stored.
    sealable: Vec<i64>,
}

impl Part {
    pub fn at(at: &Counted) -> Part {
        Part {
            position: at.position(),
            carried: at.carried().to_vec(),
            since_s: at.since_s(),
            ..Part::default()
        }
    }

    /// A moved store's counters part: where the walk goes on, unless it is
    /// done (at the list's end with nothing carried, and `closed`: no create
    /// can still land behind it); whether the list goes on past it; its pets
    /// and notes.
    pub fn split(self, closed: bool) -> (Option<Counted>, bool, Vec<Listed>, Vec<String>) {
        let done = self.ended && closed && self.carried.is_empty();
        let at = (!done).then(|| Counted::new(self.position, self.carried, self.since_s));
        (at, !self.ended, self.pets, self.notes)
    }

    /// The page of a counters store, and its cursor: on while the list goes
    /// on, or while pages list pets.
    pub fn page(self) -> Page {
        let more = !self.ended || !self.pets.is_empty();
        let at = Counted::new(self.position, self.carried, self.since_s);
        let next = more.then(|| Parts::new(Some(at), None).cursor());
        Page::new(self.pets, next, self.notes)
    }

    pub fn carry(&mut self, position: i64, sealable: bool, clock: &Clock) {
        if self.carried.is_empty() {
            self.since_s = clock.now_ms / 1000;
        }
        self.carried.push(position);
        self.sealable.extend(sealable.then_some(position));
    }

    /// Earlier pages' carried positions (`count`): listed if committed since
    /// (as `limit` has room), dropped if given up, else carried on.
    pub fn recheck<S: KvStore>(
        &mut self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        (count, limit): (usize, usize),
    ) -> Result<()> {
        let mut carried = std::mem::take(&mut self.carried);
        let later = carried.split_off(count.min(carried.len()));
        if reader.batched() {
            let keys = carried.iter().map(|p| Truth::key(list, *p));
            Truth::fetch(reader, list, keys.collect())?;
        }
        let since_s = self.since_s;
        for position in carried {
            match Truth::at(reader, clock, list, position)? {
                Truth::Pet(pet) if self.pets.len() < limit => self.pets.push(pet),
                Truth::Dead => {}
                Truth::Pet(_) => self.carried.push(position),
                Truth::Unresolved(sealable) => self.carry(position, sealable, clock),
            }
        }
        self.since_s = since_s;
        self.carried.extend(later);
        Ok(())
    }

    /// Gives up those where nothing is stored, first found so more than
    /// [`SEAL_AFTER_MS`] ago by the store's clock (`hole:`): a void record,
    /// or a slot `0`, no pet to every reader. A failed call leaves it.
    pub fn seal_old<S: KvStore>(&mut self, store: &S, clock: &Clock, list: ListName) {
        let (now_ms, name) = (clock.now_ms, list.as_str());
        if now_ms / 1000 < self.since_s + SEAL_AFTER_MS / 1000 {
            return;
        }
        for position in std::mem::take(&mut self.sealable) {
            let key = sighting_key(list, position);
            let Some(ms) = id_in(store.get(&key).ok().flatten().as_deref()) else {
                let _ = store.set(&key, now_ms.to_string().as_bytes());
                continue;
            };
            let void = Pending::void(position).encode();
            let sealed = match list.status() {
                _ if now_ms < ms as u64 + SEAL_AFTER_MS => continue,
                None => store.set(&pet_key(position), &void),
                Some(status) => {
                    let slot = slot_key(status, position);
                    match store.get(&slot).map(|id| id.map(|id| id_in(Some(&id)))) {
                        Ok(None) => store.set(&slot, b"0"),
                        Ok(Some(Some(id))) if id > 0 => store.set(&pet_key(id), &void),
                        other => other.map(|_| ()),
                    }
                }
            };
            if sealed.is_ok() {
                self.carried.retain(|p| *p != position);
                let note =
                    format!("position {position} of {name} given up: nothing stored since {ms}");
                self.notes.push(note);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_or_hole_holds_a_number_as_written() {
        assert_eq!(id_in(Some(b"0")), Some(0));
        assert_eq!(id_in(Some(b"1800000000123")), Some(1_800_000_000_123));
        for bad in ["+5", "-1", "05", "00", "", " 5", "5\n"] {
            assert_eq!(id_in(Some(bad.as_bytes())), None, "{bad}");
        }
        assert_eq!(id_in(None), None);
    }
}
