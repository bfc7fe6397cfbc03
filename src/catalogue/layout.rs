//! The one place a store's layout is decided, the only code that reads or
//! writes `ctr:id` or names a layout: what it holds, read strictly, becomes
//! one [`Layout`] a request; a store not served, a typed [`Refusal`].

use super::created::{Deployment, LayoutName, Result, CATALOGUE_LAYOUT};
use super::keys::{decode_counter, ID_COUNTER};
use super::reader::found as found_in;
use super::{backend::KvBackend, cursor::Parts, lanes::Geometry, refusal::Refusal, replicated};
use crate::errors::{ApiError, Misconfiguration};
use crate::store::KvStore;
#[cfg(not(feature = "edge"))]
use {
    super::backend::{shows_dynamodb, shows_sqlite_locked},
    super::counters::{self, End, Taken},
    super::created::{failed, Clock, Created, Keyed, Page},
    super::lanes::{self, Heads, WIDTH},
    super::{cursor::Counted, moved, reader::Reader},
    crate::{model::ListName, model::NewPet, retry::Retrying, store::SwapReport},
};

/// This build's layouts: the edge build imports no atomics.
#[cfg(not(feature = "edge"))]
pub const BUILT: &[LayoutName] = &[LayoutName::Counters, LayoutName::Lanes];
#[cfg(feature = "edge")]
pub const BUILT: &[LayoutName] = &[LayoutName::Replicated];
const EDGE: bool = cfg!(feature = "edge");

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        let (variable, why) = (CATALOGUE_LAYOUT, refusal.to_string());
        ApiError::Unserviceable(Misconfiguration { variable, why })
    }
}

/// What `ctr:id` holds, read strictly: a format refused is never misread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Nothing,
    Counter(i64),
    Lanes(Geometry),
    Replicated,
}

impl Held {
    /// Each layout's module reads its own mark; a counter is 8 bytes on
    /// SQLite, decimal elsewhere. What this build does not serve is refused.
    fn read(word: Option<&[u8]>, backend: KvBackend) -> Result<Held, Refusal> {
        let Some(w) = word.map(<[u8]>::to_vec) else {
            return Ok(Held::Nothing);
        };
        if EDGE {
            let theirs = decode_counter(&w).is_some() || w.starts_with(Geometry::MARK.as_bytes());
            return match (w == replicated::MARK, theirs) {
                (true, _) => Ok(Held::Replicated),
                (_, true) => Err(Refusal::OtherBuild(w, EDGE)),
                _ => Err(Refusal::Unknown(w, EDGE)),
            };
        }
        match (decode_counter(&w), Geometry::from_mark(&w)) {
            (Some(n), _) => Ok(Held::Counter(n)),
            (_, Some(g)) if backend.put_if_absent() => Ok(Held::Lanes(g)),
            (_, Some(_)) => Err(Refusal::lanes_on(w)),
            _ if w == replicated::MARK => Err(Refusal::OtherBuild(w, EDGE)),
            _ => Err(Refusal::Unknown(w, EDGE)),
        }
    }
}

/// A request's layout: the store's, or, where it holds none, the operator's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    Empty,
    Counters,
    Lanes(Geometry),
    /// Moved from counters to lanes (or read with a counters cursor).
    Moved(Geometry),
    Replicated,
}

impl Layout {
    /// A lanes store is moved once moved, or to a cursor's counters part.
    pub fn of(held: Held, parts: &Parts) -> Layout {
        match held {
            Held::Nothing => Layout::Empty,
            Held::Counter(_) => Layout::Counters,
            Held::Lanes(g) if g.moved() || parts.counted().is_some() => Layout::Moved(g),
            Held::Lanes(g) => Layout::Lanes(g),
            Held::Replicated => Layout::Replicated,
        }
    }

    /// The edge build's mark, written with a new store's first pet.
    #[cfg(feature = "edge")]
    pub fn mark(&self) -> Option<(String, Vec<u8>)> {
        (*self == Layout::Empty).then(|| (ID_COUNTER.to_string(), replicated::MARK.to_vec()))
    }
}

#[cfg(not(feature = "edge"))]
impl Layout {
    /// Before `ctr:id` is read: unbatched, counters; else the cursor's, else the operator's.
    pub fn expect(parts: &Parts, wanted: LayoutName, batched: bool) -> Layout {
        let width = parts.laned().as_ref().map_or(WIDTH, |l| l.lanes().len());
        let assumed = Geometry::after(width, 0, 0);
        match (parts.counted(), parts.laned(), wanted) {
            _ if !batched => Layout::Counters,
            (Some(_), Some(_), _) | (Some(_), None, LayoutName::Lanes) => Layout::Moved(assumed),
            (_, Some(_), _) | (None, None, LayoutName::Lanes) => Layout::Lanes(assumed),
            _ => Layout::Counters,
        }
    }

