//! Blocks of a lanes list at a known position: the unfiltered list's pieces
//! of ids, a status's settled part merged across the lanes (`ixm:`). Where
//! a page begins, and the page the blocks hold (`settle.rs` writes them).

use super::geometry::Geometry;
use super::merge::Part;
use crate::catalogue::keys::{block_key, PIECE_LEN};
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::Fetched;
use crate::model::ListName;

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
pub fn held(
    g: &Geometry,
    list: ListName,
    mut from: Vec<u64>,
    limit: usize,
    found: &Fetched,
) -> Option<(Part, u64)> {
    let at = from.iter().sum::<u64>();
    let first = at as i64 + if list == ListName::All { g.base() } else { 1 };
    let (mut pets, mut whole) = (Vec::with_capacity(limit), 0);
    for key in keys(list, at, limit) {
        let piece = Piece::decode(found.peek(&key)?.to_vec()).ok()?;
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
        *from.get_mut(g.place(pet.id()).0)? += 1;
    }
    Some((Part::new(pets, from, true), word))
}
