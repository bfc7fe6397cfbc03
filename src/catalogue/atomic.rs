//! The default build's catalogue, over a store with atomics: each request's
//! layout decided once, from what the store holds (`layout.rs`), then served
//! by its layouts' modules.

use super::backend::ATOMIC_BATCHES_ESCALATIONS;
use super::created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page, Result};
use super::lanes::{self, Geometry};
use super::layout::{Layout, Word};
use super::{cursor::Parts, keys::pet_key, listed::Listed, reader::Reader, record::PetRecord};
use crate::model::{IdempotencyKey, ListQuery, NewPet};
use crate::{platform::Platform, retry::Retrying, store::KvStore};

pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    deployment: &'a dyn Deployment,
}

impl<'a, S: KvStore + 'a> Catalogue<'a, S> {
    pub fn new(store: &'a S, deployment: &'a dyn Deployment) -> Self {
        Catalogue { store, deployment }
    }

    /// A reader, `ctr:id` as this backend holds it, and the layout the
    /// operator wants where reads are batched (only DynamoDB holds lanes).
    fn reader(&self) -> Result<(Reader<'a, S>, Word<'a, S>, LayoutName)> {
        let word = Word::new(self.store, self.deployment)?;
        let (batched, wanted) = word.expected(self.deployment);
        Ok((Reader::new(self.store, batched), word, wanted))
    }

    /// A pet found is served, whoever wrote it; a miss asks the store's
    /// layout: batched, `ctr:id` and the lanes head that may hold the pet
    /// in one `get-many`; another build's store is refused, not a 404.
    pub fn get_pet(&self, id: i64) -> Result<Option<Listed>> {
        let key = pet_key(id);
        match PetRecord::of(&key, self.store.get(&key)?).and_then(|r| r.listed(&key)) {
            Ok(None) => {}
            found @ Ok(Some(_)) => return found,
            Err(e) => return Err(Word::new(self.store, self.deployment)?.checked(e, None)),
        }
        let ((mut reader, word, wanted), none) = (self.reader()?, Parts::default());
        let heads = |g: Option<Geometry>| g.map_or(Vec::new(), |g| lanes::unstored_keys(&g, id));
        let expected = heads(Layout::expect(&none, wanted, reader.batched()).lanes());
        let Some(g) = Layout::of(word.in_reader(&mut reader, expected)?, &none).lanes() else {
            return Ok(None);
        };
        reader.fetch(heads(Some(g)))?;
        lanes::unstored(&mut reader, &g, id).map_err(|e| word.checked(e, None))
    }

    /// A page. Batched, its first `get-many` reads `ctr:id` and the keys
    /// planned for the layout expected (planned again if the store holds
    /// another); else `ctr:id` is read where the answer needs it: the
    /// unfiltered list's end, an empty page.
    pub fn page(&self, clock: &Clock, query: &ListQuery) -> Result<Page> {
        let parts = Parts::read(query.cursor.as_ref())?;
        let (mut reader, word, wanted) = self.reader()?;
        let (of, mut held) = ((query.list(), &parts, query.limit), None);
        let mut layout = Layout::expect(&parts, wanted, reader.batched());
        if reader.batched() {
            let read = word.in_reader(&mut reader, layout.first_keys(of))?;
            if Layout::of(read, &parts) != layout {
                layout = Layout::of(read, &parts);
                reader.fetch(layout.first_keys(of))?;
            }
            held = Some(read);
        }
        let mut paged = layout.page(&mut reader, (clock, held), of);
        if let Ok(None) = paged {
            held = Some(word.in_reader(&mut reader, Vec::new())?);
            paged = layout.page(&mut reader, (clock, held), of);
        }
        let page = paged.map_err(|e| word.checked(e, None))?;
        let page = page.unwrap_or_default();
        if page.pets.is_empty() && held.is_none() {
            word.in_reader(&mut reader, Vec::new())?;
        }
        Ok(page)
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
        let word = Word::new(self.store, self.deployment)?;
        let wanted = self.deployment.wanted()?;
        let keyed = key.map(|(key, lease)| Keyed::new(key, new.clone(), lease));
        let created = word.create(&store, wanted, (new, keyed.as_ref()));
        created.map_err(|e| match (word.checked(e, Some(wanted)), &keyed) {
            (e, Some(_)) => Keyed::unavailable(e),
            (e, None) => e,
        })
    }

    pub fn health(&self, now_ms: u64) -> Result<String> {
        let (_, word, wanted) = self.reader()?;
        let health = word.health(wanted, now_ms)?;
        Ok(format!(r#"{{"status":"ok",{health}}}"#))
    }
}
