//! The one place a store's layout is chosen, and the only code that branches
//! on layout, format or width: what `ctr:id` holds, read strictly, resolved
//! once per request into a [`Layout`], whose operations call the layouts.

use super::backend::KvBackend;
use super::counters;
use super::created::Result;
use super::created::{Clock, Created, Followed, Keyed, LayoutName, Page, CATALOGUE_LAYOUT};
use super::cursor::{Counted, Parts};
use super::keys::{decode_counter, ID_COUNTER};
use super::lanes::{self, Geometry, Heads};
use super::listed::Listed;
use super::moved;
use super::reader::{found as found_in, Reader};
use super::record::SEAL_AFTER_MS;
use crate::errors::{ApiError, Misconfiguration};
use crate::model::{number, ListName, NewPet};
use crate::retry::Retrying;
use crate::store::KvStore;

/// The lanes a store claimed or moved by this release gets.
const WIDTH: usize = 32;
/// The replicated layout's mark: not a counter, so each build refuses the
/// other's store.
const REPLICATED_MARK: &[u8] = b"petstore-replicated 1";

/// What `ctr:id` holds, read strictly: a format refused is never misread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Nothing,
    Counter(i64),
    Lanes(Geometry),
}

impl Held {
    /// A counter, or `petstore-lanes <format> <base> <last> <moved ms>`:
    /// format 1 of 16 lanes (1.3.0's), 2 of 32, or of `lanes=<n>` (2.0.0).
    pub fn read(word: Option<&[u8]>) -> Result<Held> {
        word.map_or(Ok(Held::Nothing), |bytes| {
            Held::parse(bytes).ok_or_else(|| refusal(bytes))
        })
    }

    fn parse(bytes: &[u8]) -> Option<Held> {
        let lanes = || {
            let text = std::str::from_utf8(bytes).ok()?;
            let mut words = text.strip_prefix("petstore-lanes ")?.split(' ');
            let format = words.next().filter(|f| ["1", "2"].contains(f))?;
            let mut next = || words.next().and_then(number);
            let (base, last, moved) = (next()?, next()?, next()? as u64);
            let mut width = if format == "1" { 16 } else { WIDTH };
            // Words `<name>=<value>` a later 2.x release may add, each once;
            // `lanes=` (format 2) since 2.0.0.
            let lower = |t: &str, digits| {
                let ok = |b: u8| b.is_ascii_lowercase() || (digits && b.is_ascii_digit());
                !t.is_empty() && t.bytes().all(ok)
            };
            let mut named = Vec::new();
            for word in words {
                let (name, value) = word.split_once('=')?;
                (lower(name, false) && lower(value, true) && !named.contains(&name))
                    .then_some(())?;
                if name == "lanes" {
                    width = usize::try_from(number(value).filter(|_| format == "2")?).ok()?;
                }
                named.push(name);
            }
            Geometry::new(width, base, last, moved)
        };
        let counter = decode_counter(bytes).filter(|n| *n >= 0).map(Held::Counter);
        counter.or_else(|| lanes().map(Held::Lanes))
    }
}

/// A lanes store's mark: of 16 and 32 lanes, those every release since
/// 1.3.0 and 1.4.0 reads.
fn mark(g: &Geometry) -> Vec<u8> {
    let (format, more) = match g.width() {
        16 => (1, String::new()),
        WIDTH => (2, String::new()),
        width => (2, format!(" lanes={width}")),
    };
    let (base, last, moved) = (g.base(), g.legacy_last(), g.moved_ms());
    format!("petstore-lanes {format} {base} {last} {moved}{more}").into_bytes()
}

/// `ctr:id` of a replicated store checked (absent, or its mark); the mark.
pub fn replicated_mark(word: Option<&[u8]>) -> Result<&'static [u8]> {
    match word {
        Some(word) if word != REPLICATED_MARK => Err(refusal(word)),
        _ => Ok(REPLICATED_MARK),
    }
}

