//! The edge build's catalogue, the replicated layout, for a store without
//! atomics whose replicas apply writes late and in any order (Akamai Functions).
//! docs/replicated-layout.md.

mod create;
mod entry;
mod mark;

use crate::errors::ApiError;
use crate::model::{Cursor, IdempotencyKey, ListName, NewPet};
use crate::platform::Platform;
use crate::retry::{Policy, Retrying};
use crate::store::KvStore;

use super::created::{Created, Keyed, Lease};
use super::keys::{pet_key, ID_COUNTER};
use super::layout::{cursor_not_made_here, Deployment, Page};
use super::listed::Listed;
use super::pending::Clock;
use super::reader::BATCH_KEYS;
use super::record::{listed, PetRecord};

use create::LANDS_WITHIN_MS;
use entry::{Entry, Place};
use mark::check_mark;

/// The catalogue over a store, for a deployment.
pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    deployment: &'a dyn Deployment,
}

impl<'a, S: KvStore + 'a> Catalogue<'a, S> {
    pub fn new(store: &'a S, deployment: &'a dyn Deployment) -> Self {
        Catalogue { store, deployment }
    }

    /// The pet with this id, if this replica has it: one `get`.
    pub fn get_pet(&self, id: i64) -> Result<Option<Listed>, ApiError> {
        let key = pet_key(id);
        PetRecord::of(&key, self.store.get(&key)?)?.listed(&key)
    }

    /// Up to `limit` pets of `list` after `cursor`, by creation time then
    /// id, among those created before the horizon (now less the commit
    /// window, the replication delay and the clocks' skew): one
    /// `list-keys`, then the entries shown and `ctr:id` in `get-many`s of
    /// at most 100 keys.
    pub fn page(
        &self,
        clock: &Clock,
        list: ListName,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let after = match cursor.map(Place::of) {
            Some(Some(place)) => Some(place),
            // Another layout's (the document's pattern takes theirs): none
            // of its pets are here, so its walk ends.
            Some(None) if cursor.is_some_and(|c| entry::made_by_other_layouts(c.as_str())) => {
                return Ok(Page::default())
            }
            Some(None) => return Err(cursor_not_made_here()),
            None => None,
        };
        let horizon = clock
            .now_ms
            .saturating_sub(LANDS_WITHIN_MS + self.deployment.settle_ms()?);
        let mut entries: Vec<Entry> = self
            .store
            .list_keys()?
            .iter()
            .filter_map(|key| Entry::parse(key))
            .filter(|e| e.in_list(list) && e.place.t_ms <= horizon)
            .filter(|e| after.is_none_or(|after| e.place > after))
            .collect();
        entries.sort_by_key(|e| e.place);
        entries.truncate(limit);
        let mut keys = vec![ID_COUNTER.to_string()];
        keys.extend(entries.iter().map(Entry::key));
        let mut found = Vec::new();
        for chunk in keys.chunks(BATCH_KEYS) {
            found.extend(self.store.get_many(chunk)?);
        }
        let value = |key: &str| found.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        check_mark(value(ID_COUNTER).map(Vec::as_slice))?;
        let mut pets = Vec::with_capacity(entries.len());
        for entry in &entries {
            let key = entry.key();
            // An entry is never deleted; one listed by `list-keys` and not
            // read back is a replica behind its own listing: not shown.
            if let Some(json) = value(&key) {
                pets.push(listed(&key, json.clone())?);
            }
        }
        // Every page that lists pets links on, the list's end too: a client
        // that keeps a copy requests it later (docs/api.md, "Keeping a copy
        // in sync"); the empty page ends a walk.
        Ok(Page {
            next: entries.last().map(|last| last.place.cursor()),
            pets,
            notes: Vec::new(),
        })
    }

    /// A create; with an `Idempotency-Key`, once per key within a
    /// replica's reach. Failed calls are retried briefly (a failure here is
    /// an outage or the platform's quota, never a race).
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created, ApiError> {
        self.deployment.wanted()?;
        let store = Retrying::new(self.store, platform, Policy::BRIEF);
        let Some((key, lease)) = key else {
            return create::create(&store, new).map(Created::Pet);
        };
        let keyed = Keyed::new(key, new, lease);
        create::keyed(&store, &keyed).map_err(Keyed::unavailable)
    }

    /// What `/v1/health` says of the store (one `get` of `ctr:id`).
    pub fn health(&self, _now_ms: u64) -> Result<String, ApiError> {
        check_mark(self.store.get(ID_COUNTER)?.as_deref())?;
        self.deployment.settle_ms()?;
        Ok(r#"{"status":"ok","layout":"replicated"}"#.to_string())
    }
}
