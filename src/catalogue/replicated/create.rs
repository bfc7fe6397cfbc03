//! A replicated create: a random id checked absent, then one `set-many` of its
//! own keys only, so no replication order can lose an acknowledged pet.

use crate::errors::ApiError;
use crate::model::{NewPet, Pet};
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError};

use crate::catalogue::created::{Created, Keyed};
use crate::catalogue::keys::{pet_key, ID_COUNTER};
use crate::catalogue::record::{encode_pet, persisted};

use super::entry::{Entry, Place};
use super::mark::{check_mark, MARK};

/// Ids are drawn in 1 … 2^53 − 1: exact in JavaScript clients.
const ID_BITS: u32 = 53;
/// Draws of an id that a create makes before it gives up (each found
/// taken: with 2^53 ids, only a broken random source gets here).
const DRAWS: usize = 3;
/// How long after it read the clock a create's write may land and still be
/// acknowledged (ms): pages list only what is older than this (and the
/// replication delay and the clocks' skew), so a later write never lands
/// behind a walk; a create slower than this answers 503.
pub const LANDS_WITHIN_MS: u64 = 1_000;

/// First words of a keyed create's record: `petstore-replicated-key 1 <id>\n<json>`.
const RECORD_HEADER: &str = "petstore-replicated-key 1 ";

/// A create: one `get-many` (the drawn id's `pet:`, `ctr:id`), one
/// `set-many` of two writes (three while the store's mark is not yet seen).
pub fn create<S: KvStore>(store: &Retrying<'_, S>, new: NewPet) -> Result<Pet, ApiError> {
    write(store, new, None).map(|(pet, _)| pet)
}

/// A create under an `Idempotency-Key`: the record read with the drawn id;
/// found, the pet it names is answered again; else the create writes the
/// record beside the pet and its entry (three writes).
pub fn keyed<S: KvStore>(store: &Retrying<'_, S>, keyed: &Keyed) -> Result<Created, ApiError> {
    let (pet, replayed) = write(store, keyed.new.clone(), Some(&keyed.record_key))?;
    Ok(match replayed {
        Some((id, body)) => Created::Replayed { id, body },
        None => Created::Pet(pet),
    })
}

type Replay = Option<(i64, Vec<u8>)>;

fn write<S: KvStore>(
    store: &Retrying<'_, S>,
    new: NewPet,
    record: Option<&str>,
) -> Result<(Pet, Replay), ApiError> {
    let t_ms = store.now_ms();
    for _ in 0..DRAWS {
        let random = store.random();
        let id = draw(random);
        let key = pet_key(id);
        let mut keys = vec![key.clone(), ID_COUNTER.to_string()];
        keys.extend(record.map(str::to_string));
        let found = store.get_many(&keys)?;
        let value = |k: &str| found.iter().find(|(f, _)| f == k).map(|(_, v)| v);
        if let Some(bytes) = record.and_then(value) {
            let (id, body) = decode_record(bytes).ok_or_else(|| {
                ApiError::Internal(format!("the record {} is unreadable", keys[2]))
            })?;
            // The key is bound to the pet of its first request: another
            // pet under it is refused, as on every layout.
            let pet = new.into_pet(id);
            if encode_pet(&pet)? != body {
                return Err(ApiError::IdempotencyKeyReused);
            }
            return Ok((pet, Some((id, body))));
        }
        check_mark(value(ID_COUNTER).map(Vec::as_slice))?;
        if value(&key).is_some() {
            continue;
        }
        let pet = new.into_pet(id);
        let json = encode_pet(&pet)?;
        let entry = Entry {
            place: Place { t_ms, id },
            status: pet.status,
        };
        let mut writes = vec![
            (key, persisted(nonce(random), &json)),
            (entry.key(), json.clone()),
        ];
        if let Some(record) = record {
            writes.push((record.to_string(), encode_record(id, &json)));
        }
        if value(ID_COUNTER).is_none() {
            writes.push((ID_COUNTER.to_string(), MARK.as_bytes().to_vec()));
        }
        store.set_many(&writes)?;
        let took = store.now_ms().saturating_sub(t_ms);
        if took > LANDS_WITHIN_MS {
            return Err(ApiError::CreateLandedLate {
                id,
                took_ms: took,
                window_ms: LANDS_WITHIN_MS,
            });
        }
        return Ok((pet, None));
    }
    Err(ApiError::StoreUnavailable(StoreError(format!(
        "{DRAWS} ids drawn were each taken"
    ))))
}

/// An id in 1 … 2^53 − 1 from random bits.
pub fn draw(random: [u8; 16]) -> i64 {
    let mut bits = [0u8; 8];
    bits.copy_from_slice(&random[..8]);
    let id = (u64::from_le_bytes(bits) >> (64 - ID_BITS)) as i64;
    id.max(1)
}

/// Bits of the same draw that name the create (the pet's record keeps
/// them, as the lanes' does).
fn nonce(random: [u8; 16]) -> u64 {
    let mut bits = [0u8; 8];
    bits.copy_from_slice(&random[8..]);
    u64::from_le_bytes(bits)
}

fn encode_record(id: i64, json: &[u8]) -> Vec<u8> {
    let mut out = format!("{RECORD_HEADER}{id}\n").into_bytes();
    out.extend_from_slice(json);
    out
}

fn decode_record(bytes: &[u8]) -> Option<(i64, Vec<u8>)> {
    let rest = bytes.strip_prefix(RECORD_HEADER.as_bytes())?;
    let line = rest.iter().position(|b| *b == b'\n')?;
    let id = std::str::from_utf8(&rest[..line]).ok()?.parse().ok()?;
    Some((id, rest[line + 1..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_drawn_within_53_bits_and_never_0() {
        assert_eq!(draw([0; 16]), 1);
        assert_eq!(draw([0xff; 16]), (1i64 << 53) - 1);
        let record = encode_record(42, br#"{"id":42}"#);
        assert_eq!(decode_record(&record), Some((42, br#"{"id":42}"#.to_vec())));
        assert_eq!(decode_record(b"42"), None);
    }
}
