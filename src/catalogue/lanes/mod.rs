//! The lanes layout: lanes of ids (as many as the mark says), each a log
//! whose next round a create claims by compare-and-swap of its head; pages
//! merge the lanes. docs/key-value-layout.md, "The lanes layout".

mod blocks;
mod create;
mod geometry;
mod head;
mod keyed;
mod merge;
mod pieces;

pub use create::{claim_mark, create, heads};
pub use geometry::Geometry;
pub use head::Heads;
pub use keyed::create as keyed;
pub use merge::Part;

use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use crate::catalogue::created::Page;
use crate::catalogue::cursor::{Laned, Parts};
use crate::catalogue::keys::{head_key, pet_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::write_back;
use crate::catalogue::reader::{Reader, BATCH_KEYS};
use crate::catalogue::record::{listed, PetRecord};

use head::Head;

/// A page of a lanes list, planned once: where it begins, how it reads
/// (blocks alone; the lanes within the rounds its cursor says are stored;
/// or the heads), and the keys its first `get-many` reads.
pub struct Plan {
    list: ListName,
    /// What each of the store's lanes listed (a cursor of another width is
    /// read for the store's lanes, any it does not name from its start).
    from: Vec<u64>,
    /// The cursor's word, if it is of this store's width.
    word: u64,
    limit: usize,
    /// Where the page begins in a list read at a known position, and
    /// whether blocks are expected to hold it.
    at: Option<u64>,
    blocks: bool,
    /// The unfiltered list's page lies in rounds every lane had stored.
    past: bool,
    pub keys: Vec<String>,
}

impl Plan {
    pub fn new(g: &Geometry, list: ListName, laned: Option<&Laned>, limit: usize) -> Plan {
        let (mut from, word) = laned.map_or((Vec::new(), 0), |l| (l.lanes.clone(), l.word));
        let own = laned.is_none_or(|l| l.lanes.len() == g.width());
        from.resize(g.width(), 0);
        let word = if own { word } else { 0 };
        let (at, blocks) = match own {
            true => blocks::start(list, &from, word),
            false => (None, false),
        };
        let reach = reach(list, &from, word, limit).filter(|_| own);
        let mut plan = Plan {
            list,
            from,
            word,
            limit,
            at,
            blocks,
            past: reach.is_some(),
            keys: Vec::new(),
        };
        plan.keys = match (at, reach) {
            (Some(at), _) if blocks => blocks::keys(list, at, limit),
            _ if list != ListName::All => {
                let wanted = blocks::extended(list, at, limit);
                let mut keys = read_keys(g, list, &plan.from, wanted);
                // From a known position, the blocks of its pets and the next
                // page's, if they fit: it writes those absent, and its
                // cursor says whether the next are there.
                let around = at.map_or(Vec::new(), |at| {
                    blocks::keys(list, at, wanted.max(2 * limit))
                });
                if keys.len() + around.len() < BATCH_KEYS {
                    keys.extend(around);
                }
                keys
            }
            // The blocks of the rounds the page reaches; no head.
            (_, Some(last)) => {
                let least = plan.from.iter().copied().min().unwrap_or(0);
                (g.block(g.id(0, least + 1))..=g.block(g.id(g.width() - 1, last)))
                    .map(|k| crate::catalogue::keys::block_key(list, k))
                    .collect()
            }
            _ => read_keys(g, list, &plan.from, limit),
        };
        plan
    }
}

/// The keys of a page that reads the heads: theirs, and the pieces it
/// expects to need.
pub fn read_keys(g: &Geometry, list: ListName, from: &[u64], limit: usize) -> Vec<String> {
    Heads::keys(g.width())
        .chain(pieces::first_keys(g, list, from, limit))
        .collect()
}

/// The last round a page of `limit` entries of the unfiltered list from
/// `from` reaches, if it lies in rounds up to `stored` (each round past the
/// least of `from` adds one entry at least).
fn reach(list: ListName, from: &[u64], stored: u64, limit: usize) -> Option<u64> {
    let least = from
        .iter()
        .copied()
        .min()
        .filter(|_| list == ListName::All)?;
    let mut entries = 0;
    (least + 1..=stored).find(|round| {
        entries += from.iter().filter(|done| *done < round).count();
        entries >= limit
    })
}

/// The page `plan` planned, from what its first `get-many` fetched, and
/// what it learned written back.
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    g: &Geometry,
    plan: Plan,
) -> Result<Page, ApiError> {
    let (list, limit) = (plan.list, plan.limit);
    let served = match plan.blocks {
        true => blocks::page(reader, g, list, plan.from.clone(), limit),
        false => None,
    };
    let (mut part, word) = match served {
        Some(served) => served,
        None if list == ListName::All => {
            walk(reader, g, list, plan.from, (plan.word, plan.past), limit)?
        }
        None => {
            let wanted = blocks::extended(list, plan.at, limit);
            let (mut part, rounds) = walk(reader, g, list, plan.from, (0, false), wanted)?;
            let word = blocks::settle(reader, g, list, (plan.at, rounds), &mut part, limit);
            (part, word)
        }
    };
    write_back(reader.store(), &part.writes, false, &mut part.notes);
    let laned = Laned {
        lanes: part.lanes,
        word,
    };
    let next = (part.more || !part.pets.is_empty()).then(|| Parts::new(None, Some(laned)).cursor());
    Ok(Page {
        pets: part.pets,
        next,
        notes: part.notes,
    })
}

/// The lanes' part of a page, and the rounds every lane had stored, as far
/// as it knows: within the rounds `stored` says (`past`), no head is read;
/// one that finds such an entry absent (a cursor not made here) reads them.
pub fn walk<S: KvStore>(
    reader: &mut Reader<'_, S>,
    g: &Geometry,
    list: ListName,
    from: Vec<u64>,
    (stored, mut past): (u64, bool),
    limit: usize,
) -> Result<(Part, u64), ApiError> {
    loop {
        let heads = match past {
            true => Heads::past(*g, stored),
            false => {
                reader.fetch(read_keys(g, list, &from, limit))?;
                Heads::read(*g, |key| reader.peek(key))?
            }
        };
        match merge::page(reader, &heads, list, from.clone(), limit) {
            Ok(part) if !past || part.pets.len() == limit => {
                return Ok((part, if past { stored } else { heads.stored_rounds() }))
            }
            Err(e) if !past || !matches!(e, ApiError::Internal(_)) => return Err(e),
            _ => past = false,
        }
    }
}

/// Where a pet not stored in `pet:{id}` yet may be: its lane's head.
pub fn unstored_keys(g: &Geometry, id: i64) -> Vec<String> {
    (id >= g.base())
        .then(|| head_key(g.place(id).0))
        .into_iter()
        .collect()
}

/// A pet its lane's head holds, not stored yet. A head past the id's round
/// moved on since `pet:{id}` was read, and a create stores the pet its head
/// held before it moves the head: the pet is read again then.
pub fn unstored<S: KvStore>(
    reader: &mut Reader<'_, S>,
    g: &Geometry,
    id: i64,
) -> Result<Option<Listed>, ApiError> {
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
