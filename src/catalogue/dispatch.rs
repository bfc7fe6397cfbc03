//! The default build's catalogue: the one place that chooses among its
//! layouts (`counters`, `lanes`, `moved`), from what a request reads anyway,
//! and calls the chosen one through [`Layout`]. docs/key-value-layout.md.

use crate::errors::ApiError;
use crate::model::{Cursor, IdempotencyKey, ListName, NewPet};
use crate::platform::Platform;
use crate::retry::Retrying;
use crate::store::KvStore;

use super::backend::{self, Batches, Reads};
use super::counters::{self, Counters};
use super::created::{Created, Keyed, Lease};
use super::keys::{decode_counter, pet_key, ID_COUNTER};
use super::lanes::{self, Geometry, Lanes};
use super::layout::{unknown_format, Deployment, Layout, LayoutName, Page};
use super::listed::Listed;
use super::moved::{Moved, ToMove};
use super::pending::Clock;
use super::reader::Reader;
use super::record::PetRecord;

/// The catalogue over a store, for a deployment.
pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    deployment: &'a dyn Deployment,
}

/// What a store holds, as far as a request knows: what `ctr:id` says
/// (nothing, a counter, the lanes' mark), or, before it is read, what the
/// request's cursor says: whether it has a counters part, and the lanes
/// of its lanes part.
enum Held {
    Nothing,
    Counter(i64),
    Mark(Geometry),
    Expected(bool, Option<usize>),
}

impl Held {
    /// What `ctr:id` says (`None`: absent); a format this release does not
    /// read is refused, never misread.
    fn read(word: Option<&[u8]>) -> Result<Held, ApiError> {
        let Some(bytes) = word else {
            return Ok(Held::Nothing);
        };
        Geometry::from_mark(bytes)
            .map(Held::Mark)
            .or_else(|| decode_counter(bytes).filter(|n| *n >= 0).map(Held::Counter))
            .ok_or_else(|| unknown_format(bytes))
    }

    /// What a request expects of the store before it reads `ctr:id`: its
    /// cursor's parts (a cursor no layout made is a 400).
    fn expected(cursor: Option<&Cursor>) -> Result<Held, ApiError> {
        let text = cursor.map_or("", Cursor::as_str);
        let (counters, rest) = counters::Cursor::read(text).ok_or_else(Cursor::malformed)?;
        let lanes = lanes::Cursor::read(rest).ok_or_else(Cursor::malformed)?;
        Ok(Held::Expected(
            counters.is_some(),
            lanes.map(|l| l.lanes().len()),
        ))
    }
}

