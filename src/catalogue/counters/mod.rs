//! The counters layout: an id counter, a counter and slots per status; every
//! store of 1.0.0–1.2.0, SQLite, Redis. docs/key-value-layout.md.

mod carry;
mod create;
mod keyed;
mod walk;

pub use create::{create, Taken};
pub use keyed::{follow, keyed};
pub use walk::{first_keys, walk, End};

use crate::model::ListName;
use crate::store::KvStore;

use super::created::{Clock, Page, Result};
use super::cursor::{Counted, Parts};
use super::reader::Reader;

/// A page of a counters store, and its cursor; `None` where the walk
/// needed an end it was not given ([`End::Unread`]).
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    (list, end): (ListName, End),
    from: &Counted,
    limit: usize,
) -> Result<Option<Page>> {
    Ok(walk(reader, clock, (list, end), from, limit)?.map(|part| {
        let more = !part.ended || !part.pets.is_empty();
        let at = Counted::new(part.position, part.carried, part.since_s);
        let next = more.then(|| Parts::new(Some(at), None).cursor());
        Page::new(part.pets, next, part.notes)
    }))
}
