//! Blocks of a lanes list at a known position: the unfiltered list's pieces
//! of ids, a status's settled part merged across the lanes (`ixm:`).

use super::geometry::Geometry;
use super::merge::Part;
use crate::catalogue::keys::{block_key, PIECE_LEN};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::Reader;
use crate::model::ListName;
use crate::store::KvStore;

/// Where a page begins, if known, and whether blocks should hold it: the
/// unfiltered list's start; a status cursor of word 2 (a status's first
/// page reads the lanes: a rare status's first page is its last).
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

/// Pets a status page from `at` reads: to its last block's end, to write it.
pub fn extended(list: ListName, at: Option<u64>, limit: usize) -> usize {
    let len = PIECE_LEN as u64;
    match (list, at) {
        (ListName::Status(_), Some(at)) => ((at + limit as u64).div_ceil(len) * len - at) as usize,
        _ => limit,
    }
}

/// The page from the blocks fetched, if they hold it, and its word (the
/// unfiltered list's: the rounds the blocks held whole).
pub fn page<S: KvStore>(
    reader: &Reader<'_, S>,
    g: &Geometry,
    list: ListName,
    mut from: Vec<u64>,
    limit: usize,
) -> Option<(Part, u64)> {
    let at = from.iter().sum::<u64>();
    let first = at as i64 + if list == ListName::All { g.base() } else { 1 };
    let (mut pets, mut whole) = (Vec::with_capacity(limit), 0);
    for key in keys(list, at, limit) {
        let piece = Piece::decode(reader.peek(&key)?.to_vec()).ok()?;
        if whole == pets.len() && piece.entries().len() == PIECE_LEN as usize {
            whole += PIECE_LEN as usize;
        }
        let range = piece.range(first, first + limit as i64 - 1);
        pets.extend(range.iter().map(|(_, pet)| pet.clone()));
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
    Some((Part::new(pets, from, true), word))
}

/// A status page read from the lanes (`rounds` stored): it writes the
/// whole blocks it did not read, gives back its pets past `limit`; its
/// word: 1 if exact to a settled pet, 2 if the next blocks are there too.
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
    // The position checked, not taken on a cursor's word: the block holding
    // `at` says its pet, and every lane's next is past it, so the lanes
    // listed exactly the `at` pets up to it.
    let first = part.pets.first().map_or(i64::MAX, |pet| pet.id);
    let block = (at > 0).then(|| reader.peek(&block_key(list, (at as i64 - 1) / PIECE_LEN)));
    let exact = match block {
        None => true,
        Some(bytes) => bytes
            .and_then(|b| Piece::decode(b.to_vec()).ok())
            .is_some_and(|b| b.get(at as i64).is_some_and(|x| x.id < first)),
    };
    let blocks = exact.then(|| whole(list, at, &part.pets, settled));
    let mut blocks = blocks.unwrap_or_default();
    // Those read and the same are not written again (one unreadable is).
    blocks.retain(|(key, block)| reader.peek(key) != Some(block));
    part.give_back(limit, g);
    let there = |key: &String| reader.peek(key).is_some() || blocks.iter().any(|(k, _)| k == key);
    let next = keys(list, at + part.pets.len() as u64, limit);
    let word = match exact && ends_settled(part) {
        false => 0,
        true if next.iter().all(there) => 2,
        true => 1,
    };
    // The blocks first, in the page's one write.
    blocks.append(&mut part.writes);
    part.writes = blocks;
    word
}

/// The whole blocks among `pets` (from `at + 1`), their ids settled.
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
