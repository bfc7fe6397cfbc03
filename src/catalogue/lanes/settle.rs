//! A page's end: its word, and a status page's settled part in blocks
//! (`ixm:`): the whole blocks among its pets written, its pets past the
//! limit given back. docs/key-value-layout.md, "The lanes layout".

use super::blocks::keys;
use super::geometry::Geometry;
use super::merge::Part;
use crate::catalogue::keys::{block_key, PIECE_LEN};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::Fetched;
use crate::model::ListName;

/// A page read from the lanes (`rounds` stored) and its word: the
/// unfiltered list's, those rounds. A status page writes the whole blocks
/// it did not read, gives back its pets past `limit`; its word: 1 if exact
/// to a settled pet, 2 if the next blocks are there too.
pub fn settle(
    g: &Geometry,
    (list, limit): (ListName, usize),
    at: Option<u64>,
    (mut part, rounds): (Part, u64),
    found: &Fetched,
) -> (Part, u64) {
    let settled = g.id(g.width() - 1, rounds);
    let ends_settled = |part: &Part| part.pets.last().is_some_and(|pet| pet.id() <= settled);
    let at = match (list, at) {
        (ListName::All, _) => return (part, rounds),
        (_, None) => {
            let word = u64::from(ends_settled(&part));
            return (part, word);
        }
        (_, Some(at)) => at,
    };
    // The position checked, not taken on a cursor's word: the block holding
    // `at` says its pet, and every lane's next is past it, so the lanes
    // listed exactly the `at` pets up to it.
    let first = part.pets.first().map_or(i64::MAX, Listed::id);
    let block = (at > 0).then(|| found.peek(&block_key(list, (at as i64 - 1) / PIECE_LEN)));
    let exact = match block {
        None => true,
        Some(bytes) => bytes
            .and_then(|b| Piece::decode(b.to_vec()).ok())
            .is_some_and(|b| b.get(at as i64).is_some_and(|x| x.id() < first)),
    };
    let blocks = exact.then(|| whole(list, at, &part.pets, settled));
    let mut blocks = blocks.unwrap_or_default();
    // Those read and the same are not written again (one unreadable is).
    blocks.retain(|(key, block)| found.peek(key) != Some(block));
    give_back(g, &mut part, limit);
    let there = |key: &String| found.peek(key).is_some() || blocks.iter().any(|(k, _)| k == key);
    let next = keys(list, at + part.pets.len() as u64, limit);
    let word = match exact && ends_settled(&part) {
        false => 0,
        true if next.iter().all(there) => 2,
        true => 1,
    };
    // The blocks first, in the page's one write.
    blocks.append(&mut part.writes);
    part.writes = blocks;
    (part, word)
}

/// Gives back the pets of `part` past `limit`: each lane's count follows.
fn give_back(g: &Geometry, part: &mut Part, limit: usize) {
    for pet in part.pets.split_off(limit.min(part.pets.len())) {
        part.lanes[g.place(pet.id()).0] -= 1;
        part.more = true;
    }
}

/// The whole blocks among `pets` (from `at + 1`), their ids settled.
fn whole(list: ListName, at: u64, pets: &[Listed], settled: i64) -> Vec<(String, Vec<u8>)> {
    let (at, mut writes) = (at as i64, Vec::new());
    let mut j = (at + PIECE_LEN - 1) / PIECE_LEN;
    while let Some(block) =
        pets.get((PIECE_LEN * j - at) as usize..(PIECE_LEN * (j + 1) - at) as usize)
    {
        if block.last().is_none_or(|pet| pet.id() > settled) {
            break;
        }
        let mut piece = Piece::default();
        piece.add((PIECE_LEN * j + 1..).zip(block.iter().cloned()).collect());
        writes.push((block_key(list, j), piece.encode()));
        j += 1;
    }
    writes
}
