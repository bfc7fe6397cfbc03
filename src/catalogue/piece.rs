//! The index piece: a cache of the pets at 32 positions of one list, stored
//! as text (`ix2:{list}:{k}`), read by splitting lines.

use std::collections::BTreeMap;

use super::list::Listed;

/// First line of a stored piece: its format.
const PIECE_HEADER: &str = "petstore-index-piece 2";

/// An index piece: the pets it holds, by position. Stored as text: the
/// header line, then one line per pet, `<position> <id> <pet JSON>` (JSON
/// text never holds a raw newline), so reading a piece splits lines instead
/// of parsing JSON, and serving it copies the pets' JSON as it is.
#[derive(Debug, Default, Clone)]
pub struct Piece(pub BTreeMap<i64, Listed>);

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
    pub fn decode(bytes: &[u8]) -> Result<Piece, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        let mut lines = text.split('\n');
        if lines.next() != Some(PIECE_HEADER) {
            return Err("not an index piece of this format".into());
        }
        lines.map(Piece::entry).collect::<Result<_, _>>().map(Piece)
    }

    fn entry(line: &str) -> Result<(i64, Listed), String> {
        let bad = || format!("bad line '{line}'");
        let mut fields = line.splitn(3, ' ');
        let mut number = || fields.next().and_then(|f| f.parse::<i64>().ok());
        let (Some(position), Some(id)) = (number(), number()) else {
            return Err(bad());
        };
        let json = fields.next().ok_or_else(bad)?;
        let stated = json
            .strip_prefix(r#"{"id":"#)
            .and_then(|rest| rest.split_once(','))
            .and_then(|(digits, _)| digits.parse::<i64>().ok());
        if stated != Some(id) || !json.ends_with('}') {
            return Err(bad());
        }
        let json = json.to_string();
        Ok((position, Listed { id, json }))
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut text = String::from(PIECE_HEADER);
        for (position, pet) in &self.0 {
            text.push_str(&format!("\n{position} {} {}", pet.id, pet.json));
        }
        text.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::pets_body;

    #[test]
    fn pieces_hold_each_pet_as_its_response_json_and_check_its_shape() {
        let stored = "petstore-index-piece 2\n\
            1 1 {\"id\":1,\"name\":\"a b\",\"categoryId\":3,\"status\":\"sold\"}\n\
            2 5 {\"id\":5,\"name\":\"b\\n\",\"categoryId\":3,\"status\":\"sold\"}";
        let piece = Piece::decode(stored.as_bytes()).unwrap();
        assert_eq!(piece.0[&2].id, 5);
        assert_eq!(
            piece.0[&2].json(),
            r#"{"id":5,"name":"b\n","categoryId":3,"status":"sold"}"#
        );
        assert_eq!(piece.encode(), stored.as_bytes());
        assert_eq!(
            pets_body(&[piece.0[&1].clone(), piece.0[&2].clone()]),
            format!("[{},{}]", piece.0[&1].json(), piece.0[&2].json()).into_bytes()
        );
        for bad in [
            "[[1,1,3,\"sold\",\"a\"]]",
            "petstore-index-piece 2\n1 2 {\"id\":1,\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1 {\"name\":\"a\"}",
            "petstore-index-piece 2\n1 1",
            "petstore-index-piece 2\nx 1 {\"id\":1,}",
            "petstore-index-piece 3",
        ] {
            assert!(Piece::decode(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
