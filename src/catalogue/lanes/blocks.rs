//! Blocks of a lanes list at a known position: the unfiltered list's pieces
//! of ids, and a status list's settled part merged across the lanes
//! (`ixm:`), written whole. docs/key-value-layout.md.

use crate::model::ListName;
use crate::store::KvStore;

use super::geometry::Geometry;
use super::merge::Part;

use crate::catalogue::keys::{block_key, PIECE_LEN};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::Reader;

/// Where a page from `from` (a cursor's lanes and word) begins in `list`,
/// if known, and whether blocks are expected to hold it: the unfiltered
/// list's start; a status cursor whose word is `2`. (A status list's first
/// page reads the lanes: a rare status's first page is its last.)
pub fn start(list: ListName, from: &[u64], word: u64) -> (Option<u64>, bool) {
    let at = from.iter().sum::<u64>();
    let start = word == 0 && at == 0;
    match list {
        ListName::All => (start.then_some(0), start),
        ListName::Status(_) => ((start || word > 0).then_some(at), word > 1),
    }
}

/// The blocks that hold positions `at` (the last a cursor listed) to `at + n`.
pub fn keys(list: ListName, at: u64, n: usize) -> Vec<String> {
    let at = at as i64;
    ((at.max(1) - 1) / PIECE_LEN..=(at + n as i64 - 1) / PIECE_LEN)
        .map(|j| block_key(list, j))
        .collect()
}

/// How many pets a status page from position `at` reads from the lanes: on
/// to the end of the block it ends in, so that it can write that block.
pub fn extended(list: ListName, at: Option<u64>, limit: usize) -> usize {
    let len = PIECE_LEN as u64;
    match (list, at) {
        (ListName::Status(_), Some(at)) => ((at + limit as u64).div_ceil(len) * len - at) as usize,
        _ => limit,
    }
}

/// The page of `limit` from the blocks fetched, if they hold each of its
/// positions: its pets, each lane moved on by the pets taken from it; and
/// its cursor's word (the unfiltered list's: the rounds the blocks held
/// whole, every lane's stored).
pub fn page<S: KvStore>(
    reader: &Reader<'_, S>,
    g: &Geometry,
    list: ListName,
    mut from: Vec<u64>,
    limit: usize,
) -> Option<(Part, u64)> {
    let at = from.iter().sum::<u64>();
    // The unfiltered list's blocks hold ids; a status list's, positions.
    let first = at as i64 + if list == ListName::All { g.base() } else { 1 };
    let (mut pets, mut whole) = (Vec::with_capacity(limit), 0);
    for key in keys(list, at, limit) {
        let piece = Piece::decode(reader.peek(&key)?.to_vec()).ok()?;
        if whole == pets.len() && piece.entries().len() == PIECE_LEN as usize {
            whole += PIECE_LEN as usize;
        }
        pets.extend(
            piece
                .range(first, first + limit as i64 - 1)
                .iter()
                .map(|(_, pet)| pet.clone()),
        );
    }
    if pets.len() != limit {
        return None;
    }
    let word = match list {
        ListName::All => (whole.max(limit) / g.width()) as u64,
        ListName::Status(_) => 2,
    };
    for pet in &pets {
        *from.get_mut(g.place(pet.id).0)? += 1;
    }
    Some((
        Part {
            pets,
            lanes: from,
            more: true,
            ..Part::default()
        },
        word,
    ))
}

/// A status page read from the lanes, every lane having stored `rounds`:
/// from position `at` (if known), it writes the whole blocks among its
/// pets it did not read, and gives back those past `limit`. Its word: 0 if
/// its last pet is not settled; else 1 (its lanes listed exactly the pets
/// up to it), or 2 if the next page's blocks are there.
pub fn settle<S: KvStore>(
    reader: &Reader<'_, S>,
    g: &Geometry,
    list: ListName,
    (at, rounds): (Option<u64>, u64),
    part: &mut Part,
    limit: usize,
) -> u64 {
    let settled = g.id(g.width() - 1, rounds);
    let ends_settled = |part: &Part| part.pets.last().is_some_and(|pet| pet.id <= settled);
    let Some(at) = at else {
        return u64::from(ends_settled(part));
    };
    // The position is checked against the blocks, never taken on a
    // cursor's word (one not made here must not make a page write blocks
    // that misplace pets): the block holding position `at` says its pet,
    // and every lane's next pet is past it. Then each lane listed at least
    // its pets up to it, and as the lanes listed `at` in all, exactly those.
    let first = part.pets.first().map_or(i64::MAX, |pet| pet.id);
    let block = (at > 0).then(|| reader.peek(&block_key(list, (at as i64 - 1) / PIECE_LEN)));
    let exact = match block {
        None => true,
        Some(bytes) => bytes
            .and_then(|b| Piece::decode(b.to_vec()).ok())
            .is_some_and(|b| b.get(at as i64).is_some_and(|x| x.id < first)),
    };
    let mut blocks = match exact {
        true => whole(list, at, &part.pets, settled),
        false => Vec::new(),
    };
    // Those read and the same are not written again (one unreadable is).
    blocks.retain(|(key, block)| reader.peek(key) != Some(block));
    for pet in part.pets.split_off(limit.min(part.pets.len())) {
        part.lanes[g.place(pet.id).0] -= 1;
        part.more = true;
    }
    let there = |key: &String| reader.peek(key).is_some() || blocks.iter().any(|(k, _)| k == key);
    let word = match exact && ends_settled(part) {
        false => 0,
        true if keys(list, at + part.pets.len() as u64, limit)
            .iter()
            .all(there) =>
        {
            2
        }
        true => 1,
    };
    // The blocks first, in the page's one write.
    blocks.append(&mut part.writes);
    part.writes = blocks;
    word
}

/// The whole blocks among `pets`, a status list's pets from position
/// `at + 1` on, whose ids are at most `settled`.
fn whole(list: ListName, at: u64, pets: &[Listed], settled: i64) -> Vec<(String, Vec<u8>)> {
    let (at, mut writes) = (at as i64, Vec::new());
    let mut j = (at + PIECE_LEN - 1) / PIECE_LEN;
    while let Some(block) =
        pets.get((PIECE_LEN * j - at) as usize..(PIECE_LEN * (j + 1) - at) as usize)
    {
        if block.last().is_none_or(|pet| pet.id > settled) {
            break;
        }
        let mut piece = Piece::default();
        piece.add((PIECE_LEN * j + 1..).zip(block.iter().cloned()).collect());
        writes.push((block_key(list, j), piece.encode()));
        j += 1;
    }
    writes
}
