//! The counters layout: an id counter, a counter and slots per status; every
//! store of 1.0.0–1.2.0, SQLite, Redis. docs/key-value-layout.md, "The counters layout".

mod carry;
mod create;
mod cursor;
pub mod keyed;
mod repairs;
mod truth;
mod walk;

pub use carry::Part;
pub use cursor::Cursor;
pub use walk::End;

use crate::errors::ApiError;
use crate::model::{self, ListName, NewPet, Pet};
use crate::retry::Retrying;
use crate::store::KvStore;

use super::backend::KvBackend;
use super::created::{Created, Keyed};
use super::layout::{cursor_not_made_here, Layout, Page};
use super::pending::Clock;
use super::reader::Reader;

/// A store of the counters layout: what its counter stood at when read
/// (`None`: no create ran yet).
pub struct Counters {
    backend: KvBackend,
    held: Option<i64>,
}

impl Counters {
    pub fn new(backend: KvBackend, held: Option<i64>) -> Counters {
        Counters { backend, held }
    }

    /// Up to `limit` pets of `list` after `from`, the list ending where
    /// `end` says: the walk's page and its cursor's part.
    pub fn walk<S: KvStore>(
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        from: &Cursor,
        limit: usize,
        end: End,
    ) -> Result<Part, ApiError> {
        walk::page(reader, clock, list, Part::from(from), limit, end)
    }

    /// The keys a page of `list` from `from` reads first.
    pub fn walk_keys(list: ListName, from: &Cursor, limit: usize) -> Vec<String> {
        walk::first_keys(list, &Part::from(from), limit)
    }
}

/// The counters part of `cursor` (none: the walk's start); `None` where the
/// cursor has no counters part and only a lanes part, which says the walk
/// of a moved store was past its counters ids. A lanes part names lanes a
/// counters store does not have: read as empty, as releases before this
/// one read it (any cursor the document's pattern takes is answered).
fn ours(cursor: Option<&model::Cursor>) -> Result<Option<Cursor>, ApiError> {
    match Cursor::read(cursor.map_or("", model::Cursor::as_str)) {
        Some((Some(part), _)) => Ok(Some(part)),
        Some((None, "")) => Ok(Some(Cursor::at(1))),
        Some((None, _)) => Ok(None),
        None => Err(cursor_not_made_here()),
    }
}

impl<S: KvStore> Layout<S> for Counters {
    fn first_keys(
        &self,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Vec<String>, ApiError> {
        Ok(match ours(cursor)? {
            Some(from) => Counters::walk_keys(list, &from, limit),
            None => Vec::new(),
        })
    }

    fn page(
        &self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        // Past the counters ids: the walk has ended.
        let Some(from) = ours(cursor)? else {
            return Ok(Page::default());
        };
        let part = Counters::walk(reader, clock, list, &from, limit, End::Counter)?;
        let next = (!part.ended || !part.pets.is_empty())
            .then(|| model::Cursor::made(part.cursor().encode()));
        Ok(Page {
            pets: part.pets,
            next,
            notes: part.notes,
        })
    }

    fn create(&self, store: &Retrying<'_, S>, new: NewPet) -> Result<Pet, ApiError> {
        create::create(store, new, self.backend.batches())
    }

    fn keyed(&self, store: &Retrying<'_, S>, keyed: &Keyed) -> Result<Created, ApiError> {
        keyed::create(store, keyed, self.backend.claim_by())
    }

    fn health(&self, _: u64) -> Result<String, ApiError> {
        Ok(match self.held {
            None => r#""layout":"none""#.into(),
            Some(_) => r#""layout":"counters""#.into(),
        })
    }
}