/// `ctr:id` holds the other build's store, or a later release's format.
fn refusal(word: &[u8]) -> ApiError {
    let shown: String = word
        .iter()
        .take(40)
        .map(|b| *b as char)
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .collect();
    // The edge build does not parse the default build's marks.
    let theirs = match cfg!(feature = "edge") {
        true => decode_counter(word).is_some() || word.starts_with(b"petstore-lanes "),
        false => false,
    };
    let why = match (theirs, word == REPLICATED_MARK) {
        (true, _) => "a store of the default build (spin.toml): serve it with that build",
        (_, true) => "a store of the edge build (spin-edge.toml): serve it with that build",
        _ => "a format no release up to 2.0.0 writes: serve it with the release that wrote it",
    };
    misconfigured(format!("the store's 'ctr:id' holds '{shown}', {why}"))
}

fn misconfigured(why: String) -> ApiError {
    let variable = CATALOGUE_LAYOUT;
    ApiError::Unserviceable(Misconfiguration { variable, why })
}

const NOT_LANES: &str = "'counters', but the store holds the lanes layout, which this \
    instance does not write: set it to 'lanes' (docs/operations.md, \"Moving a store to lanes\")";

/// What a counters create or page does when `ctr:id` is not a counter.
fn refuse(word: &[u8]) -> ApiError {
    match Held::read(Some(word)) {
        Ok(Held::Lanes(_)) => misconfigured(NOT_LANES.into()),
        _ => refusal(word),
    }
}

/// The default build's layouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// No create ran yet.
    Empty,
    Counters,
    Lanes(Geometry),
    /// Moved from counters to lanes (or read with a counters cursor).
    Moved(Geometry),
}

/// A page planned once: the keys its first `get-many` reads, with `ctr:id`.
pub enum Plan {
    Nothing,
    Counters(Counted, Vec<String>),
    Lanes(lanes::Plan),
    Moved(Vec<String>),
}

impl Plan {
    pub fn keys(&self) -> &[String] {
        match self {
            Plan::Nothing => &[],
            Plan::Counters(_, keys) | Plan::Moved(keys) => keys,
            Plan::Lanes(plan) => &plan.keys,
        }
    }
}

impl Layout {
    pub fn resolve(held: Held, parts: &Parts) -> Layout {
        match held {
            Held::Nothing => Layout::Empty,
            Held::Counter(_) => Layout::Counters,
            Held::Lanes(g) if g.moved() || parts.counted.is_some() => Layout::Moved(g),
            Held::Lanes(g) => Layout::Lanes(g),
        }
    }

    /// What a request expects before `ctr:id` is read: its cursor's layout
    /// (as many lanes as it names), else the operator's.
    pub fn expect(parts: &Parts, wanted: LayoutName) -> Layout {
        let width = parts.laned.as_ref().map_or(WIDTH, |l| l.lanes.len());
        let assumed = Geometry::after(width, 0, 0);
        match (&parts.counted, &parts.laned, wanted) {
            (Some(_), Some(_), _) | (Some(_), None, LayoutName::Lanes) => Layout::Moved(assumed),
            (_, Some(_), _) | (None, None, LayoutName::Lanes) => Layout::Lanes(assumed),
            _ => Layout::Counters,
        }
    }

    pub fn plan(&self, list: ListName, parts: &Parts, limit: usize) -> Plan {
        match (self, &parts.counted, &parts.laned) {
            (Layout::Lanes(g), _, laned) => {
                Plan::Lanes(lanes::Plan::new(g, list, laned.as_ref(), limit))
            }
            (Layout::Moved(g), _, _) => Plan::Moved(moved::first_keys(g, list, parts, limit)),
            (Layout::Counters, counted, None) | (Layout::Counters, counted @ Some(_), _) => {
                let from = counted.clone().unwrap_or(Counted::at(1));
                let keys = counters::first_keys(list, &from, limit);
                Plan::Counters(from, keys)
            }
            // A lanes part alone on a counters store: its walk has ended.
            _ => Plan::Nothing,
        }
    }

    pub fn page<S: KvStore>(
        &self,
        reader: &mut Reader<'_, S>,
        (clock, plan): (&Clock, Plan),
        (list, parts): (ListName, &Parts),
        limit: usize,
    ) -> Result<Page> {
        match (self, plan) {
            (Layout::Moved(g), _) => moved::page(reader, clock, (g, list), parts, limit, &refuse),
            (Layout::Lanes(g), Plan::Lanes(plan)) => lanes::page(reader, g, plan),
            (_, Plan::Counters(from, _)) => {
                counters::page(reader, clock, list, &from, limit, &refuse)
            }
            _ => Ok(Page::default()),
        }
    }

