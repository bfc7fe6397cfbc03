//! The index piece: a cache of the pets at 32 positions of one list, stored
//! as text (`ix2:{list}:{k}`), read by splitting lines. Reading one keeps its
//! text whole: each pet it holds is a span of that text, so serving a page
//! copies each pet's JSON once, into the body, and allocates nothing per pet.

use std::rc::Rc;

use super::list::Listed;

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

impl Piece {
    /// Checks each line's shape (a pet object that states the line's id): a
    /// piece is our own derived data, and parsing every pet would cost what
    /// serving them as stored saves.
    pub fn decode(bytes: Vec<u8>) -> Result<Piece, String> {
        let text = Rc::new(String::from_utf8(bytes).map_err(|e| e.to_string())?);
        let mut lines = text.split('\n');
        if lines.next() != Some(PIECE_HEADER) {
            return Err("not an index piece of this format".into());
        }
        let mut offset = PIECE_HEADER.len() + 1;
        let mut entries = Vec::with_capacity(32);
        for line in lines {
            entries.push(Piece::entry(&text, line, offset)?);
            offset += line.len() + 1;
        }
        // Written in ascending position; anything else is put in order.
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            entries.sort_by_key(|(position, _)| *position);
            entries.dedup_by_key(|(position, _)| *position);
        }
        Ok(Piece { entries })
    }

    /// `line` starts at byte `offset` of `text`.
    fn entry(text: &Rc<String>, line: &str, offset: usize) -> Result<(i64, Listed), String> {
        let bad = || format!("bad line '{line}'");
        let (position, rest) = line.split_once(' ').ok_or_else(bad)?;
        let (id, json) = rest.split_once(' ').ok_or_else(bad)?;
        let (Ok(position), Ok(id)) = (position.parse::<i64>(), id.parse::<i64>()) else {
            return Err(bad());
        };
        let stated = json
            .strip_prefix(r#"{"id":"#)
            .and_then(|rest| rest.split_once(','))
            .and_then(|(digits, _)| digits.parse::<i64>().ok());
        if stated != Some(id) || !json.ends_with('}') {
            return Err(bad());
        }
        let start = offset + line.len() - json.len();
        Ok((
            position,
            Listed::shared(id, text, start..start + json.len()),
        ))
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

    /// Whether it holds any position past `position`.
    pub fn holds_after(&self, position: i64) -> bool {
        self.entries.last().is_some_and(|(p, _)| *p > position)
    }

    /// Adds what the truth gave for positions it did not hold.
    pub fn add(&mut self, added: Vec<(i64, Listed)>) {
        self.entries.extend(added);
        self.entries.sort_by_key(|(position, _)| *position);
        self.entries.dedup_by_key(|(position, _)| *position);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::pets_body;

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
            "petstore-index-piece 3",
        ] {
            assert!(Piece::decode(bad.as_bytes().to_vec()).is_err(), "{bad}");
        }
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
        assert!(piece.holds_after(6) && !piece.holds_after(7));
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
