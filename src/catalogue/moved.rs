//! Stores between the layouts: one moved from counters to lanes (its ids before
//! the move read the counters way, then its lanes), and one its next create moves.

use crate::errors::ApiError;
use crate::model::{self, ListName, NewPet, Pet};
use crate::retry::Retrying;
use crate::store::KvStore;

use super::backend::KvBackend;
use super::counters::{self, Counters, End};
use super::created::{Created, Keyed};
use super::lanes::{self, Lanes};
use super::layout::{Layout, Page};
use super::listed::Listed;
use super::pending::{Clock, SEAL_AFTER_MS};
use super::reader::Reader;

/// A store moved from counters to lanes.
pub struct Moved {
    lanes: Lanes,
}

/// A store of the counters layout that the next create moves to lanes.
pub struct ToMove {
    counters: Counters,
    lanes: Lanes,
}

impl Moved {
    pub fn new(lanes: Lanes) -> Moved {
        Moved { lanes }
    }

    /// The store's lanes, or those a store not read yet is assumed to have.
    fn geometry(&self) -> lanes::Geometry {
        (self.lanes.geometry()).unwrap_or(lanes::Geometry::assumed(None))
    }
}

impl ToMove {
    pub fn new(backend: KvBackend, last: i64, lanes: Lanes) -> ToMove {
        ToMove {
            counters: Counters::new(backend, Some(last)),
            lanes,
        }
    }
}

/// A moved store's cursor: its counters part (none once the ids before the
/// move are walked), its lanes part (none before the lanes are reached).
fn parts(
    cursor: Option<&model::Cursor>,
) -> Result<(Option<counters::Cursor>, Option<Vec<u64>>), ApiError> {
    let Some(cursor) = cursor else {
        return Ok((Some(counters::Cursor::at(1)), None));
    };
    let (legacy, rest) =
        counters::Cursor::read(cursor.as_str()).ok_or_else(model::Cursor::malformed)?;
    let lanes = lanes::Cursor::read(rest).ok_or_else(model::Cursor::malformed)?;
    Ok((legacy, lanes.map(|l| l.lanes().to_vec())))
}

impl<S: KvStore> Layout<S> for Moved {
    fn first_keys(
        &self,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Vec<String>, ApiError> {
        let (legacy, from) = parts(cursor)?;
        let geometry = self.geometry();
        let position = legacy.as_ref().map(counters::Cursor::position);
        let from = from.unwrap_or_else(|| geometry.rounds_below(position));
        let mut keys = legacy.map_or(Vec::new(), |c| Counters::walk_keys(list, &c, limit));
        keys.extend(Lanes::walk_keys(list, &from, limit));
        Ok(keys)
    }

    fn page(
        &self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let (legacy, from) = parts(cursor)?;
        let geometry = self.geometry();
        let settled = clock.now_ms >= geometry.moved_ms() + SEAL_AFTER_MS;
        let from = from.unwrap_or_else(|| {
            geometry.rounds_below(legacy.as_ref().map(counters::Cursor::position))
        });
        let mut page = Page::default();
        let (mut going_on, mut more) = (None, false);
        if let Some(at) = legacy.filter(|_| geometry.legacy_last() > 0) {
            let end = match list {
                ListName::All => End::Fixed(geometry.legacy_last()),
                ListName::Status(_) => End::Counter,
            };
            let part = Counters::walk(reader, clock, list, &at, limit, end)?;
            let done = part.ended && (list == ListName::All || settled) && part.carried.is_empty();
            more = !part.ended;
            going_on = (!done).then(|| part.cursor());
            page.pets = part.pets;
            page.notes = part.notes;
        }
        let mut walked = from.clone();
        if !more && page.pets.len() < limit {
            let (mut part, _) =
                self.lanes
                    .walk(reader, list, (from, 0), limit - page.pets.len())?;
            part.write(reader.store());
            more = part.more;
            walked = part.lanes;
            page.pets.extend(part.pets);
            page.notes.extend(part.notes);
        } else {
            more = true;
        }
        if more || !page.pets.is_empty() {
            let mut text = going_on.map_or(String::new(), |c| c.encode());
            text.push_str(&lanes::Cursor::new(walked).encode());
            page.next = Some(model::Cursor::made(text));
        }
        Ok(page)
    }

    fn create(&self, store: &Retrying<'_, S>, new: NewPet) -> Result<Pet, ApiError> {
        self.lanes.create(store, new)
    }

    fn keyed(&self, store: &Retrying<'_, S>, keyed: &Keyed) -> Result<Created, ApiError> {
        self.lanes.keyed(store, keyed)
    }

    fn unstored_keys(&self, id: i64) -> Vec<String> {
        Layout::<S>::unstored_keys(&self.lanes, id)
    }

    fn unstored(&self, reader: &mut Reader<'_, S>, id: i64) -> Result<Option<Listed>, ApiError> {
        self.lanes.unstored(reader, id)
    }

    /// The lanes, and the move: `settling` while creates of the moment may
    /// still commit ids from before it, then `done`.
    fn health(&self, now_ms: u64) -> Result<String, ApiError> {
        let geometry = self.geometry();
        if !geometry.moved() {
            return self.lanes.health_json();
        }
        let state = match now_ms >= geometry.moved_ms() + SEAL_AFTER_MS {
            true => "done",
            false => "settling",
        };
        Ok(format!(
            r#"{},"move":{{"from":"counters","to":"lanes","state":"{state}","ids_before":{},"at_ms":{}}}"#,
            self.lanes.health_json()?,
            geometry.legacy_last(),
            geometry.moved_ms()
        ))
    }
}

impl<S: KvStore> Layout<S> for ToMove {
    fn first_keys(
        &self,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Vec<String>, ApiError> {
        Layout::<S>::first_keys(&self.counters, list, cursor, limit)
    }

    fn page(
        &self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        self.counters.page(reader, clock, list, cursor, limit)
    }

    /// Moves the store (its lanes' create makes it one of lanes first).
    fn create(&self, store: &Retrying<'_, S>, new: NewPet) -> Result<Pet, ApiError> {
        self.lanes.create(store, new)
    }

    fn keyed(&self, store: &Retrying<'_, S>, keyed: &Keyed) -> Result<Created, ApiError> {
        self.lanes.keyed(store, keyed)
    }

    fn health(&self, _: u64) -> Result<String, ApiError> {
        Ok(r#""layout":"counters","move":{"from":"counters","to":"lanes","state":"waiting for the next create"}"#.into())
    }
}
