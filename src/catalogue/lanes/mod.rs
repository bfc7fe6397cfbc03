//! The lanes layout: lanes of ids, as many as the mark says, each a log whose
//! next round a create claims by compare-and-swap of its head; pages merge
//! the lanes. docs/key-value-layout.md, "The lanes layout".

mod create;
mod geometry;
mod head;
mod keyed;
mod merge;
mod settle;

pub use {create::create, create::heads, geometry::Geometry, geometry::WIDTH};
pub use {head::Heads, keyed::create as keyed};

use {head::Head, merge::Merge, merge::Part, settle::block_keys, settle::settle};

use crate::catalogue::{
    created::Page, created::Result, cursor::Laned, cursor::Parts, keys::block_key, keys::head_key,
    keys::pet_key, keys::PIECE_LEN, listed::Listed, piece::Piece, reader::Fetched, reader::Reader,
    reader::BATCH_KEYS, record::listed, record::PetRecord,
};
use crate::{model::ListName, store::KvStore};

/// A page's plan, from the mark and the cursor alone: where it begins,
/// how it reads (blocks alone; the rounds its cursor says are stored; or
/// the heads), its first keys.
pub struct Plan {
    of: (ListName, usize),
    /// What each lane listed (a cursor of another width is read for the
    /// store's lanes, any it does not name from its start).
    from: Vec<u64>,
    /// Where it begins, if known, and whether blocks should hold it.
    at: (Option<u64>, bool),
    /// The rounds every lane had stored, if the page lies in them.
    stored: Option<u64>,
    /// Pets its walk reads (a status page from a known position: to the
    /// end of the block it ends in).
    wanted: usize,
    keys: Vec<String>,
}

