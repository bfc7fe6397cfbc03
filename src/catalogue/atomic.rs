//! The default build's catalogue, over a store with atomics: each request
//! resolves the store's layout once (`layout.rs`) and runs on it.

use super::backend::ATOMIC_BATCHES_ESCALATIONS;
use super::created::Result;
use super::created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page};
use super::cursor::Parts;
use super::keys::{pet_key, ID_COUNTER};
use super::layout::{self, Held, Layout};
use super::listed::Listed;
use super::reader::Reader;
use super::record::PetRecord;
use crate::model::{IdempotencyKey, ListQuery, NewPet};
use crate::platform::Platform;
use crate::retry::Retrying;
use crate::store::KvStore;

pub const BUILT: &[LayoutName] = &[LayoutName::Counters, LayoutName::Lanes];

pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    deployment: &'a dyn Deployment,
}

impl<'a, S: KvStore + 'a> Catalogue<'a, S> {
    pub fn new(store: &'a S, deployment: &'a dyn Deployment) -> Self {
        Catalogue { store, deployment }
    }

    /// A reader, and the layout the operator wants where reads are batched
    /// (only DynamoDB may hold lanes: elsewhere the variable is not read).
    fn reader(&self) -> Result<(Reader<'a, S>, LayoutName)> {
        let batched = self.deployment.backend()?.batched_reads();
        let wanted = match batched {
            true => self.deployment.wanted().unwrap_or(LayoutName::Counters),
            false => LayoutName::Counters,
        };
        Ok((Reader::new(self.store, batched), wanted))
    }

    /// One `get` of `pet:{id}`; if absent, with reads batched, the lanes
    /// head that may hold it, read with `ctr:id` in one `get-many`.
    pub fn get_pet(&self, id: i64) -> Result<Option<Listed>> {
        let key = pet_key(id);
        let stored = self.store.get(&key)?;
        if stored.is_some() || !self.deployment.backend()?.batched_reads() {
            return PetRecord::of(&key, stored)?.listed(&key);
        }
        let ((mut reader, wanted), none) = (self.reader()?, Parts::default());
        let expected = Layout::expect(&none, wanted).unstored_keys(id);
        reader.fetch([vec![ID_COUNTER.to_string()], expected].concat())?;
        let layout = Layout::resolve(Held::read(reader.peek(ID_COUNTER))?, &none);
        reader.fetch(layout.unstored_keys(id))?;
        layout.unstored(&mut reader, id)
    }

    /// A page. Reads batched, the first `get-many` reads `ctr:id` and the
    /// keys planned for the layout expected; a page is planned again only
    /// if the store holds another.
    pub fn page(&self, clock: &Clock, query: &ListQuery) -> Result<Page> {
        let (list, limit) = (query.list(), query.limit);
        let parts = Parts::read(query.cursor.as_ref())?;
        // The edge build's cursor: none of its pets are here.
        if parts.placed.is_some() {
            return Ok(Page::default());
        }
        let (mut reader, wanted) = self.reader()?;
        // SQLite and Redis hold counters (lanes are refused there).
        let mut layout = Layout::Counters;
        if reader.batched() {
            layout = Layout::expect(&parts, wanted);
            let plan = layout.plan(list, &parts, limit);
            reader.fetch([&[ID_COUNTER.to_string()], plan.keys()].concat())?;
            let held = Layout::resolve(Held::read(reader.peek(ID_COUNTER))?, &parts);
            if held == layout {
                return layout.page(&mut reader, (clock, plan), (list, &parts), limit);
            }
            layout = held;
        }
        let plan = layout.plan(list, &parts, limit);
        reader.fetch(plan.keys().to_vec())?;
        layout.page(&mut reader, (clock, plan), (list, &parts), limit)
    }

    /// A create, each call retried under the backend's policy; with an
    /// `Idempotency-Key`, exactly once per key.
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created> {
        let backend = self.deployment.backend()?;
        let mut store = Retrying::new(self.store, platform, backend.retry_policy());
        if backend.atomic_batches() {
            store = store.escalating(ATOMIC_BATCHES_ESCALATIONS);
        }
        let layout = (self.deployment.wanted()?, backend);
        let Some((key, lease)) = key else {
            return layout::create(&store, layout, new, None);
        };
        let keyed = Keyed::new(key, new.clone(), lease);
        layout::create(&store, layout, new, Some(&keyed)).map_err(Keyed::unavailable)
    }

    pub fn health(&self, now_ms: u64) -> Result<String> {
        let held = Held::read(self.store.get(ID_COUNTER)?.as_deref())?;
        let layout = Layout::resolve(held, &Parts::default());
        let body = layout.health(self.reader()?.1, now_ms)?;
        Ok(format!(r#"{{"status":"ok",{body}}}"#))
    }
}
