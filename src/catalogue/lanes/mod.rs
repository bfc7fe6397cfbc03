//! The lanes layout: lanes of ids, as many as the mark says, each a log whose
//! next round a create claims by compare-and-swap of its head; pages merge
//! the lanes. docs/key-value-layout.md, "The lanes layout".

mod blocks;
mod create;
mod geometry;
mod head;
mod keyed;
mod merge;
mod pieces;

pub use create::{create, heads};
pub use geometry::{Geometry, WIDTH};
pub use head::Heads;
pub use keyed::create as keyed;
pub use merge::Part;

use crate::catalogue::created::{Page, Result};
use crate::catalogue::cursor::{Laned, Parts};
use crate::catalogue::keys::{block_key, head_key, pet_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::reader::{Reader, BATCH_KEYS};
use crate::catalogue::record::{listed, PetRecord};
use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use head::Head;

/// A page planned once: where it begins, how it reads (blocks alone; the
/// rounds its cursor says are stored; or the heads), its first keys.
pub struct Plan {
    of: (ListName, usize),
    /// What each lane listed (a cursor of another width is read for the
    /// store's lanes, any it does not name from its start).
    from: Vec<u64>,
    /// Where it begins, if known, and whether blocks should hold it.
    at: (Option<u64>, bool),
    /// The rounds every lane had stored, if the page lies in them.
    stored: Option<u64>,
    keys: Vec<String>,
}

impl Plan {
    pub fn new(g: &Geometry, list: ListName, laned: Option<&Laned>, limit: usize) -> Plan {
        let own = laned.is_none_or(|l| l.lanes.len() == g.width());
        let word = laned.filter(|_| own).map_or(0, |l| l.word);
        let mut from = laned.map_or(Vec::new(), |l| l.lanes.clone());
        from.resize(g.width(), 0);
        let at = own.then(|| blocks::start(list, &from, word));
        let at = at.unwrap_or((None, false));
        let reach = reach(list, &from, word, limit).filter(|_| own);
        let keys = match (at, reach) {
            ((Some(at), true), _) => blocks::keys(list, at, limit),
            _ if list != ListName::All => {
                let wanted = blocks::extended(list, at.0, limit);
                let mut keys = read_keys(g, list, &from, wanted);
                // The blocks of its pets and the next page's: it writes
                // those absent, and its cursor says if the next are there.
                let around = at.0.map_or(Vec::new(), |at| {
                    blocks::keys(list, at, wanted.max(2 * limit))
                });
                if keys.len() + around.len() < BATCH_KEYS {
                    keys.extend(around);
                }
                keys
            }
            // The blocks of the rounds the page reaches; no head.
            (_, Some(last)) => {
                let least = from.iter().copied().min().unwrap_or(0);
                let blocks = g.block(g.id(0, least + 1))..=g.block(g.id(g.width() - 1, last));
                blocks.map(|k| block_key(list, k)).collect()
            }
            _ => read_keys(g, list, &from, limit),
        };
        let stored = reach.map(|_| word);
        Plan {
            of: (list, limit),
            from,
            at,
            stored,
            keys,
        }
    }

    pub fn keys(&self) -> &[String] {
        &self.keys
    }
}

/// The heads' keys, and the pieces a page expects to need.
pub fn read_keys(g: &Geometry, list: ListName, from: &[u64], limit: usize) -> Vec<String> {
    let pieces = pieces::first_keys(g, list, from, limit);
    Heads::keys(g.width()).chain(pieces).collect()
}

/// The last round the unfiltered list's page reaches, if it lies in the
/// rounds up to `stored`.
fn reach(list: ListName, from: &[u64], stored: u64, limit: usize) -> Option<u64> {
    let least = *from.iter().min().filter(|_| list == ListName::All)?;
    let mut entries = 0;
    (least + 1..=stored).find(|round| {
        entries += from.iter().filter(|done| *done < round).count();
        entries >= limit
    })
}

/// The page `plan` planned, and what it learned written back.
pub fn page<S: KvStore>(reader: &mut Reader<'_, S>, g: &Geometry, plan: &Plan) -> Result<Page> {
    let ((list, limit), from, (at, blocks)) = (plan.of, plan.from.clone(), plan.at);
    let served = blocks
        .then(|| blocks::page(reader, g, list, from.clone(), limit))
        .flatten();
    let (part, word) = match served {
        Some(served) => served,
        None if list == ListName::All => walk(reader, g, list, from, plan.stored, limit)?,
        None => {
            let wanted = blocks::extended(list, at, limit);
            let (mut part, rounds) = walk(reader, g, list, from, None, wanted)?;
            let word = blocks::settle(reader, g, list, (at, rounds), &mut part, limit);
            (part, word)
        }
    };
    let (pets, lanes, more, notes) = part.written(reader.store());
    let next = (more || !pets.is_empty()).then(|| Laned::new(lanes, word));
    let next = next.map(|laned| Parts::new(None, Some(laned)).cursor());
    Ok(Page::new(pets, next, notes))
}

/// The lanes' part of a page, and the rounds every lane had stored: within
/// those `stored` says, no head is read, unless an entry is absent there.
pub fn walk<S: KvStore>(
    reader: &mut Reader<'_, S>,
    g: &Geometry,
    list: ListName,
    from: Vec<u64>,
    mut stored: Option<u64>,
    limit: usize,
) -> Result<(Part, u64)> {
    loop {
        let heads = match stored {
            Some(rounds) => Heads::past(*g, rounds),
            None => {
                reader.fetch(read_keys(g, list, &from, limit))?;
                Heads::read(*g, |key| reader.peek(key))?
            }
        };
        let merged = merge::page(reader, &heads, list, from.clone(), limit);
        match (merged, stored) {
            (Ok(part), Some(rounds)) if part.pets.len() == limit => return Ok((part, rounds)),
            (Ok(part), None) => return Ok((part, heads.stored_rounds())),
            (Err(e), None) => return Err(e),
            (Err(e), _) if !matches!(e, ApiError::Internal(_)) => return Err(e),
            _ => stored = None,
        }
    }
}

pub fn unstored_keys(g: &Geometry, id: i64) -> Vec<String> {
    let key = (id >= g.base()).then(|| head_key(g.place(id).0));
    key.into_iter().collect()
}

/// A pet its lane's head holds, not stored yet; a head past its round
/// moved on since, after storing it: read again.
pub fn unstored(
    reader: &mut Reader<impl KvStore>,
    g: &Geometry,
    id: i64,
) -> Result<Option<Listed>> {
    if id < g.base() {
        return Ok(None);
    }
    let (lane, round) = g.place(id);
    let key = head_key(lane);
    let head = Head::decode(&key, reader.get(&key)?.as_deref())?;
    match (head.round(), head.into_last()) {
        (r, Some(last)) if r == round => listed(&key, last.json().to_vec()).map(Some),
        (r, _) if r > round => {
            let key = pet_key(id);
            PetRecord::of(&key, reader.get(&key)?)?.listed(&key)
        }
        _ => Ok(None),
    }
}
