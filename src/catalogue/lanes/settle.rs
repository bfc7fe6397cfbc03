//! A lanes page's part, settled: what the merge took, its end (a status's
//! settled part written in blocks, `ixm:`, its pets past the page given
//! back) and the index pieces it learned, written back with the page.

use super::{geometry::Geometry, merge::Entries, merge::Part, merge::Pieces};
use crate::catalogue::{keys::block_key, keys::PIECE_LEN, listed::Listed, piece::rebuilt_note};
use crate::catalogue::{piece::sort_by_key, piece::Piece, reader::Fetched, reader::BATCH_WRITES};
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
    let word = u64::from(ends_settled(&part));
    let at = match (list, at) {
        (ListName::All, _) => return (part, rounds),
        (_, None) => return (part, word),
        (_, Some(at)) => at,
    };
    // The position checked, not taken on a cursor's word: the block holding
    // `at` says its pet, and every lane's next is past it, so the lanes
    // listed exactly the `at` pets up to it.
    let first = part.pets.first().map_or(i64::MAX, Listed::id);
    let block = (at > 0).then(|| found.peek(&block_key(list, (at as i64 - 1) / PIECE_LEN)));
    let exact = block.is_none_or(|bytes| {
        let block = bytes.and_then(|b| Piece::decode(b.to_vec()).ok());
        block.is_some_and(|b| b.get(at as i64).is_some_and(|x| x.id() < first))
    });
    let blocks = exact.then(|| whole(list, at as i64, &part.pets, settled));
    let mut blocks = blocks.unwrap_or_default();
    // Those read and the same are not written again (one unreadable is).
    blocks.retain(|(key, block)| found.peek(key) != Some(block));
    // Its pets past `limit` given back: the lane each was taken from
    // counts one fewer.
    part.pets.truncate(limit);
    for lane in part.taken.split_off(limit.min(part.taken.len())) {
        part.lanes[lane] -= 1;
        part.more = true;
    }
    let there = |key: &String| found.peek(key).is_some() || blocks.iter().any(|(k, _)| k == key);
    let next = block_keys(list, at + part.pets.len() as u64, limit);
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

/// The whole blocks among `pets` (from `at + 1`), their ids settled.
fn whole(list: ListName, at: i64, pets: &[Listed], settled: i64) -> Vec<(String, Vec<u8>)> {
    let (mut writes, mut j) = (Vec::new(), (at + PIECE_LEN - 1) / PIECE_LEN);
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

/// The blocks that hold positions `at` (the last a cursor listed) to `at + n`.
pub fn block_keys(list: ListName, at: u64, n: usize) -> Vec<String> {
    let at = at as i64;
    ((at.max(1) - 1) / PIECE_LEN..=(at + n as i64 - 1) / PIECE_LEN)
        .map(|j| block_key(list, j))
        .collect()
}

/// The pieces' write side: the pets a page learned, written back (the
/// merge reads them, [`Pieces::absorb`]).
impl Pieces {
    pub fn learn(&mut self, key: &str, position: i64, pet: &Listed) {
        // Only to a piece read, that lacks it.
        let lacks = |at: usize| self.read[at].1 .0.get(position).is_none();
        if !self.find(key).is_ok_and(lacks) {
            return;
        }
        let found = self.added.binary_search_by(|(k, _)| k.as_str().cmp(key));
        let at = found.unwrap_or_else(|at| {
            self.added.insert(at, (key.to_string(), Vec::new()));
            at
        });
        if !self.added[at].1.iter().any(|(p, _)| *p == position) {
            self.added[at].1.push((position, pet.clone()));
        }
    }

    /// The pieces that learned pets, at most [`BATCH_WRITES`]: first those a
    /// page before skipped (so a follower's are written within two pages),
    /// then those that add the most entries.
    pub fn repairs(&mut self) -> Vec<(String, Vec<u8>)> {
        let mut ranked: Vec<(i64, String, Entries)> = Vec::new();
        for (key, added) in std::mem::take(&mut self.added) {
            let first = added.first().map_or(1, |(p, _)| *p);
            let skipped = (first - 1) % PIECE_LEN != 0
                && self
                    .find(&key)
                    .is_ok_and(|at| self.read[at].1 .0.get(first - 1).is_none());
            ranked.push(((i64::from(!skipped) << 32) - added.len() as i64, key, added));
        }
        sort_by_key(&mut ranked, |(rank, _, _)| *rank);
        if ranked.len() > BATCH_WRITES {
            let left = ranked.len() - BATCH_WRITES;
            self.notes
                .push(format!("{left} index pieces left for a later page"));
        }
        let mut writes = Vec::new();
        for (_, key, added) in ranked.into_iter().take(BATCH_WRITES) {
            let Ok(at) = self.find(&key) else {
                continue;
            };
            let (piece, rebuilt) = &mut self.read[at].1;
            if *rebuilt {
                self.notes.push(rebuilt_note(&key, added.len()));
            }
            piece.add(added);
            writes.push((key, piece.encode()));
        }
        writes
    }
}
