//! The counters layout: an id counter, a counter and slots per status; every
//! store of 1.0.0–1.2.0, SQLite, Redis. docs/key-value-layout.md, "The
//! counters layout".

mod carry;
mod create;
mod keyed;
mod walk;

pub use carry::Part;
pub use create::{create, Refuse};
pub use keyed::{create as keyed, follow, word};
pub use walk::End;

use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use super::created::{Clock, Page};
use super::cursor::{Counted, Parts};
use super::reader::Reader;

/// The keys a page of `list` from `from` reads first, where reads are batched.
pub fn first_keys(list: ListName, from: &Counted, limit: usize) -> Vec<String> {
    walk::first_keys(list, &Part::at(from), limit)
}

/// A page of a counters store: up to `limit` pets of `list` from `from`,
/// and its cursor.
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    list: ListName,
    from: &Counted,
    limit: usize,
    refuse: Refuse,
) -> Result<Page, ApiError> {
    let part = walk(reader, clock, (list, End::Counter), from, limit, refuse)?;
    let more = !part.ended || !part.pets.is_empty();
    let next = more.then(|| Parts::new(Some(part.counted()), None).cursor());
    Ok(Page {
        pets: part.pets,
        next,
        notes: part.notes,
    })
}

/// Up to `limit` pets of `list` from `from`, the list ending at `end`.
pub fn walk<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    (list, end): (ListName, End),
    from: &Counted,
    limit: usize,
    refuse: Refuse,
) -> Result<Part, ApiError> {
    walk::Walk::new(reader, clock, list, end, refuse, limit, Part::at(from)).page()
}
