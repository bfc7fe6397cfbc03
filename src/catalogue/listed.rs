//! A pet as a list holds it: its id and its JSON, a span of a shared text
//! (the index piece it was read from), so a page is served without decoding
//! and re-encoding pets, and cloning one copies no text.

use std::ops::Range;
use std::rc::Rc;

use crate::errors::ApiError;
use crate::model::Pet;

use super::record::encode_pet;

/// A pet as a list holds it: its id, and its JSON exactly as the response
/// carries it, so a page is served without decoding and re-encoding pets.
/// The JSON is a span of a shared text (the index piece it was read from):
/// cloning a `Listed` copies no text.
#[derive(Debug, Clone)]
pub struct Listed {
    pub id: i64,
    text: Rc<String>,
    span: Range<usize>,
}

impl Listed {
    /// The pet at `span` of `text`.
    pub(super) fn shared(id: i64, text: &Rc<String>, span: Range<usize>) -> Listed {
        Listed {
            id,
            text: Rc::clone(text),
            span,
        }
    }

    pub(super) fn of(pet: &Pet) -> Result<Listed, ApiError> {
        let json = String::from_utf8(encode_pet(pet)?)
            .map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))?;
        let span = 0..json.len();
        Ok(Listed {
            id: pet.id,
            text: Rc::new(json),
            span,
        })
    }

    /// A pet's stored JSON, as `encode_pet` wrote it (it begins with its
    /// id: `{"id":<id>,`); `None` for anything else.
    pub(super) fn from_json(json: Vec<u8>) -> Option<Listed> {
        let digits = json.strip_prefix(br#"{"id":"#)?;
        let len = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let id = std::str::from_utf8(&digits[..len]).ok()?.parse().ok()?;
        let text = String::from_utf8(json).ok()?;
        let span = 0..text.len();
        Some(Listed {
            id,
            text: Rc::new(text),
            span,
        })
    }

    /// The pet's JSON text, as in responses.
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

/// The JSON array of a page's pets: the body of a list page.
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