impl<'a, S: KvStore + 'a> Catalogue<'a, S> {
    pub fn new(store: &'a S, deployment: &'a dyn Deployment) -> Self {
        Catalogue { store, deployment }
    }

    /// The layout of a store that holds `held`, for the layout the
    /// operator wants: the one place a layout is chosen. Before `ctr:id`
    /// is read, the layout the request expects (its cursor's, else the
    /// operator's), which decides only what it reads first; its create
    /// reads what the store holds, and claims, moves or refuses.
    fn layout(
        &self,
        held: Held,
        cursor: Option<&Cursor>,
    ) -> Result<Box<dyn Layout<S> + 'a>, ApiError> {
        let backend = self.deployment.backend()?;
        // Only a store read in batches (DynamoDB) may hold lanes:
        // configuration refuses them elsewhere, and the variable is not read.
        let wanted = match backend.reads() {
            Reads::Batched => self.deployment.wanted().unwrap_or(LayoutName::Counters),
            Reads::OneByOne => LayoutName::Counters,
        };
        let lanes = |geometry| Lanes::new(geometry, wanted == LayoutName::Lanes);
        let assumed = |width| lanes(Some(Geometry::assumed(width)));
        // A counters part in a lanes store's cursor says which ids were
        // listed (a walk begun before a move, or `c<id>`): read as a moved
        // store's.
        let counters_part = cursor.is_some_and(|c| c.as_str().starts_with('c'));
        Ok(match (held, wanted) {
            (Held::Mark(g), _) if g.moved() || counters_part => {
                Box::new(Moved::new(lanes(Some(g))))
            }
            (Held::Mark(g), _) => Box::new(lanes(Some(g))),
            (Held::Counter(last), LayoutName::Lanes) => {
                Box::new(ToMove::new(backend, last, lanes(None)))
            }
            (Held::Counter(last), LayoutName::Counters) => {
                Box::new(Counters::new(backend, Some(last)))
            }
            (Held::Nothing, LayoutName::Lanes) if counters_part => {
                Box::new(Moved::new(lanes(None)))
            }
            (Held::Nothing, LayoutName::Lanes) => Box::new(lanes(None)),
            (Held::Nothing, LayoutName::Counters) => Box::new(Counters::new(backend, None)),
            (Held::Expected(true, lanes), LayoutName::Lanes)
            | (Held::Expected(true, lanes @ Some(_)), _) => Box::new(Moved::new(assumed(lanes))),
            (Held::Expected(_, Some(width)), _) => Box::new(assumed(Some(width))),
            (Held::Expected(..), LayoutName::Lanes) => Box::new(assumed(None)),
            (Held::Expected(..), LayoutName::Counters) => Box::new(Counters::new(backend, Some(0))),
        })
    }

    /// The pet with this id, if it exists: one `get` of `pet:{id}`. Where
    /// it is absent and reads are batched, what the store's layout holds
    /// elsewhere (a lanes store's newest pets are in their heads), read with
    /// `ctr:id` in one `get-many`.
    pub fn get_pet(&self, id: i64) -> Result<Option<Listed>, ApiError> {
        let key = pet_key(id);
        let stored = self.store.get(&key)?;
        if stored.is_some() || self.deployment.backend()?.reads() == Reads::OneByOne {
            return PetRecord::of(&key, stored)?.listed(&key);
        }
        let mut reader = Reader::new(self.store, Reads::Batched);
        let expected = self.layout(Held::expected(None)?, None)?.unstored_keys(id);
        reader.fetch(
            std::iter::once(ID_COUNTER.to_string())
                .chain(expected)
                .collect(),
        )?;
        let word = reader.peek(ID_COUNTER).map(<[u8]>::to_vec);
        let layout = self.layout(Held::read(word.as_deref())?, None)?;
        reader.fetch(layout.unstored_keys(id))?;
        layout.unstored(&mut reader, id)
    }

    /// Up to `limit` pets of `list` after `cursor`, in id order, on the
    /// layout the store holds; where reads are batched, the first
    /// `get-many` reads `ctr:id` and the keys of the layout the request
    /// expects.
    pub fn page(
        &self,
        clock: &Clock,
        list: ListName,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        // The edge build's cursor (`r…`): none of its pets are here.
        if cursor.is_some_and(|c| c.as_str().starts_with('r')) {
            return Ok(Page::default());
        }
        let mut reader = Reader::new(self.store, self.deployment.backend()?.reads());
        let held = Held::expected(cursor)?;
        if !reader.batched() {
            // SQLite and Redis hold counters only (configuration refuses
            // lanes): a cursor's lanes part names lanes they do not have.
            let counters = self.layout(Held::expected(None)?, None)?;
            return counters.page(&mut reader, clock, list, cursor, limit);
        }
        let expected = self.layout(held, cursor)?;
        let first = expected.first_keys(list, cursor, limit)?;
        reader.fetch(
            std::iter::once(ID_COUNTER.to_string())
                .chain(first)
                .collect(),
        )?;
        let word = reader.peek(ID_COUNTER).map(<[u8]>::to_vec);
        let layout = self.layout(Held::read(word.as_deref())?, cursor)?;
        // What the store's layout reads first and the expected one did
        // not (nothing, when the expectation was right).
        reader.fetch(layout.first_keys(list, cursor, limit)?)?;
        layout.page(&mut reader, clock, list, cursor, limit)
    }

    /// A create on the layout the operator asked for, each call retried
    /// under the backend's policy; with an `Idempotency-Key`, exactly once
    /// per key. The layout reads what the store holds and claims it, moves
    /// it, or refuses, as its create needs.
    pub fn create(
        &self,
        platform: &dyn Platform,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created, ApiError> {
        let backend = self.deployment.backend()?;
        let mut store = Retrying::new(self.store, platform, backend.retry_policy());
        if backend.batches() == Batches::Atomic {
            store = store.escalating(backend::ATOMIC_BATCHES_ESCALATIONS);
        }
        // The operator's layout, strictly (an unusable variable fails creates).
        self.deployment.wanted()?;
        let layout = self.layout(Held::expected(None)?, None)?;
        let Some((key, lease)) = key else {
            return layout.create(&store, new).map(Created::Pet);
        };
        let keyed = Keyed::new(key, new, lease);
        layout.keyed(&store, &keyed).map_err(Keyed::unavailable)
    }

    /// What `/v1/health` says of the store: `{"status":"ok",…}` with its
    /// layout and a move's state (one `get` of `ctr:id`).
    pub fn health(&self, now_ms: u64) -> Result<String, ApiError> {
        let word = self.store.get(ID_COUNTER)?;
        let layout = self.layout(Held::read(word.as_deref())?, None)?;
        Ok(format!(r#"{{"status":"ok",{}}}"#, layout.health(now_ms)?))
    }
}
