//! A replicated create: a random id checked absent, then one `set-many` of
//! its own keys only: no replication order loses an acknowledged pet.

use super::entry::Entry;
use crate::catalogue::created::{failed, Created, Keyed, Result};
use crate::catalogue::record::{encode_pet, first_line, stamped, unreadable};
use crate::catalogue::{cursor::Placed, keys::pet_key, reader::found as found_in, reader::Found};
use crate::{errors::ApiError, model::number, model::NewPet, retry::Retrying, store::KvStore};

/// Ids are drawn in 1 … 2^53 − 1: exact in JavaScript clients.
const ID_BITS: u32 = 53;
/// Draws before a create gives up: only a broken random source gets there.
const DRAWS: usize = 3;
/// How long a create's write may take to land and be acknowledged (ms):
/// pages list only what is older, so no write lands behind a walk.
pub const LANDS_WITHIN_MS: u64 = 1_000;
/// A keyed create's record: `petstore-replicated-key 1 <id>\n<json>`.
pub(crate) const RECORD: &str = "petstore-replicated-key 1 ";

/// The create's place in the lists: its time (the store's clock), and an
/// id drawn at random.
pub fn draw<S: KvStore>(t_ms: u64, store: &Retrying<'_, S>) -> Placed {
    let random = store.random();
    let id = (u64::from_le_bytes(random[..8].try_into().unwrap_or_default()) >> (64 - ID_BITS))
        .max(1) as i64;
    // At least 1: a pet's place, always.
    Placed::new(t_ms, id).unwrap_or_default()
}

/// The keys a create at `drawn` reads first: its `pet:`, the key's record.
pub fn keys_at(drawn: Placed, keyed: Option<&Keyed>) -> Vec<String> {
    let mut keys = vec![pet_key(drawn.id())];
    keys.extend(keyed.map(|k| k.record_key().to_string()));
    keys
}

/// From the first `get-many` (the drawn id's `pet:`, the key's record, with
/// `ctr:id`), one `set-many` (pet, entry, record; the store's `mark` with
/// its first pet); a record found answers its pet once a `get` finds it.
/// An id taken is drawn again (one `get-many` more). Keyed, once per key
/// within a replica's reach; `mark`: the write that makes the store one of
/// this layout, with its first pet. Retried briefly: a failure is an outage
/// or the quota, never a race.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    (mut drawn, mut found): (Placed, Found),
    new: NewPet,
    keyed: Option<&Keyed>,
    mut mark: Option<(String, Vec<u8>)>,
) -> Result<Created> {
    let t_ms = drawn.t_ms();
    for tries in 1..=DRAWS {
        if tries > 1 {
            drawn = draw(t_ms, store);
            found = store.get_many(&keys_at(drawn, keyed))?;
        }
        let (id, key) = (drawn.id(), pet_key(drawn.id()));
        let value = |k: &str| found_in(&found, k);
        if let Some((keyed, bytes)) = keyed.and_then(|k| Some((k, value(k.record_key())?))) {
            let (id, body) = record(bytes).ok_or_else(|| unreadable(keyed.record_key()))?;
            if encode_pet(&keyed.pet(id))? != body {
                return Err(ApiError::IdempotencyKeyReused);
            }
            // Only a pet found is replayed: a `set-many` that stored the
            // record alone made none, and here its pet may not have arrived.
            if store.get(&pet_key(id))?.is_none() {
                return Err(ApiError::KeyedPetNotFound);
            }
            return Ok(Created::Replayed { id, body });
        }
        if value(&key).is_some() {
            continue;
        }
        let pet = new.into_pet(id);
        let json = encode_pet(&pet)?;
        let entry = Entry::created(drawn, pet.status);
        // The record names its time: a page mends a half from either key.
        let mut writes = vec![(key, stamped(t_ms, &json)), (entry.key(), json.clone())];
        if let Some(keyed) = keyed {
            let record = [format!("{RECORD}{id}\n").as_bytes(), &json].concat();
            writes.push((keyed.record_key().to_string(), record));
        }
        writes.extend(mark.take());
        store.set_many(&writes)?;
        let took_ms = store.now_ms().saturating_sub(t_ms);
        if took_ms > LANDS_WITHIN_MS {
            return Err(ApiError::CreateLandedLate {
                id,
                took_ms,
                window_ms: LANDS_WITHIN_MS,
            });
        }
        return Ok(Created::Pet(pet));
    }
    Err(failed("every id drawn was taken"))
}

/// The id and JSON of a keyed create's record, strictly.
fn record(bytes: &[u8]) -> Option<(i64, Vec<u8>)> {
    let (id, body) = first_line(bytes.strip_prefix(RECORD.as_bytes())?)?;
    Some((number(id)?, body.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyed_record_names_its_id_strictly() {
        let good = format!("{RECORD}42\n{{}}");
        assert_eq!(record(good.as_bytes()), Some((42, b"{}".to_vec())));
        for bad in ["+42", "-42", "042", "4 2", "", "42a"] {
            let text = format!("{RECORD}{bad}\n{{}}");
            assert_eq!(record(text.as_bytes()), None, "{bad}");
        }
        assert_eq!(record(b"petstore-replicated-key 2 42\n{}"), None);
    }
}