    /// Where a pet not in `pet:{id}` yet may be: a lanes store's head.
    pub fn unstored_keys(&self, id: i64) -> Vec<String> {
        match self {
            Layout::Lanes(g) | Layout::Moved(g) => lanes::unstored_keys(g, id),
            _ => Vec::new(),
        }
    }

    pub fn unstored(&self, reader: &mut Reader<impl KvStore>, id: i64) -> Result<Option<Listed>> {
        match self {
            Layout::Lanes(g) | Layout::Moved(g) => lanes::unstored(reader, g, id),
            _ => Ok(None),
        }
    }

    /// What `/v1/health` says after `"status":"ok",`, or why not.
    pub fn health(&self, wanted: LayoutName, now_ms: u64) -> Result<String> {
        let lanes = wanted == LayoutName::Lanes;
        Ok(match self {
            Layout::Empty => r#""layout":"none""#.into(),
            Layout::Counters if lanes => r#""layout":"counters","move":{"from":"counters","to":"lanes","state":"waiting for the next create"}"#.into(),
            Layout::Counters => r#""layout":"counters""#.into(),
            Layout::Lanes(_) | Layout::Moved(_) if !lanes => return Err(misconfigured(NOT_LANES.into())),
            Layout::Lanes(g) | Layout::Moved(g) if !g.moved() => format!(r#""layout":"lanes","lanes":{}"#, g.width()),
            Layout::Lanes(g) | Layout::Moved(g) => format!(
                r#""layout":"lanes","lanes":{},"move":{{"from":"counters","to":"lanes","state":"{}","ids_before":{},"at_ms":{}}}"#,
                g.width(),
                if now_ms >= g.moved_ms() + SEAL_AFTER_MS { "done" } else { "settling" },
                g.legacy_last(),
                g.moved_ms()
            ),
        })
    }
}

/// A create on the layout the operator wants; a lanes key bound before a
/// move is followed the counters way.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    (wanted, backend): (LayoutName, KvBackend),
    new: NewPet,
    keyed: Option<&Keyed>,
) -> Result<Created> {
    match (wanted, keyed) {
        (LayoutName::Lanes, None) => lanes::create(store, heads(store)?, new).map(Created::Pet),
        (LayoutName::Lanes, Some(keyed)) => {
            let older = |bytes: &[u8]| match counters::word(bytes)? {
                0 => Some(Ok(Followed::Abandoned(0))),
                id => Some(counters::follow(store, keyed, id)),
            };
            lanes::keyed(store, keyed, &|| heads(store), &older)
        }
        (_, None) => {
            counters::create(store, new, backend.atomic_batches(), &refuse).map(Created::Pet)
        }
        (_, Some(keyed)) => counters::keyed(store, keyed, backend.put_if_absent(), &refuse),
    }
}

/// The mark and the heads, a lanes create's first read: one `get-many`
/// (one more on a wider store). A store not of lanes yet is claimed new or
/// moved first: its lanes begin past the ids its counter handed out.
fn heads<S: KvStore>(store: &Retrying<'_, S>) -> Result<Heads> {
    let keys = [vec![ID_COUNTER.into()], Heads::keys(WIDTH).collect()].concat();
    let found = store.get_many(&keys)?;
    let value = |key: &str| found_in(&found, key);
    let g = match Held::read(value(ID_COUNTER))? {
        Held::Lanes(g) => g,
        _ => lanes::claim_mark(store, &|word, now_ms| {
            let (g, new) = match Held::read(word)? {
                Held::Lanes(held) => (held, false),
                Held::Counter(last) => (Geometry::after(WIDTH, last, now_ms), true),
                Held::Nothing => (Geometry::after(WIDTH, 0, 0), true),
            };
            Ok((g, new.then(|| mark(&g))))
        })?,
    };
    let heads = Heads::read(g, value)?;
    match g.width() > WIDTH {
        true => lanes::heads(store, &heads),
        false => Ok(heads),
    }
}
