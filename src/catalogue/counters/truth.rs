//! What a position of a counters list holds, looked up in the truth:
//! `pet:{id}`; for a status, the slot, then the pet; one `get` at a time,
//! or fetched ahead in batches (DynamoDB).

use crate::errors::ApiError;
use crate::model::{parse_digits, ListName, PetStatus};
use crate::store::KvStore;

use crate::catalogue::keys::{pet_key, slot_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::pending::Clock;
use crate::catalogue::reader::Reader;
use crate::catalogue::record::{unreadable, PetRecord};

/// What a position of a list holds.
#[derive(Debug, Clone)]
pub enum Truth {
    Pet(Listed),
    /// No pet, ever: a create given up, withdrawn or sealed, or a pending
    /// record too old to be committed.
    Dead,
    /// Issued, not committed: a create still at work, or one that stopped.
    /// `sealable`: nothing at all is stored there yet (no pending record),
    /// so a reader may give it up once it is old.
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
}

impl Truth {
    /// Fetches the truth at `keys` (and, for a status list, the pets its
    /// slots name).
    pub(super) fn fetch<S: KvStore>(
        reader: &mut Reader<'_, S>,
        list: ListName,
        keys: Vec<String>,
    ) -> Result<(), ApiError> {
        reader.fetch(keys.clone())?;
        if let ListName::Status(_) = list {
            let pets: Vec<String> = keys
                .iter()
                .filter_map(|slot| reader.peek(slot))
                .filter_map(|id| std::str::from_utf8(id).ok().and_then(parse_digits))
                .filter(|id| *id > 0)
                .map(pet_key)
                .collect();
            reader.fetch(pets)?;
        }
        Ok(())
    }

    /// What a position holds: for `all`, `pet:{position}`; for a status,
    /// `slot` then `pet`.
    pub(super) fn at<S: KvStore>(
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        position: i64,
    ) -> Result<Truth, ApiError> {
        match list {
            ListName::All => Truth::record(reader, clock, position, None),
            ListName::Status(status) => {
                let key = slot_key(status, position);
                let Some(bytes) = reader.get(&key)? else {
                    return Ok(Truth::Unresolved { sealable: true });
                };
                let id = std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(parse_digits)
                    .ok_or_else(|| unreadable(&key))?;
                if id == 0 {
                    return Ok(Truth::Dead);
                }
                Truth::record(reader, clock, id, Some(status))
            }
        }
    }

    /// What `pet:{id}` says of a position (of a status list: `status`).
    fn record<S: KvStore>(
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        id: i64,
        status: Option<PetStatus>,
    ) -> Result<Truth, ApiError> {
        let key = pet_key(id);
        let value = reader.get(&key)?;
        Ok(match PetRecord::of(&key, value)? {
            PetRecord::Absent => Truth::Unresolved { sealable: true },
            PetRecord::Pending(pending) => {
                if pending.dead(clock.now_ms, (clock.lease_ms)()?) {
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
}
