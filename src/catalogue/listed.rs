//! A pet as a list holds it: its id and its JSON, a span of the piece it
//! was read from, served without decoding it; a clone copies no text.

use std::{ops::Range, rc::Rc};

use crate::model::{number, split_digits, PetStatus};

/// Its id is the one its JSON states (`{"id":<id>,…}`).
#[derive(Debug, Clone)]
pub struct Listed {
    id: i64,
    text: Rc<String>,
    span: Range<usize>,
}

impl Listed {
    /// The pet whose JSON is `text[span]`, stating `id` (a piece's line,
    /// checked as it was read).
    pub fn shared(id: i64, text: &Rc<String>, span: Range<usize>) -> Listed {
        let text = Rc::clone(text);
        debug_assert!(text[span.clone()].starts_with(&format!("{{\"id\":{id},")));
        Listed { id, text, span }
    }

    pub fn id(&self) -> i64 {
        self.id
    }

    /// A pet's JSON as `encode_pet` wrote it (`{"id":<id>,…}`), its shape
    /// checked, not every member decoded.
    pub fn from_json(json: Vec<u8>) -> Option<Listed> {
        let text = Rc::new(String::from_utf8(json).ok()?);
        let (digits, rest) = split_digits(text.strip_prefix(r#"{"id":"#)?);
        let id = number(digits).filter(|_| rest.starts_with(',') && text.ends_with('}'))?;
        let span = 0..text.len();
        Some(Listed { id, text, span })
    }

    /// The pet's status: in JSON `encode_pet` wrote, `"status":"` can only
    /// be that member (a quote in a string is escaped).
    pub fn status(&self) -> Option<PetStatus> {
        let json = self.json();
        let value = &json[json.find(r#""status":""#)? + 10..];
        PetStatus::parse(&value[..value.find('"')?])
    }

    pub fn json(&self) -> &str {
        &self.text[self.span.clone()]
    }
}

impl PartialEq for Listed {
    fn eq(&self, other: &Listed) -> bool {
        self.id == other.id && self.json() == other.json()
    }
}

impl Eq for Listed {}

pub fn pets_body(pets: &[Listed]) -> Vec<u8> {
    let mut body = Vec::with_capacity(2 + pets.iter().map(|p| p.json().len() + 1).sum::<usize>());
    body.push(b'[');
    for (i, pet) in pets.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(pet.json().as_bytes());
    }
    body.push(b']');
    body
}
