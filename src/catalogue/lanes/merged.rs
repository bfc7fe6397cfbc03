//! A list at a known position, in blocks of 32 positions: the unfiltered list's
//! blocks, and a status list's settled part merged across the lanes (`ixm:`),
//! written whole. docs/key-value-layout.md, "A status list's settled part".

use crate::model::ListName;
use crate::store::KvStore;

use crate::catalogue::keys::{merged_key, PIECE_LEN};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::Reader;

use super::geometry::Geometry;
use super::part::Part;

/// Where a page from `from` (a cursor's lanes and `word`) begins in `list`,
/// if known, and whether its blocks are expected to hold it: the
/// unfiltered list's start; a status list's cursor with the word `_2`.
/// (A status list's first page reads the lanes: where the status is rare,
/// its blocks could not hold it, and trying them first would cost a round
/// trip.)
pub fn start(list: ListName, from: &[u64], word: u64) -> (Option<u64>, bool) {
    let at = from.iter().sum::<u64>();
    let start = word == 0 && at == 0;
    match list {
        ListName::All => (start.then_some(0), start),
        ListName::Status(_) => ((start || word > 0).then_some(at), word > 1),
    }
}

/// The blocks that hold positions `at` (the last a cursor listed, if
/// any) to `at + n`.
pub fn keys(list: ListName, at: u64, n: usize) -> Vec<String> {
    let at = at as i64;
    let mut keys = Vec::new();
    for j in (at.max(1) - 1) / PIECE_LEN..=(at + n as i64 - 1) / PIECE_LEN {
        keys.push(merged_key(list, j));
    }
    keys
}

/// The blocks a status page from position `at`, reading `wanted` pets
/// from the lanes, checks its position against, may write (those whole
/// among its pets), and those of the page after it.
pub fn around(list: ListName, at: u64, wanted: usize, limit: usize) -> Vec<String> {
    keys(list, at, wanted.max(2 * limit))
}

/// Whether a cursor's lanes listed exactly the pets of its list up to
/// its position `at`, checked against the blocks read, never taken on its
/// word (a cursor not made here must not make a page write blocks that
/// misplace pets): the block that holds position `at` says its pet, `x`,
/// and every lane's next pet, `first` the least of them, is past `x`. Then
/// each lane listed at least its pets up to `x`, and as the lanes listed
/// `at` pets in all, as many as there are up to `x`, exactly those.
fn listed_to<S: KvStore>(reader: &Reader<'_, S>, list: ListName, at: u64, first: i64) -> bool {
    if at == 0 {
        return true;
    }
    let key = merged_key(list, (at as i64 - 1) / PIECE_LEN);
    let block = reader.peek(&key).map(|b| Piece::decode(b.to_vec()));
    matches!(block, Some(Ok(b)) if b.get(at as i64).is_some_and(|x| x.id < first))
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

/// The page of `limit` from the blocks fetched, if they held every one of
/// its positions: its pets, each lane moved on by the pets taken from it;
/// and its cursor's word.
pub fn page<S: KvStore>(
    reader: &Reader<'_, S>,
    geometry: Geometry,
    list: ListName,
    mut from: Vec<u64>,
    limit: usize,
) -> Option<(Part, u64)> {
    let at = from.iter().sum::<u64>();
    // The unfiltered list's blocks hold ids; a status list's, positions.
    let first = match list {
        ListName::All => geometry.base(),
        ListName::Status(_) => 1,
    } + at as i64;
    let mut pets = Vec::with_capacity(limit);
    // Positions the blocks hold whole, in a row.
    let mut whole = 0;
    for key in keys(list, at, limit) {
        let piece = Piece::decode(reader.peek(&key)?.to_vec()).ok()?;
        if whole == pets.len() && piece.entries().len() == PIECE_LEN as usize {
            whole += PIECE_LEN as usize;
        }
        let wanted = piece.range(first, first + limit as i64 - 1);
        pets.extend(wanted.iter().map(|(_, pet)| pet.clone()));
    }
    if pets.len() != limit {
        return None;
    }
    // The unfiltered list's (a walk's first page): the rounds the blocks
    // held whole, every lane's stored.
    let word = match list {
        ListName::All => (whole.max(limit) / geometry.width()) as u64,
        ListName::Status(_) => 2,
    };
    for pet in &pets {
        *from.get_mut(geometry.place(pet.id).0)? += 1;
    }
    let part = Part {
        pets,
        lanes: from,
        more: true,
        ..Part::default()
    };
    Some((part, word))
}

/// A status page read from the lanes, `rounds` stored in every lane: from
/// position `at` (if known), it writes the whole blocks among its pets
/// that it did not read, and gives back those past `limit`. Its cursor's
/// word: none if its last pet is not settled; else `1` (its lanes listed
/// exactly the pets up to it), or `2` if the next page's blocks are there.
pub fn settle<S: KvStore>(
    reader: &Reader<'_, S>,
    geometry: Geometry,
    list: ListName,
    (at, rounds): (Option<u64>, u64),
    part: &mut Part,
    limit: usize,
) -> u64 {
    let settled = geometry.id(geometry.width() - 1, rounds);
    let ends_settled = |part: &Part| part.pets.last().is_some_and(|pet| pet.id <= settled);
    let Some(at) = at else {
        return u64::from(ends_settled(part));
    };
    let first = part.pets.first().map_or(i64::MAX, |pet| pet.id);
    let exact = listed_to(reader, list, at, first);
    let mut blocks = match exact {
        true => whole(list, at, &part.pets, settled),
        false => Vec::new(),
    };
    // Those read and the same are not written again (one unreadable is).
    blocks.retain(|(key, block)| reader.peek(key) != Some(block));
    let beyond = part.pets.split_off(limit.min(part.pets.len()));
    for pet in &beyond {
        part.lanes[geometry.place(pet.id).0] -= 1;
    }
    part.more |= !beyond.is_empty();
    let next = keys(list, at + part.pets.len() as u64, limit);
    let there = |key: &String| reader.peek(key).is_some() || blocks.iter().any(|(k, _)| k == key);
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

/// The whole blocks among `pets`, a status list's pets from position
/// `at + 1` on, whose ids are at most `settled`.
fn whole(list: ListName, at: u64, pets: &[Listed], settled: i64) -> Vec<(String, Vec<u8>)> {
    let at = at as i64;
    let mut writes = Vec::new();
    let mut j = (at + PIECE_LEN - 1) / PIECE_LEN;
    while let Some(block) =
        pets.get((PIECE_LEN * j - at) as usize..(PIECE_LEN * (j + 1) - at) as usize)
    {
        if block.last().is_none_or(|pet| pet.id > settled) {
            break;
        }
        let mut piece = Piece::default();
        piece.add((PIECE_LEN * j + 1..).zip(block.iter().cloned()).collect());
        writes.push((merged_key(list, j), piece.encode()));
        j += 1;
    }
    writes
}
