//! A page's look-ups of the truth: where a piece lacks a position, the pet
//! (`pet:{id}`; for a status, the slot, then the pet), one `get` at a time
//! within the budget, or fetched ahead in batches (DynamoDB).

use crate::errors::ApiError;
use crate::model::{parse_digits, ListName, Pet, PetStatus};
use crate::store::KvStore;

use super::ahead::BATCH_KEYS;
use super::keys::{pet_key, piece_of, slot_key};
use super::list::Walk;
use super::listed::Listed;
use super::piece::{Piece, Stored};
use super::record::PetRecord;

impl<S: KvStore> Walk<'_, S> {
    /// Batched reads, at a gap whose truth was not fetched yet: the truth
    /// of the gaps from `position` on that the page may need, in one
    /// `get-many` (for `all`, the pets; for a status, the slots, then in a
    /// second the pets they name), each spending the budget once. Gaps are
    /// positions up to the counter that their piece does not hold; taken
    /// until the page would be full with the held pets and up to twice as
    /// many gaps as it still needs, so that holes among them cost no
    /// second batch.
    pub(super) fn fetch_truth(&mut self, position: i64, current: &Piece) -> Result<(), ApiError> {
        if !self.reader.batched() || self.reader.holds(&self.truth_key(position)) {
            return Ok(());
        }
        let frontier = self.frontier()?;
        let end = frontier.end().min(self.plan_end);
        // A status page of layout v3 cannot tell which gaps hold its status:
        // it takes every gap of its pieces, up to a batch.
        let need = match self.filter {
            None => self.limit - self.pets.len(),
            Some(_) => BATCH_KEYS,
        };
        let (mut held, mut keys) = (0, Vec::new());
        let mut p = position;
        while p <= end && held < need && held + keys.len() < 2 * need && keys.len() < BATCH_KEYS {
            if !frontier.issued(p) {
                p += 1;
                continue;
            }
            let in_piece = if piece_of(p) == piece_of(position) {
                current.get(p).is_some()
            } else {
                matches!(self.ahead.get(&piece_of(p)), Some(Stored::Found(k)) if k.get(p).is_some())
            };
            if in_piece {
                held += 1;
            } else {
                keys.push(self.truth_key(p));
            }
            p += 1;
        }
        let calls = self.reader.fetch(keys.clone())?;
        self.spend(calls);
        if let ListName::Status(_) = self.list {
            let pets: Vec<String> = keys
                .iter()
                .filter_map(|slot| self.reader.peek(slot))
                .filter_map(|id| std::str::from_utf8(id).ok().and_then(parse_digits))
                .map(pet_key)
                .collect();
            let calls = self.reader.fetch(pets)?;
            self.spend(calls);
        }
        Ok(())
    }

    /// The key a gap at `position` is looked up at first.
    fn truth_key(&self, position: i64) -> String {
        match self.list {
            ListName::All => pet_key(position),
            ListName::Status(status) => slot_key(status, position),
        }
    }

    fn spend(&mut self, calls: usize) {
        self.budget = self.budget.saturating_sub(calls);
    }

    /// The committed pet at a position, from the truth: `pet:{position}` for
    /// `all`; `slot` then `pet` for a status. `None`: a hole (a create that
    /// failed, or one not committed yet). Each `get` spends the budget.
    pub(super) fn committed_at(&mut self, position: i64) -> Result<Option<Listed>, ApiError> {
        let pet = match self.list {
            ListName::All => self.pet(position)?,
            ListName::Status(status) => self.slotted(status, position)?,
        };
        pet.as_ref().map(Listed::of).transpose()
    }

    /// A key of the truth: fetched ahead, or one `get` from the budget.
    fn truth(&mut self, key: &str) -> Result<Option<Vec<u8>>, ApiError> {
        if !self.reader.holds(key) {
            self.spend(1);
        }
        Ok(self.reader.get(key)?)
    }

    fn pet(&mut self, id: i64) -> Result<Option<Pet>, ApiError> {
        let key = pet_key(id);
        let value = self.truth(&key)?;
        PetRecord::of(&key, value)?.pet(&key)
    }

    /// The pet that `slot:{status}:{position}` names, if it is committed.
    fn slotted(&mut self, status: PetStatus, position: i64) -> Result<Option<Pet>, ApiError> {
        let key = slot_key(status, position);
        let Some(bytes) = self.truth(&key)? else {
            return Ok(None);
        };
        let id = std::str::from_utf8(&bytes)
            .ok()
            .and_then(parse_digits)
            .ok_or_else(|| ApiError::Internal(format!("stored value '{key}' is unreadable")))?;
        Ok(self.pet(id)?.filter(|p| p.status == status))
    }
}
