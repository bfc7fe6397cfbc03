//! The edge build's catalogue, the replicated layout over a store without
//! atomics: each request reads `ctr:id` with its first keys (`layout.rs`
//! decides what it holds), then the replicated layout serves it.

use super::created::{Clock, Created, Deployment, Keyed, Lease, Page, Result};
use super::cursor::Parts;
use super::keys::pet_key;
use super::layout::Word;
use super::listed::Listed;
use super::record::PetRecord;
use super::replicated;
use crate::model::{IdempotencyKey, ListQuery, NewPet};
use crate::platform::Platform;
use crate::retry::{Policy, Retrying};
use crate::store::KvStore;

pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    deployment: &'a dyn Deployment,
}

impl<'a, S: KvStore + 'a> Catalogue<'a, S> {
    pub fn new(store: &'a S, deployment: &'a dyn Deployment) -> Self {
        Catalogue { store, deployment }
    }

    /// A pet found is served, whoever wrote it; a miss reads `ctr:id`:
    /// another build's store is refused, not answered 404.
    pub fn get_pet(&self, id: i64) -> Result<Option<Listed>> {
        let (key, word) = (pet_key(id), Word::new(self.store, self.deployment)?);
        let stored = self.store.get(&key)?;
        match PetRecord::of(&key, stored).and_then(|r| r.listed(&key)) {
            Ok(None) => word.read().map(|_| None),
            found @ Ok(Some(_)) => found,
            unreadable => word.checked(unreadable, None),
        }
    }

    /// A page of what has settled: one `get-many` of `ctr:id` and the
    /// pieces the cursor names; the default build's cursors end a walk.
    pub fn page(&self, clock: &Clock, query: &ListQuery) -> Result<Page> {
        let parts = Parts::read(query.cursor.as_ref())?;
        let settle = self.deployment.settle_ms()?;
        let word = Word::new(self.store, self.deployment)?;
        let (_, found) = word.with(&replicated::first_keys(query.list(), &parts))?;
        let paged = replicated::page(self.store, &found, (clock, query, &parts), settle);
        word.checked(paged, None)
    }

    /// A create, its first `get-many` of `ctr:id` and the drawn id's keys:
    /// a store that holds nothing yet gets the mark with the pet. Retried
    /// briefly: a failure is an outage or the quota, never a race.
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created> {
        let wanted = self.deployment.wanted()?;
        let store = Retrying::new(self.store, platform, Policy::BRIEF);
        let keyed = key.map(|(key, lease)| Keyed::new(key, new.clone(), lease));
        let word = Word::new(&store, self.deployment)?;
        let draw = replicated::Draw::new(&store, keyed.as_ref());
        let created = word.with(draw.keys()).and_then(|(layout, found)| {
            replicated::create(&store, (draw, found), new, keyed.as_ref(), layout.mark())
        });
        let created = word.checked(created, Some(wanted));
        created.map_err(|e| match keyed {
            Some(_) => Keyed::unavailable(e),
            None => e,
        })
    }

    pub fn health(&self, _now_ms: u64) -> Result<String> {
        Word::new(self.store, self.deployment)?.read()?;
        self.deployment.settle_ms()?;
        Ok(r#"{"status":"ok","layout":"replicated"}"#.to_string())
    }
}
