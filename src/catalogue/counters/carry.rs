//! Positions carried by a walk: issued, but their create had not finished
//! when the walk passed them. Each page looks again; one that committed is
//! listed then (after pets with higher ids: a walk lists every pet exactly
//! once, and a client that follows the list's end sees every new pet). A
//! position where nothing at all was stored for long is given up: after a
//! walk carried it for [`SEAL_AFTER_MS`], a reader writes down when it first
//! found it so (`hole:{list}:{position}`, the store's own clock), and
//! [`SEAL_AFTER_MS`] later writes what every reader takes for no pet. No
//! create commits that late: a create gives up its position after
//! [`COMMIT_WITHIN_MS`](crate::catalogue::pending::COMMIT_WITHIN_MS).

use crate::errors::ApiError;
use crate::model::{parse_digits, ListName};
use crate::store::KvStore;

use crate::catalogue::keys::{pet_key, sighting_key, slot_key};
use crate::catalogue::pending::{Pending, SEAL_AFTER_MS};

use super::walk::{Truth, Walk};

impl<S: KvStore> Walk<'_, '_, '_, S> {
    /// Carries `position`: its create has not finished.
    pub(super) fn carry(&mut self, position: i64, sealable: bool) {
        if self.part.carried.is_empty() {
            self.part.since_s = self.clock.now_ms / 1000;
        }
        self.part.carried.push(position);
        if sealable {
            self.sealable.push(position);
        }
    }

    /// The first `count` carried positions (from earlier pages): listed if
    /// they committed since (as the page has room), dropped if given up,
    /// carried on if not.
    pub(super) fn recheck(&mut self, count: usize) -> Result<(), ApiError> {
        let mut carried = std::mem::take(&mut self.part.carried);
        let later = carried.split_off(count.min(carried.len()));
        if carried.is_empty() {
            self.part.carried = later;
            return Ok(());
        }
        if self.reader.batched() {
            let keys = carried.iter().map(|p| Truth::key(self.list, *p)).collect();
            self.fetch(keys)?;
        }
        let since_s = self.part.since_s;
        for position in carried {
            match self.truth_at(position)? {
                Truth::Pet(pet) if self.limit_left() > 0 => self.part.pets.push(pet),
                Truth::Dead => {}
                Truth::Pet(_) => self.part.carried.push(position),
                Truth::Unresolved { sealable } => self.carry(position, sealable),
            }
        }
        self.part.since_s = since_s;
        self.part.carried.extend(later);
        Ok(())
    }

    /// Once the carried positions are old, gives up those where nothing is
    /// stored: each first found so more than [`SEAL_AFTER_MS`] ago by the
    /// store's record of it. Best effort: a failed call leaves it carried.
    pub(super) fn seal_old(&mut self) -> Result<(), ApiError> {
        let now_ms = self.clock.now_ms;
        let old = now_ms / 1000 >= self.part.since_s + SEAL_AFTER_MS / 1000;
        if !old || self.sealable.is_empty() {
            return Ok(());
        }
        let store = self.reader.store();
        for position in std::mem::take(&mut self.sealable) {
            let key = sighting_key(self.list, position);
            let seen = store.get(&key).ok().flatten();
            let seen_ms = seen.and_then(|v| std::str::from_utf8(&v).ok().and_then(parse_digits));
            match seen_ms {
                Some(ms) if now_ms >= ms as u64 + SEAL_AFTER_MS => {
                    if seal(store, self.list, position).is_ok() {
                        self.part.carried.retain(|p| *p != position);
                        self.part.notes.push(format!(
                            "position {position} of {} given up: nothing stored since {ms}",
                            self.list.as_str()
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
