//! Mends what a create's `set-many`, applied in part, left: a pet without
//! its list entry, or an entry without its pet. Each half is written as its
//! create wrote it, so a mend that meets the create's own late write, or
//! another mend, writes the same bytes (docs/replicated-layout.md).

use super::{entry::Entry, pieces::PIECES_WRITTEN};
use crate::catalogue::record::{listed, stamp, stamped};
use crate::catalogue::{created::Result, cursor::Placed, keys::pet_key, reader::found as found_in};
use crate::{catalogue::reader::BATCH_KEYS, model::number, store::KvStore};

/// Writes the halves missing among `keys` (a `list-keys`) of creates made
/// by `horizon`, 10 at most. Returns the store's entries, those written
/// too, and the horizon pieces may be made to: before the first half left
/// for later. A 2.0.0 record names no time: its lone pet is left as it is.
pub fn mend<S: KvStore>(store: &S, keys: &[String], horizon: u64) -> Result<(Vec<Entry>, u64)> {
    let id = |k: &str| number(k.strip_prefix("pet:")?).filter(|id| *id > 0);
    let (mut pets, mut entries) = (Vec::new(), Vec::new());
    for key in keys.iter() {
        match Entry::parse(key) {
            Some(entry) => entries.push(entry),
            None => pets.extend(id(key)),
        }
    }
    let (mut found, mut indexed) = (Ids::new(pets.len()), Ids::new(entries.len()));
    pets.iter().for_each(|id| found.insert(*id));
    entries.iter().for_each(|e| indexed.insert(e.place().id()));
    let mut reads = Vec::new();
    let petless = |e: &&Entry| e.place().t_ms() <= horizon && !found.has(e.place().id());
    entries
        .iter()
        .filter(petless)
        .for_each(|e| reads.push(e.key()));
    let lone = |id: &&i64| !indexed.has(**id);
    pets.iter()
        .filter(lone)
        .for_each(|id| reads.push(pet_key(*id)));
    // The halves missing, each at its create's time.
    let (mut writes, mut times) = (Vec::new(), Vec::new());
    for chunk in reads.chunks(BATCH_KEYS) {
        let found = store.get_many(chunk)?;
        for key in chunk {
            let Some(value) = found_in(&found, key) else {
                continue;
            };
            if let Some(place) = Entry::parse(key).as_ref().map(Entry::place) {
                writes.push((pet_key(place.id()), stamped(place.t_ms(), value)));
                times.push(place.t_ms());
            } else if let Some((t_ms, json)) = stamp(value).filter(|(t, _)| *t <= horizon) {
                let status = listed(key, json.to_vec())?.status();
                let place = id(key).and_then(|id| Placed::new(t_ms, id));
                if let Some(entry) = place.zip(status).and_then(|(p, s)| Entry::new(p, s)) {
                    writes.push((entry.key(), json.to_vec()));
                    times.push(t_ms);
                }
            }
        }
    }
    // Pieces stop before a half left for later: none is made without it.
    let later = times.iter().skip(PIECES_WRITTEN).min();
    let until = later.map_or(horizon, |t| t.saturating_sub(1));
    writes.truncate(PIECES_WRITTEN);
    if !writes.is_empty() {
        store.set_many(&writes)?;
        entries.extend(writes.iter().filter_map(|w| Entry::parse(&w.0)));
    }
    Ok((entries, until))
}

/// A set of ids (never 0): drawn at random, their own low bits spread them
/// over a table twice their number (std's sorts and sets cost kilobytes of
/// module a type).
struct Ids(Vec<i64>);

impl Ids {
    fn new(n: usize) -> Ids {
        Ids(vec![0; (2 * n).next_power_of_two()])
    }

    fn insert(&mut self, id: i64) {
        let i = self.slot(id);
        self.0[i] = id;
    }

    /// Where `id` is, or the free slot it would take.
    fn slot(&self, id: i64) -> usize {
        let mask = self.0.len() - 1;
        let mut i = id as usize & mask;
        while self.0[i] != 0 && self.0[i] != id {
            i = (i + 1) & mask;
        }
        i
    }

    fn has(&self, id: i64) -> bool {
        self.0[self.slot(id)] == id
    }
}
