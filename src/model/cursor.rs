//! The cursor of a walk: where its next page begins, as the `next` link
//! carries it. Opaque to clients and to the model: a short text whose
//! parts the catalogue's layouts each read (docs/key-value-layout.md);
//! here only its alphabet and its numbers.

use crate::errors::ApiError;

/// Longest cursor taken: a page's own are at most a few hundred characters.
const MAX_LEN: usize = 2048;

/// A cursor: 1 to 2,048 characters of `0-9 a-z . _ -`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor(String);

impl Cursor {
    /// `raw`, if it can be a cursor at all.
    pub fn parse(raw: &str) -> Option<Cursor> {
        let alphabet = |b: u8| b.is_ascii_digit() || b.is_ascii_lowercase() || b".-_".contains(&b);
        let ok = !raw.is_empty() && raw.len() <= MAX_LEN && raw.bytes().all(alphabet);
        ok.then(|| Cursor(raw.to_string()))
    }

    /// The cursor a page made of its layouts' parts.
    pub fn made(text: String) -> Cursor {
        Cursor(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The answer to a cursor no page of this service made.
    pub fn malformed() -> ApiError {
        ApiError::InvalidParameter(
            "query parameter 'cursor' is malformed: use the one in the 'next' link".into(),
        )
    }
}

/// A number of a cursor or a stored value, strictly: 1 to 18 ASCII digits
/// (an i64 always), no sign, no leading zero but for `0` itself.
pub fn number(text: &str) -> Option<i64> {
    let ok = !text.is_empty()
        && text.len() <= 18
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    ok.then(|| text.parse().ok()).flatten()
}

/// A stored field written zero-padded to `width` digits of `radix` (10, or 16 in
/// lowercase as `{:x}` writes): exactly that many, no sign, nothing else.
pub fn padded(text: &str, width: usize, radix: u32) -> Option<u64> {
    if text.len() != width || width == 0 {
        return None;
    }
    text.bytes().try_fold(0u64, |n, b| {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        (u32::from(d) < radix).then_some(())?;
        n.checked_mul(u64::from(radix))?.checked_add(u64::from(d))
    })
}

/// `text` split after its leading digits.
pub fn split_digits(text: &str) -> (&str, &str) {
    let end = text.bytes().take_while(u8::is_ascii_digit).count();
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_field_is_read_at_its_width_and_alphabet_only() {
        assert_eq!(padded("0000000000005", 13, 10), Some(5));
        assert_eq!(padded("1800000000123", 13, 10), Some(1_800_000_000_123));
        assert_eq!(padded("000000000000feed", 16, 16), Some(0xfeed));
        assert_eq!(padded("ffffffffffffffff", 16, 16), Some(u64::MAX));
        for (bad, width, radix) in [
            ("+000000000005", 13, 10),
            ("-000000000005", 13, 10),
            ("000000000005", 13, 10),
            ("00000000000005", 13, 10),
            (" 000000000005", 13, 10),
            ("000000000000000a", 16, 10),
            ("+00000000000feed", 16, 16),
            ("-00000000000feed", 16, 16),
            ("000000000000FEED", 16, 16),
            ("00000000000feed", 16, 16),
            ("0000000000000feed", 16, 16),
            ("00000000000000g1", 16, 16),
            ("", 0, 10),
        ] {
            assert_eq!(padded(bad, width, radix), None, "{bad}");
        }
    }

    #[test]
    fn a_cursor_is_short_text_of_its_alphabet() {
        assert_eq!(Cursor::parse("c5u3_1l7.0").unwrap().as_str(), "c5u3_1l7.0");
        for bad in ["", "C5", "c 5", "c5%", "c5/", &"1".repeat(MAX_LEN + 1)] {
            assert_eq!(Cursor::parse(bad), None, "{bad}");
        }
        assert_eq!(number("42"), Some(42));
        for bad in ["", "01", "-1", "1234567890123456789", "4a"] {
            assert_eq!(number(bad), None, "{bad}");
        }
        assert_eq!(split_digits("12u3"), ("12", "u3"));
    }
}
