//! The replicated layout, the edge build's: a store without atomics whose
//! replicas apply writes late and in any order (Akamai Functions).
//! docs/replicated-layout.md.

mod create;
mod entry;
mod mend;
mod pieces;

use super::created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page};
use super::cursor::{Parts, Placed};
use super::keys::{pet_key, ID_COUNTER};
use super::layout::replicated_mark;
use super::listed::Listed;
use super::reader::{found as found_in, BATCH_KEYS};
use super::record::{listed, PetRecord};
use crate::catalogue::created::Result;
use crate::model::{Cursor, IdempotencyKey, ListQuery, NewPet};
use crate::platform::Platform;
use crate::retry::{Policy, Retrying};
use crate::store::KvStore;
use create::LANDS_WITHIN_MS;
use entry::Entry;
use pieces::{make, piece_key, Piece, PIECES_WRITTEN};

pub const BUILT: &[LayoutName] = &[LayoutName::Replicated];

pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    deployment: &'a dyn Deployment,
}

impl<'a, S: KvStore + 'a> Catalogue<'a, S> {
    pub fn new(store: &'a S, deployment: &'a dyn Deployment) -> Self {
        Catalogue { store, deployment }
    }

    pub fn get_pet(&self, id: i64) -> Result<Option<Listed>> {
        let key = pet_key(id);
        PetRecord::of(&key, self.store.get(&key)?)?.listed(&key)
    }

    /// A page of what has settled; the default build's cursors end a walk.
    pub fn page(&self, clock: &Clock, query: &ListQuery) -> Result<Page> {
        let parts = Parts::read(query.cursor.as_ref())?;
        if parts.counted.is_some() || parts.laned.is_some() {
            return Ok(Page::default());
        }
        let (settle_ms, interval) = self.deployment.settle_ms()?;
        let horizon = clock.now_ms.saturating_sub(LANDS_WITHIN_MS + settle_ms);
        // The piece a cursor's word names (`_p<n>`), where its place is.
        let hint = query.cursor.as_ref().and_then(|c| {
            let mut words = c.as_str().split('_').skip(1);
            let word = words.find_map(|w| w.strip_prefix('p'))?;
            Some(crate::model::number(word)? as u64)
        });
        let start = Walk {
            store: self.store,
            horizon,
            query,
        };
        // A cursor without a piece (2.0.0's): its page is made from the entries.
        let n = parts.placed.map_or(Some(0), |_| hint);
        start.pieces(n, parts.placed, interval)
    }

    /// A create; keyed, once per key within a replica's reach. Retried
    /// briefly: a failure is an outage or the quota, never a race.
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created> {
        self.deployment.wanted()?;
        let store = Retrying::new(self.store, platform, Policy::BRIEF);
        let Some((key, lease)) = key else {
            return create::create(&store, new, None);
        };
        let keyed = Keyed::new(key, new.clone(), lease);
        create::create(&store, new, Some(&keyed)).map_err(Keyed::unavailable)
    }

    pub fn health(&self, _now_ms: u64) -> Result<String> {
        replicated_mark(self.store.get(ID_COUNTER)?.as_deref())?;
        self.deployment.settle_ms()?;
        Ok(r#"{"status":"ok","layout":"replicated"}"#.to_string())
    }
}

/// A page's store, the time it lists up to, and what it was asked.
struct Walk<'q, S: KvStore> {
    store: &'q S,
    horizon: u64,
    query: &'q ListQuery,
}

