//! The counters layout: an id counter, a counter and slots per status; every
//! store of 1.0.0–1.2.0, SQLite, Redis. docs/key-value-layout.md.

mod carry;
mod create;
mod keyed;
mod walk;

pub use create::{create, Refuse};
pub use keyed::{create as keyed, follow, word};
pub use walk::{first_keys, walk, End};

use crate::catalogue::created::Result;
use crate::model::ListName;
use crate::store::KvStore;

use super::created::{Clock, Page};
use super::cursor::{Counted, Parts};
use super::reader::Reader;

/// A page of a counters store, and its cursor.
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    list: ListName,
    from: &Counted,
    limit: usize,
    refuse: Refuse,
) -> Result<Page> {
    let part = walk(reader, clock, (list, End::Counter), from, limit, refuse)?;
    let more = !part.ended || !part.pets.is_empty();
    let next = more.then(|| Parts::new(Some(part.at), None).cursor());
    Ok(Page::new(part.pets, next, part.notes))
}
