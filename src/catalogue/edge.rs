//! The edge build's catalogue, the replicated layout over a store without
//! atomics: each request reads `ctr:id` with its first keys (`layout.rs`
//! decides what it holds), then the replicated layout serves it.

use super::created::{Clock, Created, Deployment, Keyed, Lease, Page, Result};
use super::{cursor::Parts, keys::pet_key, layout::Word, listed::Listed, record::PetRecord};
use crate::model::{IdempotencyKey, ListQuery, NewPet};
use crate::store::KvStore;
use crate::{catalogue::replicated, platform::Platform, retry::Policy, retry::Retrying};

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
        let key = pet_key(id);
        let found = PetRecord::of(&key, self.store.get(&key)?).and_then(|r| r.listed(&key));
        if !matches!(found, Ok(Some(_))) {
            // A miss, or a record the edge build does not read.
            Word::new(self.store, self.deployment)?.read()?;
        }
        found
    }

    /// A page of what has settled: one `get-many` of `ctr:id` and the
    /// pieces the cursor names; the default build's cursors end a walk.
    pub fn page(&self, clock: &Clock, query: &ListQuery) -> Result<Page> {
        let parts = Parts::read(query.cursor.as_ref())?;
        let settle = self.deployment.settle_ms()?;
        let word = Word::new(self.store, self.deployment)?;
        let keys = word.with(replicated::first_keys(query.list(), &parts));
        let found = self.store.get_many(&keys)?;
        word.found(&found)?;
        replicated::page(self.store, &found, (clock, query, &parts), settle)
    }

    /// A create, keyed or not, retried briefly: a failure is an outage or
    /// the quota, never a race. Its first `get-many` reads `ctr:id` with the
    /// drawn id's keys (the other build's store refused there): a store
    /// that holds nothing yet gets the mark with the pet.
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created> {
        self.deployment.wanted()?;
        let store = Retrying::new(self.store, platform, Policy::BRIEF);
        let keyed = key.map(|(key, lease)| Keyed::new(key, new.clone(), lease));
        let created = (|| {
            let word = Word::new(self.store, self.deployment)?;
            let drawn = replicated::draw(store.now_ms(), &store);
            let found = store.get_many(&word.with(replicated::keys_at(drawn, keyed.as_ref())))?;
            let mark = word.found(&found)?.mark();
            replicated::create(&store, (drawn, found), new, keyed.as_ref(), mark)
        })();
        match keyed {
            Some(_) => created.map_err(Keyed::unavailable),
            None => created,
        }
    }

    pub fn health(&self, _now_ms: u64) -> Result<String> {
        Word::new(self.store, self.deployment)?.read()?;
        self.deployment.settle_ms()?;
        Ok(r#"{"status":"ok","layout":"replicated"}"#.to_string())
    }
}