    /// A counters walk's start: the cursor's counters part, or the list's
    /// where it names no other (a lanes part alone on a counters store, or
    /// the edge build's place: its walk has ended).
    fn counted(&self, parts: &Parts) -> Option<Counted> {
        match (self, parts.counted(), parts.laned(), parts.placed()) {
            (Layout::Counters, Some(from), ..) => Some(from.clone()),
            (Layout::Counters, None, None, None) => Some(Counted::at(1)),
            _ => None,
        }
    }

    /// The keys a page's first `get-many` reads (a lanes page's planned
    /// again by [`Layout::page`], from the same parts).
    pub fn first_keys(&self, (list, parts, limit): (ListName, &Parts, usize)) -> Vec<String> {
        let laned = parts.laned().as_ref();
        match (self, self.counted(parts)) {
            (Layout::Lanes(g), _) => lanes::Plan::new(g, list, laned, limit).keys().to_vec(),
            (Layout::Moved(g), _) => moved::first_keys(g, list, parts, limit),
            (_, Some(from)) => counters::first_keys(list, &from, limit),
            _ => Vec::new(),
        }
    }

    /// The page; `None` where a counters walk of the unfiltered list needs
    /// its end, the counter in `ctr:id`, not read yet (`held`).
    pub fn page<S: KvStore>(
        &self,
        reader: &mut Reader<'_, S>,
        (clock, held): (&Clock, Option<Held>),
        (list, parts, limit): (ListName, &Parts, usize),
    ) -> Result<Option<Page>> {
        let end = match (list, held) {
            (ListName::Status(_), _) => End::Counter,
            (_, Some(Held::Counter(last))) => End::Fixed(last),
            (_, held) => held.map_or(End::Unread, |_| End::Fixed(0)),
        };
        let laned = parts.laned().as_ref();
        Ok(Some(match (self, self.counted(parts)) {
            (Layout::Moved(g), _) => moved::page(reader, clock, (g, list), parts, limit)?,
            (Layout::Lanes(g), _) => {
                lanes::page(reader, g, &lanes::Plan::new(g, list, laned, limit))?
            }
            (_, Some(from)) => {
                let walked = counters::walk(reader, clock, (list, end), &from, limit)?;
                return Ok(walked.map(|part| part.page()));
            }
            _ => Page::default(),
        }))
    }

    /// A lanes store's geometry: its heads may hold pets not stored yet.
    pub fn lanes(&self) -> Option<Geometry> {
        match self {
            Layout::Lanes(g) | Layout::Moved(g) => Some(*g),
            _ => None,
        }
    }
}

/// `ctr:id`, as this build reads and writes it on this backend.
pub struct Word<'a, S: KvStore> {
    store: &'a S,
    backend: KvBackend,
}

impl<'a, S: KvStore> Word<'a, S> {
    pub fn new(store: &'a S, deployment: &dyn Deployment) -> Result<Word<'a, S>> {
        let backend = (!EDGE)
            .then(|| deployment.backend())
            .transpose()?
            .unwrap_or(KvBackend::Spin);
        Ok(Word { store, backend })
    }

    /// What `word` says, or why this build refuses it. On SQLite a counter
    /// is 8 bytes; in text, an undeclared DynamoDB's (it refuses `""`).
    pub fn held(&self, word: Option<&[u8]>) -> Result<Held> {
        let held = Held::read(word, self.backend)?;
        let text = word.filter(|w| !EDGE && w.len() != 8 && self.backend == KvBackend::Spin);
        let sqlite = || self.store.get("").is_ok();
        match (held, text) {
            (Held::Counter(_), Some(w)) if sqlite() => Err(Refusal::not_sqlite(w.to_vec()).into()),
            _ => Ok(held),
        }
    }

    /// `ctr:id` read alone.
    pub fn read(&self) -> Result<Held> {
        self.held(self.store.get(ID_COUNTER)?.as_deref())
    }

    /// `ctr:id` and `keys`, for one `get-many`.
    pub fn with(&self, mut keys: Vec<String>) -> Vec<String> {
        keys.insert(0, ID_COUNTER.to_string());
        keys
    }

    /// The layout `ctr:id` says, in what a `get-many` [`Word::with`] found.
    #[cfg(feature = "edge")]
    pub fn found(&self, found: &[(String, Vec<u8>)]) -> Result<Layout> {
        let held = self.held(found_in(found, ID_COUNTER))?;
        Ok(Layout::of(held, &Parts::default()))
    }
}

#[cfg(not(feature = "edge"))]
impl<'a, S: KvStore> Word<'a, S> {
    /// Whether reads are batched, and the layout expected: then the operator's.
    pub fn expected(&self, deployment: &dyn Deployment) -> (bool, LayoutName) {
        let batched = self.backend.batched_reads();
        let wanted = batched.then(|| deployment.wanted().ok()).flatten();
        (batched, wanted.unwrap_or(LayoutName::Counters))
    }