impl Plan {
    pub fn new(g: &Geometry, list: ListName, laned: Option<&Laned>, limit: usize) -> Plan {
        let own = laned.is_none_or(|l| l.lanes().len() == g.width());
        let word = laned.filter(|_| own).map_or(0, Laned::word);
        let mut from = laned.map_or(Vec::new(), |l| l.lanes().to_vec());
        from.resize(g.width(), 0);
        let at = own.then(|| start(list, &from, word));
        let at = at.unwrap_or((None, false));
        // Another width's cursor has no word: its page reaches no round stored.
        let reach = reach(list, &from, word, limit);
        let wanted = extended(list, at.0, limit);
        let keys = match (at, reach) {
            ((Some(at), true), _) => block_keys(list, at, limit),
            _ if list != ListName::All => {
                let mut keys = g.read_keys(list, &from, wanted);
                // The blocks of its pets and the next page's: it writes
                // those absent, and its cursor says if the next are there.
                let around =
                    at.0.map_or(Vec::new(), |at| block_keys(list, at, wanted.max(2 * limit)));
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
            _ => g.read_keys(list, &from, limit),
        };
        let (stored, mut plan) = (reach.map(|_| word), Plan::walk(list, from, limit));
        (plan.at, plan.stored, plan.wanted, plan.keys) = (at, stored, wanted, keys);
        plan
    }

    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// A walk of the lanes from `from` (a moved store's lanes part): no
    /// block holds it, no round is known stored.
    pub fn walk(list: ListName, from: Vec<u64>, limit: usize) -> Plan {
        Plan {
            of: (list, limit),
            from,
            at: (None, false),
            stored: None,
            wanted: limit,
            keys: Vec::new(),
        }
    }
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

/// Where a page begins, if known, and whether blocks should hold it: the
/// unfiltered list's start; a status cursor of word 2 (a status's first
/// page reads the lanes: a rare status's first page is its last).
fn start(list: ListName, from: &[u64], word: u64) -> (Option<u64>, bool) {
    let at = from.iter().sum::<u64>();
    let start = word == 0 && at == 0;
    match list {
        ListName::All => (start.then_some(0), start),
        ListName::Status(_) => ((start || word > 0).then_some(at), word > 1),
    }
}

/// Pets a status page from `at` reads: to its last block's end, to write it.
fn extended(list: ListName, at: Option<u64>, limit: usize) -> usize {
    let (at, len) = (at.filter(|_| list != ListName::All), PIECE_LEN as u64);
    let to_block_end = |at: u64| ((at + limit as u64).div_ceil(len) * len - at) as usize;
    at.map_or(limit, to_block_end)
}

/// The page `plan` planned ([`walk`]), what it learned written back.
pub fn page<S: KvStore>(reader: &mut Reader<'_, S>, g: &Geometry, plan: &Plan) -> Result<Page> {
    let (part, word) = walk(reader, g, plan)?;
    let (pets, lanes, more, notes) = part.written(reader.store());
    let next = (more || !pets.is_empty()).then(|| Laned::new(lanes, word));
    let next = next.map(|laned| Parts::new(None, Some(laned)).cursor());
    Ok(Page::new(pets, next, notes))
}

/// The page from the blocks fetched, if `plan` says they should hold it and
/// they do, and its word (the unfiltered list's: the rounds the blocks held
/// whole).
fn held(g: &Geometry, plan: &Plan, found: &Fetched) -> Option<(Part, u64)> {
    let at = plan.at.1.then(|| plan.from.iter().sum::<u64>())?;
    let ((list, limit), mut from) = (plan.of, plan.from.clone());
    let first = at as i64 + if list == ListName::All { g.base() } else { 1 };
    let (mut pets, mut whole) = (Vec::with_capacity(limit), 0);
    for key in block_keys(list, at, limit) {
        let piece = Piece::decode(found.peek(&key)?.to_vec()).ok()?;
        if whole == pets.len() && piece.entries().len() == PIECE_LEN as usize {
            whole += PIECE_LEN as usize;
        }
        let range = piece.range(first, first + limit as i64 - 1);
        pets.extend(range.iter().map(|(_, pet)| pet.clone()));
    }
    // Short of a full page, the blocks do not hold it: the walk reads it.
    (pets.len() == limit).then_some(())?;
    let rounds = (whole.max(limit) / g.width()) as u64;
    let word = list.status().map_or(rounds, |_| 2);
    for pet in &pets {
        *from.get_mut(g.place(pet.id()).0)? += 1;
    }
    Some((Part::new(pets, from, true), word))
}

/// The lanes' part of the page `plan` planned, and its word: the blocks
/// fetched with `ctr:id`, if they hold it; else the lanes merged, and
/// settled ([`settle`]). Within the rounds `plan` says stored, no head is
/// read, unless an entry is absent there. Its reads: what the merge lacks,
/// a batch at a time.
pub fn walk(reader: &mut Reader<impl KvStore>, g: &Geometry, plan: &Plan) -> Result<(Part, u64)> {
    if let Some(held) = held(g, plan, reader.fetched()) {
        return Ok(held);
    }
    let mut merge = Merge::new(*g, (plan.of.0, plan.wanted), &plan.from, plan.stored);
    loop {
        reader.fetch(merge.lacking())?;
        let found = reader.fetched();
        // The heads, decoded where read: what the merge begins with.
        let heads = merge
            .reads_heads()
            .then(|| Heads::read(*g, |k| found.peek(k)));
        if merge.take(found, heads.transpose()?)? {
            return Ok(settle(g, plan.of, plan.at.0, merge.part(), found));
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
    let (Some(key), round) = (unstored_keys(g, id).pop(), g.place(id).1) else {
        return Ok(None);
    };
    let head = Head::decode(&key, reader.get(&key)?.as_deref())?;
    match (head.round(), head.last()) {
        (r, Some(last)) if r == round => listed(&key, last.json().to_vec()).map(Some),
        (r, _) if r > round => {
            let key = pet_key(id);
            PetRecord::of(&key, reader.get(&key)?)?.listed(&key)
        }
        _ => Ok(None),
    }
}
