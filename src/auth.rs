//! Bearer API keys: parsing the `Authorization` header and comparing the key
//! in constant time against the configured keys (the `api_key` variable).
//!
//! The variable may hold several comma-separated keys, so an operator can add
//! a new key, move clients over, then remove the old one without downtime.

use crate::errors::ApiError;
use crate::request::Request;

/// The keys that grant access. Never printed: `Debug` shows only the count.
#[derive(Clone)]
pub struct ApiKeys(Vec<Vec<u8>>);

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKeys({} keys)", self.0.len())
    }
}

impl ApiKeys {
    /// Parses the variable: keys separated by commas, blanks around them
    /// ignored, empty entries dropped.
    pub fn parse(variable: &str) -> ApiKeys {
        ApiKeys(
            variable
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(|k| k.as_bytes().to_vec())
                .collect(),
        )
    }

    /// Accepts the request if it carries exactly one `Authorization: Bearer
    /// <key>` header (scheme case-insensitive, one space) whose key is one of
    /// ours. Every configured key is compared, in constant time, whatever matches.
    pub fn authenticate(&self, request: &Request) -> Result<(), ApiError> {
        let missing = ApiError::Unauthorized { wrong_key: false };
        let token = request
            .single_header("authorization")
            .and_then(bearer_token)
            .ok_or(missing)?;
        let matched = self
            .0
            .iter()
            .fold(false, |acc, key| acc | constant_time_eq(key, token));
        if matched {
            Ok(())
        } else {
            Err(ApiError::Unauthorized { wrong_key: true })
        }
    }
}

/// The token of `Bearer <token>`: scheme in any case, exactly one space, a
/// non-empty token without blanks.
fn bearer_token(header: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = header.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let valid = !token.is_empty() && token.iter().all(|b| b.is_ascii_graphic());
    valid.then_some(token)
}

/// Compares without an early exit: the time depends on the lengths only,
/// not on where the bytes differ.
fn constant_time_eq(expected: &[u8], given: &[u8]) -> bool {
    let mut diff = expected.len() ^ given.len();
    for i in 0..expected.len().max(given.len()) {
        let a = expected.get(i).copied().unwrap_or(0);
        let b = given.get(i).copied().unwrap_or(0);
        diff |= usize::from(a ^ b);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Body;
    use http::Method;

    fn with_auth(values: &[&str]) -> Request {
        let headers = values
            .iter()
            .map(|v| ("Authorization".to_string(), v.as_bytes().to_vec()))
            .collect();
        Request::new(Method::GET, "/v1/pets", headers, Body::Complete(vec![]))
    }

    #[test]
    fn accepts_each_configured_key_for_rotation() {
        let keys = ApiKeys::parse(" old-key , new-key ,,");
        assert_eq!(format!("{keys:?}"), "ApiKeys(2 keys)");
        assert_eq!(keys.authenticate(&with_auth(&["Bearer old-key"])), Ok(()));
        assert_eq!(keys.authenticate(&with_auth(&["Bearer new-key"])), Ok(()));
        assert_eq!(keys.authenticate(&with_auth(&["bEaReR new-key"])), Ok(()));
    }

    #[test]
    fn missing_or_malformed_credentials_are_unauthorized_without_invalid_token() {
        let keys = ApiKeys::parse("k1");
        let missing = Err(ApiError::Unauthorized { wrong_key: false });
        assert_eq!(keys.authenticate(&with_auth(&[])), missing);
        for bad in [
            "k1",
            "Bearer",
            "Bearer ",
            "Bearer  k1",
            "Basic k1",
            "Bearerk1",
            "Bearer k1 x",
        ] {
            assert_eq!(keys.authenticate(&with_auth(&[bad])), missing, "{bad:?}");
        }
        assert_eq!(
            keys.authenticate(&with_auth(&["Bearer k1", "Bearer k1"])),
            missing
        );
    }

    #[test]
    fn wrong_key_is_invalid_token() {
        let keys = ApiKeys::parse("k1,k2");
        let wrong = Err(ApiError::Unauthorized { wrong_key: true });
        for bad in [
            "Bearer k3",
            "Bearer k",
            "Bearer k12",
            "Bearer K1",
            "Bearer k1,k2",
        ] {
            assert_eq!(keys.authenticate(&with_auth(&[bad])), wrong, "{bad:?}");
        }
        assert_eq!(
            ApiKeys::parse(" , ").authenticate(&with_auth(&["Bearer x"])),
            wrong
        );
    }

    #[test]
    fn constant_time_eq_is_exact() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn debug_never_shows_a_key() {
        assert_eq!(format!("{:?}", ApiKeys::parse("secret")), "ApiKeys(1 keys)");
    }
}
