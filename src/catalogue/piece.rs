//! The index piece: the pets at 32 positions of a list, as text, read by
//! splitting lines; each pet a span of that text, copied once into the body.

use std::rc::Rc;

use super::listed::Listed;

/// First line of a stored piece: its format.
const PIECE_HEADER: &str = "petstore-index-piece 2";

/// An index piece: the pets it holds, in ascending position, each position
/// once. Stored as text: the header line, then one line per pet,
/// `<position> <id> <pet JSON>` (JSON text never holds a raw newline).
#[derive(Debug, Default, Clone)]
pub struct Piece {
    entries: Vec<(i64, Listed)>,
}

/// What reading a piece found.
pub enum Stored {
    Found(Piece),
    Missing,
    Unreadable(String),
}

/// Sorts `items` by `key`, stably, by insertion: what a page sorts (at most
/// a few hundred pets, nearly in order already) needs no more, and std's
/// sorts cost about 4 KB of code for each type they sort.
pub fn sort_by_key<T>(items: &mut [T], key: impl Fn(&T) -> i64) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && key(&items[j - 1]) > key(&items[j]) {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// The first `\n` at or after `b[from]` (`memchr`: a word at a time; the
/// lines are mostly JSON text, and this search is most of reading a piece).
fn newline(b: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'\n', b.get(from..)?).map(|n| from + n)
}

/// The decimal number at `b[at..]` (1 to 18 digits, no sign), which must be
/// followed by `stop`; its value and where the rest begins.
fn digits(b: &[u8], at: usize, stop: u8) -> Option<(i64, usize)> {
    let len = b
        .get(at..)?
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if !(1..=18).contains(&len) || b.get(at + len) != Some(&stop) {
        return None;
    }
    let value = b[at..at + len]
        .iter()
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Some((value, at + len + 1))
}

impl Piece {
    /// What a read of a piece's key found.
    pub fn stored(value: Option<Vec<u8>>) -> Stored {
        match value {
            None => Stored::Missing,
            Some(bytes) => match Piece::decode(bytes) {
                Ok(piece) => Stored::Found(piece),
                Err(e) => Stored::Unreadable(e),
            },
        }
    }

    /// The pets it holds, with their positions, in order.
    pub fn entries(&self) -> &[(i64, Listed)] {
        &self.entries
    }

    /// Checks each line's shape (a pet object that states the line's id): a
    /// piece is our own derived data, and parsing every pet would cost what
    /// serving them as stored saves. A scan over bytes: on a page of 100 this
    /// is most of the component's own work (BENCHMARKS.md).
    pub fn decode(bytes: Vec<u8>) -> Result<Piece, String> {
        let text = Rc::new(String::from_utf8(bytes).map_err(|e| e.to_string())?);
        let b = text.as_bytes();
        if !b.starts_with(PIECE_HEADER.as_bytes()) {
            return Err("not an index piece of this format".into());
        }
        let mut at = PIECE_HEADER.len();
        let mut entries = Vec::with_capacity(32);
        while at < b.len() {
            let line = at + 1;
            let end = newline(b, line).unwrap_or(b.len());
            let entry = (b[at] == b'\n')
                .then(|| Piece::entry(&text, line, end))
                .flatten();
            let Some(entry) = entry else {
                let shown = text.get(line.min(end)..end).unwrap_or_default();
                return Err(format!("bad line '{shown}'"));
            };
            entries.push(entry);
            at = end;
        }
        // Written in ascending position; anything else is put in order.
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            sort_by_key(&mut entries, |(position, _)| *position);
            entries.dedup_by_key(|(position, _)| *position);
        }
        Ok(Piece { entries })
    }

    /// The line `text[line..end]`: `<position> <id> {"id":<id>,…}`.
    fn entry(text: &Rc<String>, line: usize, end: usize) -> Option<(i64, Listed)> {
        let b = &text.as_bytes()[..end];
        let (position, at) = digits(b, line, b' ')?;
        let (id, json) = digits(b, at, b' ')?;
        let id_text = &b[at..json - 1];
        let stated = b.get(json..)?.strip_prefix(br#"{"id":"#)?;
        let after = stated.strip_prefix(id_text)?;
        if !after.starts_with(b",") || !b.ends_with(b"}") {
            return None;
        }
        Some((position, Listed::shared(id, text, json..end)))
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut text = String::from(PIECE_HEADER);
        for (position, pet) in &self.entries {
            text.push_str(&format!("\n{position} {} {}", pet.id, pet.json()));
        }
        text.into_bytes()
    }

    /// The pet at `position`, if the piece holds it.
    pub fn get(&self, position: i64) -> Option<&Listed> {
        let i = self.entries.binary_search_by_key(&position, |(p, _)| *p);
        i.ok().map(|i| &self.entries[i].1)
    }

    /// The pets it holds at positions `from..=to`, in order.
    pub fn range(&self, from: i64, to: i64) -> &[(i64, Listed)] {
        let start = self.entries.partition_point(|(p, _)| *p < from);
        let end = self.entries.partition_point(|(p, _)| *p <= to);
        &self.entries[start..end.max(start)]
    }

    /// Adds what the truth gave for positions it did not hold.
    pub fn add(&mut self, added: Vec<(i64, Listed)>) {
        self.entries.extend(added);
        sort_by_key(&mut self.entries, |(position, _)| *position);
        self.entries.dedup_by_key(|(position, _)| *position);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::pets_body;

    const STORED: &str = "petstore-index-piece 2\n\
        1 1 {\"id\":1,\"name\":\"a b\",\"categoryId\":3,\"status\":\"sold\"}\n\
        2 5 {\"id\":5,\"name\":\"b\\n\",\"categoryId\":3,\"status\":\"sold\"}";

    #[test]
    fn pieces_hold_each_pet_as_its_response_json_and_check_its_shape() {
        let piece = Piece::decode(STORED.as_bytes().to_vec()).unwrap();
        let second = piece.get(2).unwrap();
        assert_eq!(second.id, 5);
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
            "petstore-index-piece 2\n1 1 {\"id\":1,\"name\":\"a\"}\n",
            "petstore-index-piece 2x",
            "petstore-index-piece 3",
        ] {
            assert!(Piece::decode(bad.as_bytes().to_vec()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_newline_search_finds_the_first_one_wherever_it_is() {
        for len in 0..40 {
            for nl in 0..len {
                let mut text = vec![b'x'; len];
                text[nl] = b'\n';
                if nl + 3 < len {
                    text[nl + 3] = b'\n';
                }
                for from in 0..=nl {
                    assert_eq!(newline(&text, from), Some(nl), "{len} {nl} {from}");
                }
            }
            assert_eq!(newline(&vec![b'x'; len], 0), None);
        }
        assert_eq!(
            newline(b"ab\xe2\x80\xa8\n", 0),
            Some(5),
            "non-ASCII before it"
        );
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
        assert_eq!(piece.range(4, 7).len(), 2);
        assert_eq!(piece.range(8, 4).len(), 0);
        assert_eq!(piece.get(5).map(|p| p.id), Some(6));
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
