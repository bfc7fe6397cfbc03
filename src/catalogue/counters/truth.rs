//! A counters page's look-ups of the truth: where a piece lacks a position,
//! what the position holds (`pet:{id}`; for a status, the slot, then the
//! pet), one `get` at a time, or fetched ahead in batches
//! (DynamoDB).

use crate::errors::ApiError;
use crate::model::{parse_digits, ListName, PetStatus};
use crate::store::KvStore;

use crate::catalogue::keys::{pet_key, piece_of, slot_key};
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::BATCH_KEYS;
use crate::catalogue::record::PetRecord;

use super::walk::{Truth, Walk};

impl<S: KvStore> Walk<'_, '_, '_, S> {
    /// Batched reads, at a gap whose truth was not fetched yet: the truth
    /// of the gaps from `position` on that the page may need, in one
    /// `get-many` (for `all`, the pets; for a status, the slots, then in a
    /// second the pets they name). Gaps are
    /// positions up to the end that their piece does not hold; taken until
    /// the page would be full with the held pets and up to twice as many
    /// gaps as it still needs, so that holes among them cost no second
    /// batch.
    pub(super) fn fetch_truth(&mut self, position: i64, current: &Piece) -> Result<(), ApiError> {
        let key = Truth::key(self.list, position);
        if !self.reader.batched() || self.reader.holds(&key) {
            return Ok(());
        }
        let end = self.last()?;
        let need = self.limit_left().max(1);
        let (mut held, mut keys) = (0, Vec::new());
        let mut p = position;
        while p <= end && held < need && held + keys.len() < 2 * need && keys.len() < BATCH_KEYS {
            let in_piece = if piece_of(p) == piece_of(position) {
                current.get(p).is_some()
            } else {
                self.ahead_holds(p)
            };
            if in_piece {
                held += 1;
            } else {
                keys.push(Truth::key(self.list, p));
            }
            p += 1;
        }
        self.fetch(keys)
    }

    /// Fetches the truth at `keys` (and, for a status list, the pets its
    /// slots name).
    pub(super) fn fetch(&mut self, keys: Vec<String>) -> Result<(), ApiError> {
        self.reader.fetch(keys.clone())?;
        if let ListName::Status(_) = self.list {
            let pets: Vec<String> = keys
                .iter()
                .filter_map(|slot| self.reader.peek(slot))
                .filter_map(|id| std::str::from_utf8(id).ok().and_then(parse_digits))
                .filter(|id| *id > 0)
                .map(pet_key)
                .collect();
            self.reader.fetch(pets)?;
        }
        Ok(())
    }

    /// What a position holds: for `all`, `pet:{position}`; for a status,
    /// `slot` then `pet`.
    pub(super) fn truth_at(&mut self, position: i64) -> Result<Truth, ApiError> {
        match self.list {
            ListName::All => self.record(position, None),
            ListName::Status(status) => {
                let key = slot_key(status, position);
                let Some(bytes) = self.truth(&key)? else {
                    return Ok(Truth::Unresolved { sealable: true });
                };
                let id = std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(parse_digits)
                    .ok_or_else(|| {
                        ApiError::Internal(format!("stored value '{key}' is unreadable"))
                    })?;
                if id == 0 {
                    return Ok(Truth::Dead);
                }
                self.record(id, Some(status))
            }
        }
    }

    /// What `pet:{id}` says of a position (of a status list: `status`).
    fn record(&mut self, id: i64, status: Option<PetStatus>) -> Result<Truth, ApiError> {
        let key = pet_key(id);
        let value = self.truth(&key)?;
        Ok(match PetRecord::of(&key, value)? {
            PetRecord::Absent => Truth::Unresolved { sealable: true },
            PetRecord::Pending(pending) => {
                if pending.dead(self.clock.now_ms, (self.clock.lease_ms)()?) {
                    Truth::Dead
                } else {
                    Truth::Unresolved { sealable: false }
                }
            }
            record => {
                let pet = record
                    .listed(&key)?
                    .ok_or_else(|| ApiError::Internal(key.clone()))?;
                match status {
                    Some(s) if pet.status() != Some(s) => Truth::Dead,
                    _ => Truth::Pet(pet),
                }
            }
        })
    }

    /// A key of the truth: fetched ahead, or one `get`.
    fn truth(&mut self, key: &str) -> Result<Option<Vec<u8>>, ApiError> {
        Ok(self.reader.get(key)?)
    }
}
