//! The index piece, up to 32 positions of a list as text, read by splitting
//! lines; and the pieces a page writes back, best effort.

use std::rc::Rc;

use super::{listed::Listed, reader::BATCH_WRITES};
use crate::{model::number, model::split_digits, store::KvStore};

/// An index piece's header: [`Piece`].
pub(super) const HEADER: &str = "petstore-index-piece 2";

/// Stored as the header, then a line per pet in ascending position:
/// `<position> <id> <pet JSON>` (JSON never holds a raw newline).
#[derive(Debug, Default, Clone)]
pub struct Piece {
    entries: Vec<(i64, Listed)>,
}

/// Sorts `items` by `key`, stably, by insertion: a page's items come
/// nearly in order, and std's sorts cost some 4 KB of module a type.
pub fn sort_by_key<T>(items: &mut [T], key: impl Fn(&T) -> i64) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && key(&items[j - 1]) > key(&items[j]) {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// The number at `text[at..end]` followed by `stop` (strictly, as
/// written: `{n}`), and where the rest begins.
fn digits(text: &str, (at, end): (usize, usize), stop: char) -> Option<(i64, usize)> {
    let (n, rest) = split_digits(text.get(at..end)?);
    let value = number(n).filter(|_| rest.starts_with(stop))?;
    Some((value, at + n.len() + 1))
}

impl Piece {
    /// What a read found: no piece if absent, an error if unreadable.
    pub fn read(value: Option<&[u8]>) -> Result<Option<Piece>, String> {
        value.map(|bytes| Piece::decode(bytes.to_vec())).transpose()
    }

    pub fn entries(&self) -> &[(i64, Listed)] {
        &self.entries
    }

    /// Checks each line's shape (a pet stating the line's id), not every
    /// pet: a page's scan is most of the component's own work.
    pub fn decode(bytes: Vec<u8>) -> Result<Piece, String> {
        let text = Rc::new(String::from_utf8(bytes).map_err(|e| e.to_string())?);
        let b = text.as_bytes();
        if !b.starts_with(HEADER.as_bytes()) {
            return Err("not an index piece of this format".into());
        }
        let (mut at, mut entries) = (HEADER.len(), Vec::with_capacity(32));
        while at < b.len() {
            let line = at + 1;
            let end = memchr::memchr(b'\n', &b[line.min(b.len())..]).map_or(b.len(), |n| line + n);
            let entry = (b[at] == b'\n').then(|| Piece::entry(&text, line, end));
            let bad = || format!("bad line '{}'", text.get(line.min(end)..end).unwrap_or(""));
            entries.push(entry.flatten().ok_or_else(bad)?);
            at = end;
        }
        // Sorted and distinct, as written or not.
        let mut piece = Piece { entries };
        piece.add(Vec::new());
        Ok(piece)
    }

    /// The line `text[line..end]`: `<position> <id> {"id":<id>,…}`.
    fn entry(text: &Rc<String>, line: usize, end: usize) -> Option<(i64, Listed)> {
        let b = &text.as_bytes()[..end];
        let (position, at) = digits(text, (line, end), ' ')?;
        let (id, json) = digits(text, (at, end), ' ')?;
        let after = b.get(json..)?.strip_prefix(br#"{"id":"#)?;
        let after = after.strip_prefix(&b[at..json - 1])?;
        (after.starts_with(b",") && b.ends_with(b"}"))
            .then(|| (position, Listed::shared(id, text, json..end)))
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut text = String::from(HEADER);
        for (position, pet) in &self.entries {
            text.push_str(&format!("\n{position} {} {}", pet.id(), pet.json()));
        }
        text.into_bytes()
    }

    pub fn get(&self, position: i64) -> Option<&Listed> {
        let i = self.entries.binary_search_by_key(&position, |(p, _)| *p);
        i.ok().map(|i| &self.entries[i].1)
    }

    pub fn range(&self, from: i64, to: i64) -> &[(i64, Listed)] {
        let start = self.entries.partition_point(|(p, _)| *p < from);
        let end = self.entries.partition_point(|(p, _)| *p <= to);
        &self.entries[start..end.max(start)]
    }

    /// Adds pets at positions it did not hold.
    pub fn add(&mut self, added: Vec<(i64, Listed)>) {
        self.entries.extend(added);
        sort_by_key(&mut self.entries, |(position, _)| *position);
        self.entries.dedup_by_key(|(position, _)| *position);
    }
}

/// The note of a piece a page found missing and wrote again.
pub fn rebuilt_note(key: &str, entries: usize) -> String {
    format!("index piece {key} missing: rebuilt with {entries} entries")
}

/// Writes back the pieces a page filled: one `set`, or `set-many`s of
/// [`BATCH_WRITES`] (the first only, unless `every`). What is not written,
/// a later page writes again.
pub fn write_back(store: &impl KvStore, writes: &[(String, Vec<u8>)], every: bool) -> Vec<String> {
    let taken = if every { usize::MAX } else { 1 };
    let mut chunks = writes.chunks(BATCH_WRITES).take(taken);
    let written = match writes {
        [(key, value)] => store.set(key, value),
        _ => chunks.try_for_each(|chunk| store.set_many(chunk)),
    };
    let mut notes = Vec::new();
    if let Err(e) = written {
        let keys: Vec<&str> = writes.iter().map(|(key, _)| key.as_str()).collect();
        notes.push(format!("index pieces {} not written ({e})", keys.join(" ")));
    }
    if !every && writes.len() > BATCH_WRITES {
        let left = writes.len() - BATCH_WRITES;
        notes.push(format!("{left} index pieces left for a later page"));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::listed::pets_body;

    const STORED: &str = "petstore-index-piece 2\n\
        1 1 {\"id\":1,\"name\":\"a b\",\"categoryId\":3,\"status\":\"sold\"}\n\
        2 5 {\"id\":5,\"name\":\"b\\n\",\"categoryId\":3,\"status\":\"sold\"}";

    #[test]
    fn pieces_hold_each_pet_as_its_response_json_and_check_its_shape() {
        let piece = Piece::decode(STORED.as_bytes().to_vec()).unwrap();
        let second = piece.get(2).unwrap();
        assert_eq!(second.id(), 5);
        assert_eq!(
            second.json(),
            r#"{"id":5,"name":"b\n","categoryId":3,"status":"sold"}"#
        );
        assert_eq!(piece.encode(), STORED.as_bytes());
        let first = piece.get(1).unwrap();
        assert_eq!(
            pets_body(&[first.clone(), second.clone()]),
            format!("[{},{}]", first.json(), second.json()).into_bytes()
        );
        for bad in [
            "[[1,1,3,\"sold\",\"a\"]]",
            "petstore-index-piece 2\n1 2 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1 {\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1",
            "petstore-index-piece 2\nx 1 {\"id\":1,}",
            "petstore-index-piece 2\n1 1 {\"id\":12,\"name\":\"a\"}",
            "petstore-index-piece 2\n-1 1 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n+1 1 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n01 1 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n1 01 {\"id\":01,\"name\":\"a\"}",
            "petstore-index-piece 2\n1 +1 {\"id\":+1,\"name\":\"a\"}",
            "petstore-index-piece 2\n1234567890123456789 1 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1 {\"id\":1,\"name\":\"a\"}\n",
            "petstore-index-piece 2x",
            "petstore-index-piece 3",
        ] {
            assert!(Piece::decode(bad.as_bytes().to_vec()).is_err(), "{bad}");
        }
        assert!(Piece::read(None).unwrap().is_none());
    }

    #[test]
    fn positions_are_looked_up_in_order_whatever_order_they_were_written_in() {
        let shuffled = "petstore-index-piece 2\n\
            7 9 {\"id\":9,\"n\":0}\n3 4 {\"id\":4,\"n\":0}\n5 6 {\"id\":6,\"n\":0}\n3 4 {\"id\":4,\"n\":0}";
        let piece = Piece::decode(shuffled.as_bytes().to_vec()).unwrap();
        let positions: Vec<i64> = piece
            .range(i64::MIN, i64::MAX)
            .iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(positions, [3, 5, 7]);
        assert_eq!((piece.range(4, 7).len(), piece.range(8, 4).len()), (2, 0));
        assert_eq!(piece.get(5).map(Listed::id), Some(6));
        assert!(piece.get(4).is_none());
        let mut grown = piece.clone();
        let extra =
            Piece::decode(b"petstore-index-piece 2\n4 5 {\"id\":5,\"n\":0}".to_vec()).unwrap();
        grown.add(extra.range(4, 4).to_vec());
        assert_eq!(
            String::from_utf8(grown.encode()).unwrap(),
            "petstore-index-piece 2\n3 4 {\"id\":4,\"n\":0}\n4 5 {\"id\":5,\"n\":0}\n5 6 {\"id\":6,\"n\":0}\n7 9 {\"id\":9,\"n\":0}"
        );
    }
}
