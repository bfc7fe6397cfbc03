//! The replicated layout's index pieces, `ixp:{list}:{n}`: a list's entries
//! of settled time, 200 a piece from the list's start. A full piece is final
//! (any maker makes it alike); the last is open, made again as time settles.

use super::entry::Entry;
use crate::{catalogue::cursor::Placed, model::number, model::ListName};

/// Entries a full piece holds: some 45 B each, 9 KB a piece whatever the
/// pets' sizes (an item holds 400 KB on DynamoDB, 1 MB on Akamai).
pub const PIECE_ENTRIES: usize = 200;
/// Pieces one page writes at most: a store the 1.x edge build filled gets
/// its pieces a few at a time, within Akamai's 50 writes/s.
pub const PIECES_WRITTEN: usize = 10;
/// An index piece's header: [`Piece`].
pub(crate) const HEADER: &str = "petstore-replicated-piece 1 ";

/// `petstore-replicated-piece 1 <start t> <start id> <made ms>`, then an
/// entry's key a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Piece {
    /// The place its entries follow (`0 0`: the list's start): the last
    /// entry of the piece before it.
    start: Placed,
    /// The horizon it was made at: it holds every entry of its list past
    /// `start` created by then (the first 200, if full).
    made_ms: u64,
    /// Past `start`, ascending, [`PIECE_ENTRIES`] at most.
    entries: Vec<Entry>,
}

pub fn piece_key(list: ListName, n: u64) -> String {
    format!("ixp:{}:{n}", list.as_str())
}

impl Piece {
    /// A piece past `start` made at `made_ms`, no entry yet.
    fn new(start: Placed, made_ms: u64) -> Piece {
        Piece {
            start,
            made_ms,
            entries: Vec::new(),
        }
    }

    /// Adds `entry` past its last, unless full: whether it did.
    fn push(&mut self, entry: Entry) -> bool {
        let last = self.entries.last().map_or(self.start, Entry::place);
        let follows = entry.place() > last && !self.full();
        if follows {
            self.entries.push(entry);
        }
        follows
    }

    pub fn start(&self) -> Placed {
        self.start
    }

    pub fn made_ms(&self) -> u64 {
        self.made_ms
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn full(&self) -> bool {
        self.entries.len() == PIECE_ENTRIES
    }

    pub fn encode(&self) -> Vec<u8> {
        let (t_ms, id) = (self.start.t_ms(), self.start.id());
        let mut text = format!("{HEADER}{t_ms} {id} {}", self.made_ms);
        for entry in &self.entries {
            text.push('\n');
            text.push_str(&entry.key());
        }
        text.into_bytes()
    }

    /// Strictly: entries of `list`, past `start`, ascending, 200 at most;
    /// anything else is no piece, made again from the entries.
    pub fn decode(list: ListName, bytes: &[u8]) -> Option<Piece> {
        let mut lines = std::str::from_utf8(bytes).ok()?.split('\n');
        let mut head = lines.next()?.strip_prefix(HEADER)?.split(' ');
        let mut next = || Some(number(head.next()?)? as u64);
        let (t_ms, id, made_ms) = (next()?, next()? as i64, next()?);
        let list_start = (t_ms, id) == (0, 0);
        let start = list_start.then(Placed::default).or(Placed::new(t_ms, id))?;
        let mut piece = Piece::new(start, made_ms);
        for line in head.chain(lines) {
            let entry = Entry::parse(line).filter(|e| e.in_list(list))?;
            piece.push(entry).then_some(())?;
        }
        Some(piece)
    }
}

/// Pieces `n`, `n + 1`, … of `list` from the store's `entries`: those
/// past `start` created by `horizon`, 200 a piece, the last open (maybe
/// empty).
pub fn make(entries: &[Entry], list: ListName, start: Placed, horizon: u64) -> Vec<Piece> {
    let after = |e: &&Entry| e.in_list(list) && e.place() > start && e.place().t_ms() <= horizon;
    let mut entries: Vec<Entry> = entries.iter().filter(after).cloned().collect();
    entries.sort_unstable_by_key(Entry::place);
    let (mut pieces, mut start) = (Vec::new(), start);
    for chunk in entries.chunks(PIECE_ENTRIES) {
        let mut piece = Piece::new(start, horizon);
        for entry in chunk {
            // Sorted and past `start`, 200 at most: each follows the last.
            let follows = piece.push(entry.clone());
            debug_assert!(follows);
        }
        pieces.push(piece);
        start = chunk[chunk.len() - 1].place();
    }
    if pieces.last().is_none_or(Piece::full) {
        pieces.push(Piece::new(start, horizon));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PetStatus;

    fn entry(t_ms: u64, id: i64, status: PetStatus) -> Entry {
        Entry::new(Placed::new(t_ms, id).unwrap(), status).unwrap()
    }

    #[test]
    fn pieces_are_made_200_a_piece_and_read_back_strictly() {
        let mut entries: Vec<Entry> = (1..=450)
            .map(|i| entry(1_000 + i, 7 * i as i64, PetStatus::Available))
            .collect();
        entries.push(entry(2_000, 1, PetStatus::Available)); // not settled
        entries.reverse();
        let pieces = make(&entries, ListName::All, Placed::default(), 1_999);
        let sizes: Vec<usize> = pieces.iter().map(|p| p.entries.len()).collect();
        assert_eq!(sizes, [200, 200, 50]);
        assert_eq!(pieces[1].start, Placed::new(1_200, 1_400).unwrap());
        assert_eq!(
            pieces[2].entries[0].place(),
            Placed::new(1_401, 2_807).unwrap()
        );
        for piece in &pieces {
            let bytes = piece.encode();
            assert_eq!(Piece::decode(ListName::All, &bytes).as_ref(), Some(piece));
            let sold = ListName::Status(PetStatus::Sold);
            assert_eq!(
                Piece::decode(sold, &bytes).is_some(),
                piece.entries.is_empty()
            );
        }
        let whole = make(&entries[..1], ListName::All, pieces[1].start, 1_999);
        assert_eq!(whole.len(), 1, "an empty open piece");
        let exact = make(&entries[1..201], ListName::All, Placed::default(), 1_999);
        assert_eq!(
            exact.iter().map(|p| p.entries.len()).collect::<Vec<_>>(),
            [200, 0]
        );
        assert_eq!(exact[1].start, exact[0].entries[199].place());
        let bad = [
            "petstore-replicated-piece 1 0 0",
            "petstore-replicated-piece 1 0 0 5 6",
            "petstore-replicated-piece 1 0 0 05",
            "petstore-replicated-piece 1 +1 0 5",
            "petstore-replicated-piece 1 0 -1 5",
            "petstore-replicated-piece 1 01 0 5",
            "petstore-replicated-piece 2 0 0 5",
            "petstore-replicated-piece 1 9 9 5\nixr:0000000000001:0000000000000001:sold",
            "petstore-replicated-piece 1 0 0 5\nixr:0000000000001:0000000000000001:sold\n",
        ];
        for text in bad {
            assert_eq!(
                Piece::decode(ListName::All, text.as_bytes()),
                None,
                "{text}"
            );
        }
        let twice = format!("{HEADER}0 0 5\n{}\n{}", entries[5].key(), entries[5].key());
        assert_eq!(Piece::decode(ListName::All, twice.as_bytes()), None);
        let mut many = make(&entries, ListName::All, Placed::default(), 1_999)[0].clone();
        many.entries.push(entry(1_999, 1, PetStatus::Available));
        assert_eq!(Piece::decode(ListName::All, &many.encode()), None, "201");
    }
}