impl<S: KvStore> Walk<'_, S> {
    /// Pets past `after` from piece `n` (the hint) on: one `get-many` of the
    /// mark and pieces `n` and `n + 1`, one of the pets. `list-keys` only to
    /// make pieces (one missing after a full one, or the open one `interval`
    /// behind; mending halves first), or where the pieces do not follow on
    /// from `after` (or no piece is hinted): then the page is made from the
    /// list's entries, as 2.0.0's were.
    fn pieces(&self, hint: Option<u64>, after: Option<Placed>, interval: u64) -> Result<Page> {
        let (list, limit) = (self.query.list(), self.query.limit);
        let mut n = hint.unwrap_or_default();
        let mut keys = vec![ID_COUNTER.to_string()];
        keys.extend(
            hint.into_iter()
                .flat_map(|n| [piece_key(list, n), piece_key(list, n + 1)]),
        );
        let found = self.store.get_many(&keys)?;
        replicated_mark(found_in(&found, ID_COUNTER))?;
        let read = |k: &String| found_in(&found, k).and_then(|b| Piece::decode(list, b));
        let mut pieces: Vec<Option<Piece>> = keys[1..].iter().map(read).collect();
        let (mut shown, mut notes, mut made) = (Vec::new(), Vec::new(), false);
        let (mut at, mut i, mut last) = (after.unwrap_or_default(), 0, n);
        // Up to where every entry was shown or passed; where the chain's
        // next piece starts, if known (the list's start, a full piece's end).
        let (mut covered, mut chain) = (at, (hint == Some(0)).then_some(Placed::default()));
        loop {
            let from = match pieces.get_mut(i).and_then(Option::take) {
                Some(piece) if piece.start <= covered => {
                    let before = shown.len();
                    let past = piece.entries.iter().filter(|e| e.place > at);
                    shown.extend(past.take(limit - before).cloned());
                    if shown.len() > before {
                        (at, last) = (shown[shown.len() - 1].place, n + i as u64);
                    }
                    let stale = piece.made_ms.saturating_add(interval) < self.horizon;
                    if shown.len() == limit || !(piece.full() || stale) {
                        break;
                    }
                    if piece.full() {
                        chain = piece.entries.last().map(|e| e.place);
                        (covered, i) = (covered.max(chain.unwrap_or_default()), i + 1);
                        continue;
                    }
                    Some(piece.start)
                }
                Some(_) => None,
                None => chain,
            };
            if made || (from.is_none() && !shown.is_empty()) {
                break;
            }
            // The keys' strings go once mended and parsed.
            let (entries, horizon) =
                mend::mend(self.store, &self.store.list_keys()?, self.horizon)?;
            let fresh = make(&entries, list, from.unwrap_or_default(), horizon);
            if from.is_none() {
                // The whole list's pieces, read from the one past `at`.
                let past = |p: &Piece| p.entries.last().is_some_and(|e| e.place > at);
                (n, i) = (0, fresh.iter().take_while(|p| p.full() && !past(p)).count());
                pieces.clear();
            } else {
                let writes: Vec<(String, Vec<u8>)> = (fresh.iter().zip(n + i as u64..))
                    .take(PIECES_WRITTEN)
                    .map(|(piece, k)| (piece_key(list, k), piece.encode()))
                    .collect();
                if let Err(e) = self.store.set_many(&writes) {
                    notes.push(format!(
                        "index pieces from {} not written ({e})",
                        writes[0].0
                    ));
                }
                pieces.truncate(i);
            }
            pieces.extend(fresh.into_iter().map(Some));
            made = true;
        }
        self.pets(&shown, last, notes)
    }

    /// The pets of `entries` (a replica behind its listing may miss some),
    /// and the cursor past them, naming piece `last`.
    fn pets(&self, entries: &[Entry], last: u64, notes: Vec<String>) -> Result<Page> {
        let keys: Vec<String> = entries.iter().map(Entry::key).collect();
        let mut found = Vec::new();
        for chunk in keys.chunks(BATCH_KEYS) {
            found.extend(self.store.get_many(chunk)?);
        }
        let mut pets = Vec::with_capacity(entries.len());
        for key in &keys {
            if let Some(json) = found_in(&found, key) {
                pets.push(listed(key, json.to_vec())?);
            }
        }
        // The list's end links on too; the empty page ends a walk.
        let next = entries.last().map(|e| {
            let placed = e.place.cursor();
            Cursor::made(format!("{}_p{last}", placed.as_str()))
        });
        Ok(Page::new(pets, next, notes))
    }
}
