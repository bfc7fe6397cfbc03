//! A store moved from counters to lanes, one layout holding both parts: its
//! ids up to the move read the counters way, then its lanes; a cursor names
//! its place in either part, or in both while the first still settles.

use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use super::counters::{self, End, Refuse};
use super::created::{Clock, Page};
use super::cursor::{Counted, Laned, Parts};
use super::lanes::{self, Geometry};
use super::piece::write_back;
use super::reader::Reader;
use super::record::SEAL_AFTER_MS;

/// Where a page of a moved store begins: the counters part (none once the
/// ids before the move are walked) and what each lane listed.
fn start(g: &Geometry, parts: &Parts) -> (Option<Counted>, Vec<u64>) {
    let counted = match (&parts.counted, &parts.laned) {
        (None, None) => Some(Counted {
            position: 1,
            ..Counted::default()
        }),
        (counted, _) => counted.clone(),
    };
    let mut from = match &parts.laned {
        Some(Laned { lanes, .. }) => lanes.clone(),
        None => g.rounds_below(counted.as_ref().map(|c| c.position)),
    };
    from.resize(g.width(), 0);
    (counted, from)
}

/// The keys a page reads first: its counters part's, and its lanes'.
pub fn first_keys(g: &Geometry, list: ListName, parts: &Parts, limit: usize) -> Vec<String> {
    let (counted, from) = start(g, parts);
    let mut keys = counted.map_or(Vec::new(), |c| counters::first_keys(list, &c, limit));
    keys.extend(lanes::read_keys(g, list, &from, limit));
    keys
}

/// A page: the counters part up to the move (a status list's up to its
/// counter, which creates of the moment may raise until the move settles),
/// then, with the room left, the lanes.
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    (g, list): (&Geometry, ListName),
    parts: &Parts,
    limit: usize,
    refuse: Refuse,
) -> Result<Page, ApiError> {
    let (counted, mut from) = start(g, parts);
    let settled = clock.now_ms >= g.moved_ms() + SEAL_AFTER_MS;
    let (mut page, mut going_on, mut more) = (Page::default(), None, false);
    if let Some(at) = counted.filter(|_| g.legacy_last() > 0) {
        let end = match list {
            ListName::All => End::Fixed(g.legacy_last()),
            ListName::Status(_) => End::Counter,
        };
        let part = counters::walk(reader, clock, (list, end), &at, limit, refuse)?;
        let done = part.ended && (list == ListName::All || settled) && part.at.carried.is_empty();
        more = !part.ended;
        going_on = (!done).then(|| part.at.clone());
        (page.pets, page.notes) = (part.pets, part.notes);
    }
    if more || page.pets.len() >= limit {
        more = true;
    } else {
        let (mut part, _) =
            lanes::walk(reader, g, list, from, (0, false), limit - page.pets.len())?;
        write_back(reader.store(), &part.writes, false, &mut part.notes);
        (more, from) = (part.more, part.lanes);
        page.pets.extend(part.pets);
        page.notes.extend(part.notes);
    }
    if more || !page.pets.is_empty() {
        let laned = Some(Laned {
            lanes: from,
            word: 0,
        });
        page.next = Some(
            Parts {
                counted: going_on,
                laned,
                placed: None,
            }
            .cursor(),
        );
    }
    Ok(page)
}
