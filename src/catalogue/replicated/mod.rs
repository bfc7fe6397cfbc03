//! The replicated layout, the edge build's: a store without atomics whose
//! replicas apply writes late and in any order (Akamai Functions).
//! docs/replicated-layout.md.

mod create;
mod entry;

use super::created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page};
use super::cursor::{Parts, Placed};
use super::keys::{pet_key, ID_COUNTER};
use super::layout::replicated_mark;
use super::listed::Listed;
use super::reader::{found as found_in, BATCH_KEYS};
use super::record::{listed, PetRecord};
use crate::catalogue::created::Result;
use crate::model::{IdempotencyKey, ListQuery, NewPet};
use crate::platform::Platform;
use crate::retry::{Policy, Retrying};
use crate::store::KvStore;
use create::LANDS_WITHIN_MS;
use entry::Entry;

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
        let horizon = LANDS_WITHIN_MS + self.deployment.settle_ms()?;
        let horizon = clock.now_ms.saturating_sub(horizon);
        page(self.store, horizon, query, parts.placed)
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

/// Pets by creation time then id, created before the `horizon` (now less
/// the commit window and `settle_ms`): one `list-keys`, then `get-many`s.
fn page<S: KvStore>(
    store: &S,
    horizon: u64,
    query: &ListQuery,
    after: Option<Placed>,
) -> Result<Page> {
    let list = query.list();
    let settled = |e: &Entry| e.place.t_ms <= horizon && after.is_none_or(|after| e.place > after);
    let keys = store.list_keys()?;
    let entries = keys.iter().filter_map(|key| Entry::parse(key));
    let mut entries: Vec<Entry> = entries.filter(|e| e.in_list(list) && settled(e)).collect();
    entries.sort_unstable_by_key(|e| e.place);
    entries.truncate(query.limit);
    let keys: Vec<String> = std::iter::once(ID_COUNTER.to_string())
        .chain(entries.iter().map(Entry::key))
        .collect();
    let mut found = Vec::new();
    for chunk in keys.chunks(BATCH_KEYS) {
        found.extend(store.get_many(chunk)?);
    }
    replicated_mark(found_in(&found, ID_COUNTER))?;
    let mut pets = Vec::with_capacity(entries.len());
    for key in &keys[1..] {
        // Listed, not read back: a replica behind its listing.
        if let Some(json) = found_in(&found, key) {
            pets.push(listed(key, json.to_vec())?);
        }
    }
    // The list's end links on too; the empty page ends a walk.
    let next = entries.last().map(|last| last.place.cursor());
    Ok(Page::new(pets, next, Vec::new()))
}
