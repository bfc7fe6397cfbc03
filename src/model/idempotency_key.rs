//! The `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header),
//! parsed once at the boundary into a key the store never sees as sent.

use sha2::{Digest, Sha256};

use crate::errors::ApiError;
use crate::request::Request;

/// The request header (lower-case, as the core sees names).
pub const HEADER: &str = "idempotency-key";
/// The longest key, without the quotes of the quoted form.
pub const MAX_KEY_LEN: usize = 255;

/// A valid `Idempotency-Key`, kept only as its SHA-256: the store sees no
/// client text, so every backend's key rules hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    digest: [u8; 32],
}

impl IdempotencyKey {
    /// The request's key: none without the header; a 400 `invalid_header`
    /// for a repeated header or a value that is not 1–255 visible ASCII
    /// characters (no `"` or `\`), bare or inside one pair of double quotes.
    pub fn from_request(request: &Request) -> Result<Option<IdempotencyKey>, ApiError> {
        let mut values = request.header_values(HEADER);
        let Some(value) = values.next() else {
            return Ok(None);
        };
        if values.next().is_some() {
            return Err(invalid("it must be sent once"));
        }
        IdempotencyKey::parse(value).map(Some)
    }

    pub fn parse(value: &[u8]) -> Result<IdempotencyKey, ApiError> {
        let key = value
            .strip_prefix(b"\"")
            .and_then(|v| v.strip_suffix(b"\""))
            .unwrap_or(value);
        if key.is_empty() || key.len() > MAX_KEY_LEN {
            return Err(invalid("it must be 1 to 255 characters long"));
        }
        let allowed = |b: &u8| b.is_ascii_graphic() && *b != b'"' && *b != b'\\';
        if !key.iter().all(allowed) {
            return Err(invalid(
                "it may only hold visible ASCII characters other than '\"' and '\\', \
                 optionally inside one pair of double quotes",
            ));
        }
        Ok(IdempotencyKey {
            digest: Sha256::digest(key).into(),
        })
    }

    /// The key's SHA-256, all the store ever sees of it.
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }
}

fn invalid(why: &str) -> ApiError {
    ApiError::InvalidHeader(format!("header 'Idempotency-Key' is not valid: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_bare_forms_are_the_same_key() {
        let bare = IdempotencyKey::parse(b"abc-123").unwrap();
        assert_eq!(IdempotencyKey::parse(b"\"abc-123\"").unwrap(), bare);
        assert_ne!(IdempotencyKey::parse(b"abc-124").unwrap(), bare);
        let mut hex = String::new();
        crate::hex::push(&mut hex, bare.digest());
        // SHA-256("abc-123"): what the store's key is made of.
        assert_eq!(
            hex,
            "5942d94f524882e0f29bf0a1e5a6dcc952eea1c0c21dd3588a3fc7db9716db0c"
        );
    }

    #[test]
    fn keys_out_of_the_allowed_set_are_invalid_headers() {
        let long = "k".repeat(MAX_KEY_LEN + 1);
        let longest = "k".repeat(MAX_KEY_LEN);
        assert!(IdempotencyKey::parse(longest.as_bytes()).is_ok());
        assert!(IdempotencyKey::parse(format!("\"{longest}\"").as_bytes()).is_ok());
        for bad in [
            &b""[..],
            b"\"\"",
            long.as_bytes(),
            b"a b",
            b"a\"b",
            b"\"ab",
            b"a\\b",
            b"caf\xc3\xa9",
            b"tab\t",
        ] {
            let e = IdempotencyKey::parse(bad).unwrap_err();
            assert_eq!(e.code(), "invalid_header", "{bad:?}");
            assert!(e.message().contains("Idempotency-Key"));
        }
    }
}