    /// A record no layout of this build writes (500): `ctr:id` may say why.
    pub fn checked(&self, error: ApiError, writes: Option<LayoutName>) -> ApiError {
        let ApiError::Internal(why) = error else {
            return error;
        };
        match (self.read(), writes) {
            (Err(refusal @ ApiError::Unserviceable(_)), _) => refusal,
            (Ok(Held::Lanes(_)), Some(w)) if w != LayoutName::Lanes => Refusal::not_lanes().into(),
            _ => ApiError::Internal(why),
        }
    }

    /// Read with `keys`: one `get-many` batched, else one `get` (kept).
    pub fn in_reader(&self, reader: &mut Reader<'a, S>, keys: Vec<String>) -> Result<Held> {
        reader.fetch(self.with(keys))?;
        self.held(reader.get(ID_COUNTER)?.as_deref())
    }

    /// A create on the operator's layout, the store's or nothing yet; on
    /// SQLite, `ctr:id` read before its `increment` can break the store.
    pub fn create(
        &self,
        store: &Retrying<'_, S>,
        wanted: LayoutName,
        (new, keyed): (NewPet, Option<&Keyed>),
    ) -> Result<Created> {
        let (laned, atomic) = (wanted == LayoutName::Lanes, self.backend.atomic_batches());
        if !laned && self.backend == KvBackend::Spin {
            self.held(store.get(ID_COUNTER)?.as_deref())?;
        }
        let (heads, take) = (&|| self.heads(store), &|| self.take_id(store));
        match (laned, keyed) {
            (true, None) => lanes::create(store, heads()?, new).map(Created::Pet),
            (false, None) => take()?.create(store, new, atomic).map(Created::Pet),
            (true, Some(keyed)) => lanes::keyed(store, keyed, heads),
            (false, Some(keyed)) => counters::keyed(store, keyed, self.backend, take),
        }
    }

    /// An id from `ctr:id`'s counter; a failure no race read what it holds.
    fn take_id(&self, store: &Retrying<'_, S>) -> Result<Taken> {
        let (mut backoff, mut looked, started_ms) = (store.backoff(), false, store.now_ms());
        loop {
            let e = match store.inner().increment(ID_COUNTER, 1) {
                Ok(id) => return Ok(Taken::new(id, started_ms)),
                Err(e) => e,
            };
            // `ctr:id` read once, where the failure may be its value: lanes are refused.
            let look = !looked && !shows_dynamodb(&e) && !shows_sqlite_locked(&e);
            let word = look.then(|| store.inner().get(ID_COUNTER).ok()).flatten();
            looked |= word.is_some();
            if let Some(Held::Lanes(_)) = word.map(|w| self.held(w.as_deref())).transpose()? {
                return Err(Refusal::not_lanes().into());
            }
            store.learn(&e, &mut backoff);
            if !backoff.wait() {
                return Err(ApiError::StoreUnavailable(e));
            }
        }
    }

    /// The mark and the heads, a lanes create's first read: one `get-many`. A
    /// store not of lanes yet is claimed or moved first, by compare-and-swap.
    fn heads(&self, store: &Retrying<'_, S>) -> Result<Heads> {
        let found = store.get_many(&self.with(Heads::keys(WIDTH).collect()))?;
        let (mut held, mut backoff) = (self.held(found_in(&found, ID_COUNTER))?, store.backoff());
        let g = loop {
            let (cas, word) = match held {
                Held::Lanes(g) => break g,
                _ => store.cas_begin(ID_COUNTER)?,
            };
            let g = match self.held(word.as_deref())? {
                Held::Lanes(g) => break g,
                Held::Counter(last) => Geometry::after(WIDTH, last, store.now_ms()),
                _ => Geometry::after(WIDTH, 0, 0),
            };
            if let Ok(SwapReport::Swapped) = store.cas_swap(cas, &g.mark()) {
                break g;
            }
            // Lost, or not known: the key decides (another's move is ours).
            held = self.held(store.get(ID_COUNTER)?.as_deref())?;
            if !matches!(held, Held::Lanes(_)) && !backoff.wait() {
                return Err(failed("the move to lanes did not land"));
            }
        };
        let heads = Heads::read(g, |key| found_in(&found, key))?;
        match g.width() > WIDTH {
            true => lanes::heads(store, &heads),
            false => Ok(heads),
        }
    }

    /// What `/v1/health` says after `"status":"ok",`, or why not.
    pub fn health(&self, wanted: LayoutName, now_ms: u64) -> Result<String> {
        let lanes = wanted == LayoutName::Lanes;
        Ok(match self.read()? {
            Held::Nothing => r#""layout":"none""#.into(),
            Held::Counter(_) if lanes => r#""layout":"counters","move":{"from":"counters","to":"lanes","state":"waiting for the next create"}"#.into(),
            Held::Lanes(_) if !lanes => return Err(Refusal::not_lanes().into()),
            Held::Lanes(g) => format!(r#""layout":"lanes",{}"#, g.health(now_ms)),
            _ => r#""layout":"counters""#.into(),
        })
    }
}
