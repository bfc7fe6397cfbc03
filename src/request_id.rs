//! The request id: the client's `X-Request-Id` when it is usable, else one
//! made from 128 random bits. Echoed on every response and logged, so a
//! client's complaint leads to its log line.

use crate::request::Request;

/// The header, lower-case as the core sees names.
pub const HEADER: &str = "x-request-id";
/// The longest client id taken as it is.
pub const MAX_LEN: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    /// The client's id if it sent exactly one of 1–128 characters of
    /// `[A-Za-z0-9._:-]`; otherwise (none, repeated, or any other value,
    /// which is replaced, never rejected) 32 hex digits of `random()`,
    /// called only then.
    pub fn for_request(request: &Request, random: impl FnOnce() -> [u8; 16]) -> RequestId {
        request
            .single_header(HEADER)
            .filter(|v| Self::usable(v))
            .and_then(|v| std::str::from_utf8(v).ok())
            .map(|v| RequestId(v.to_string()))
            .unwrap_or_else(|| RequestId::generated(random()))
    }

    fn usable(value: &[u8]) -> bool {
        (1..=MAX_LEN).contains(&value.len())
            && value
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(b))
    }

    pub fn generated(random: [u8; 16]) -> RequestId {
        let mut id = String::with_capacity(32);
        crate::hex::push(&mut id, &random);
        RequestId(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&[u8]]) -> Request {
        Request::get_with_header("X-Request-Id", values)
    }

    const RANDOM: [u8; 16] = [0xab; 16];

    #[test]
    fn a_usable_client_id_is_kept() {
        let longest = "a".repeat(128);
        for id in ["abc", "2f1c:9A.b-c_d", longest.as_str()] {
            let got = RequestId::for_request(&with(&[id.as_bytes()]), || RANDOM);
            assert_eq!(got.as_str(), id);
        }
    }

    #[test]
    fn anything_else_is_replaced_by_a_generated_id() {
        let generated = "ab".repeat(16);
        let long = "a".repeat(129);
        for values in [
            &[][..],
            &[&b""[..]],
            &[long.as_bytes()],
            &[b"a b"],
            &[b"a/b"],
            &["é".as_bytes()],
            &[b"a\n"],
            &[b"one", b"two"],
        ] {
            let got = RequestId::for_request(&with(values), || RANDOM);
            assert_eq!(got.as_str(), generated, "{values:?}");
        }
    }

    #[test]
    fn generated_ids_are_the_random_bits_in_hex() {
        let id = RequestId::generated([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255]);
        assert_eq!(id.as_str(), "000102030405060708090a0b0c0d0eff");
    }
}
