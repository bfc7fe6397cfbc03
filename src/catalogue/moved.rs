//! A store moved from counters to lanes, one layout holding both parts: the
//! ids up to the move read the counters way, then the lanes.

use super::counters::{self, End};
use super::created::{Clock, Page, Result};
use super::cursor::{Counted, Laned, Parts};
use super::lanes::{self, Geometry};
use super::{reader::Reader, record::SEAL_AFTER_MS};
use crate::{errors::ApiError, model::ListName, store::KvStore};

/// Where a page begins: the counters part (none once walked), the lanes'.
fn start(g: &Geometry, parts: &Parts) -> (Option<Counted>, Vec<u64>) {
    let laned = parts.laned().as_ref();
    let counted = match (parts.counted(), laned) {
        (None, None) => Some(Counted::at(1)),
        (counted, _) => counted.clone(),
    };
    let position = counted.as_ref().map(Counted::position);
    let mut from = laned.map_or_else(|| g.rounds_below(position), |l| l.lanes().to_vec());
    from.resize(g.width(), 0);
    (counted, from)
}

pub fn first_keys(g: &Geometry, list: ListName, parts: &Parts, limit: usize) -> Vec<String> {
    let (counted, from) = start(g, parts);
    let mut keys = counted.map_or(Vec::new(), |c| counters::first_keys(list, &c, limit));
    keys.extend(g.read_keys(list, &from, limit));
    keys
}

/// The counters part up to the move (a status's to its counter, which
/// creates may raise until the move settles), then the lanes.
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    (g, list): (&Geometry, ListName),
    parts: &Parts,
    limit: usize,
) -> Result<Page> {
    let (counted, mut from) = start(g, parts);
    let settled = clock.now_ms >= g.moved_ms() + SEAL_AFTER_MS;
    let (mut page, mut going_on, mut more) = (Page::default(), None, false);
    if let Some(at) = counted.filter(|_| g.legacy_last() > 0) {
        let end = match list {
            ListName::All => End::Fixed(g.legacy_last()),
            ListName::Status(_) => End::Counter,
        };
        // Both ends are known here: the walk never stops for one.
        let walked = counters::walk(reader, clock, (list, end), &at, limit)?;
        let part = walked.ok_or_else(|| ApiError::Internal("a moved store's end".into()))?;
        (going_on, more, page.pets, page.notes) = part.split(list == ListName::All || settled);
    }
    more |= page.pets.len() >= limit;
    if !more {
        let plan = lanes::Plan::walk(list, from, limit - page.pets.len());
        let (part, _) = lanes::walk(reader, g, &plan)?;
        let (pets, lanes, more_lanes, notes) = part.written(reader.store());
        (more, from) = (more_lanes, lanes);
        page.pets.extend(pets);
        page.notes.extend(notes);
    }
    if more || !page.pets.is_empty() {
        page.next = Some(Parts::new(going_on, Some(Laned::new(from, 0))).cursor());
    }
    Ok(page)
}
