//! The replicated layout, the edge build's: a store without atomics whose
//! replicas apply writes late and in any order (Akamai Functions).
//! docs/replicated-layout.md.

mod create;
mod entry;

use crate::errors::ApiError;
use crate::model::{Cursor, IdempotencyKey, ListName, NewPet};
use crate::platform::Platform;
use crate::retry::{Policy, Retrying};
use crate::store::KvStore;

use super::created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page};
use super::cursor::{Parts, Placed};
use super::keys::{pet_key, ID_COUNTER};
use super::layout::replicated_mark;
use super::listed::Listed;
use super::reader::Reader;
use super::record::{listed, PetRecord};

use create::{Mark, LANDS_WITHIN_MS};
use entry::Entry;

/// The layouts of this build.
pub const BUILT: &[LayoutName] = &[LayoutName::Replicated];

/// The edge build's catalogue over a store, for a deployment.
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

    /// A page of what has settled; the default build's cursors (the
    /// document's pattern takes them) name none of its pets: a walk's end.
    pub fn page(
        &self,
        clock: &Clock,
        list: ListName,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let parts = Parts::read(cursor)?;
        if parts.counted.is_some() || parts.laned.is_some() {
            return Ok(Page::default());
        }
        let settle = (clock.now_ms, self.deployment.settle_ms()?);
        page(
            self.store,
            settle,
            list,
            parts.placed,
            limit,
            &replicated_mark,
        )
    }

    /// A create; with an `Idempotency-Key`, once per key within a replica's
    /// reach. Failed calls are retried briefly: a failure here is an
    /// outage or the platform's quota, never a race.
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created, ApiError> {
        self.deployment.wanted()?;
        let store = Retrying::new(self.store, platform, Policy::BRIEF);
        let Some((key, lease)) = key else {
            return create::create(&store, new, None, &replicated_mark);
        };
        let keyed = Keyed::new(key, new.clone(), lease);
        create::create(&store, new, Some(&keyed), &replicated_mark).map_err(Keyed::unavailable)
    }

    /// What `/v1/health` says of the store (one `get` of `ctr:id`).
    pub fn health(&self, _now_ms: u64) -> Result<String, ApiError> {
        replicated_mark(self.store.get(ID_COUNTER)?.as_deref())?;
        self.deployment.settle_ms()?;
        Ok(r#"{"status":"ok","layout":"replicated"}"#.to_string())
    }
}

/// Up to `limit` pets of `list` after `after`, by creation time then id,
/// among those created before the horizon (now less the commit window and
/// `settle_ms`, the replication delay and the clocks' skew): one
/// `list-keys`, then `ctr:id` and the entries shown in `get-many`s.
fn page<S: KvStore>(
    store: &S,
    (now_ms, settle_ms): (u64, u64),
    list: ListName,
    after: Option<Placed>,
    limit: usize,
    mark: Mark,
) -> Result<Page, ApiError> {
    let horizon = now_ms.saturating_sub(LANDS_WITHIN_MS + settle_ms);
    let mut entries: Vec<Entry> = store
        .list_keys()?
        .iter()
        .filter_map(|key| Entry::parse(key))
        .filter(|e| {
            e.in_list(list) && e.place.t_ms <= horizon && after.is_none_or(|after| e.place > after)
        })
        .collect();
    entries.sort_by_key(|e| e.place);
    entries.truncate(limit);
    let mut reader = Reader::new(store, true);
    reader.fetch(
        std::iter::once(ID_COUNTER.to_string())
            .chain(entries.iter().map(Entry::key))
            .collect(),
    )?;
    mark(reader.peek(ID_COUNTER))?;
    let mut pets = Vec::with_capacity(entries.len());
    for key in entries.iter().map(Entry::key) {
        // An entry is never deleted: one listed by `list-keys` and not read
        // back is a replica behind its own listing, not shown yet.
        if let Some(json) = reader.peek(&key) {
            pets.push(listed(&key, json.to_vec())?);
        }
    }
    // Every page that lists pets links on, the list's end too: a client
    // that keeps a copy requests it later; the empty page ends a walk.
    let next = entries.last().map(|last| {
        Parts {
            placed: Some(last.place),
            ..Parts::default()
        }
        .cursor()
    });
    Ok(Page {
        pets,
        next,
        notes: Vec::new(),
    })
}
