//! Bearer API keys: parsing the `api_key` variable and the `Authorization`
//! header, and comparing in constant time (RustCrypto's `subtle`).
//!
//! The variable holds comma-separated entries, each a key or `sha256:<64
//! hex>`, the SHA-256 of a key, so that a secret store need not hold usable
//! keys. Several entries let an operator rotate keys without downtime.

use sha2::{Digest, Sha256};
use subtle::{Choice, ConstantTimeEq};

use crate::errors::ApiError;
use crate::request::Request;

/// The prefix of an entry that is a key's SHA-256 rather than the key.
pub const DIGEST_PREFIX: &str = "sha256:";

/// The keys that grant access, as their SHA-256 digests. Never printed:
/// `Debug` shows only the count.
#[derive(Clone)]
pub struct ApiKeys(Vec<[u8; 32]>);

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKeys({} keys)", self.0.len())
    }
}

impl ApiKeys {
    /// Parses the variable: entries separated by commas, blanks around them
    /// and empty entries ignored. Any unusable entry rejects the whole
    /// variable, with a reason that names the entry by its number, never
    /// its text: a half-read list of keys would lock clients out silently.
    pub fn parse(variable: &str) -> Result<ApiKeys, String> {
        let mut keys = Vec::new();
        for (i, entry) in variable.split(',').enumerate() {
            let entry = entry.trim_matches([' ', '\t']);
            let n = i + 1;
            if entry.is_empty() {
                continue;
            }
            if let Some(hex) = entry.strip_prefix(DIGEST_PREFIX) {
                let digest = decode_digest(hex).ok_or_else(|| {
                    format!("entry {n} is not '{DIGEST_PREFIX}' followed by 64 hex digits")
                })?;
                keys.push(digest);
            } else if entry.contains([' ', '\t']) {
                return Err(format!("entry {n} has blanks inside"));
            } else if !entry.is_ascii() {
                return Err(format!("entry {n} is not ASCII"));
            } else if !entry.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(format!("entry {n} holds control characters"));
            } else {
                keys.push(Sha256::digest(entry).into());
            }
        }
        if keys.is_empty() {
            return Err("it holds no key (empty, or only separators)".into());
        }
        Ok(ApiKeys(keys))
    }

    /// Accepts the request if it carries exactly one `Authorization: Bearer
    /// <key>` header (scheme case-insensitive, one space) whose key is one of
    /// ours. The key's digest is compared with every entry, in constant time,
    /// whatever matches.
    pub fn authenticate(&self, request: &Request) -> Result<(), ApiError> {
        let missing = ApiError::Unauthorized { wrong_key: false };
        let token = request
            .single_header("authorization")
            .and_then(bearer_token)
            .ok_or(missing)?;
        let given: [u8; 32] = Sha256::digest(token).into();
        let matched = self
            .0
            .iter()
            .fold(Choice::from(0), |acc, key| acc | key.ct_eq(&given));
        if bool::from(matched) {
            Ok(())
        } else {
            Err(ApiError::Unauthorized { wrong_key: true })
        }
    }
}

/// 64 hex digits (either case) → 32 bytes.
fn decode_digest(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        digest[i] = crate::hex::byte(pair)?;
    }
    Some(digest)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_auth(values: &[&str]) -> Request {
        Request::get_with_header("Authorization", values)
    }

    #[test]
    fn accepts_each_configured_key_for_rotation() {
        let keys = ApiKeys::parse(" old-key , new-key ,,").unwrap();
        // Debug counts the keys and never shows one.
        assert_eq!(format!("{keys:?}"), "ApiKeys(2 keys)");
        assert_eq!(keys.authenticate(&with_auth(&["Bearer old-key"])), Ok(()));
        assert_eq!(keys.authenticate(&with_auth(&["Bearer new-key"])), Ok(()));
        assert_eq!(keys.authenticate(&with_auth(&["bEaReR new-key"])), Ok(()));
    }

    #[test]
    fn missing_or_malformed_credentials_are_unauthorized_without_invalid_token() {
        let keys = ApiKeys::parse("k1").unwrap();
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
        let keys = ApiKeys::parse("k1,k2").unwrap();
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
    }

    /// `printf %s k1 | sha256sum`, as docs/operations.md shows.
    const K1_DIGEST: &str = "6ab9f1eb8f7d3388f4f9d586f66e99fd54080df2c446f0e58668b09c08a16dd0";

    #[test]
    fn digest_entries_accept_their_key_mixed_with_plain_keys() {
        let digest = format!("sha256:{K1_DIGEST}");
        let keys = ApiKeys::parse(&format!("{digest}, k2")).unwrap();
        assert_eq!(keys.authenticate(&with_auth(&["Bearer k1"])), Ok(()));
        assert_eq!(keys.authenticate(&with_auth(&["Bearer k2"])), Ok(()));
        let wrong = Err(ApiError::Unauthorized { wrong_key: true });
        // The digest itself is not a key.
        let as_token = format!("Bearer {digest}");
        assert_eq!(keys.authenticate(&with_auth(&[&as_token])), wrong);
        assert_eq!(keys.authenticate(&with_auth(&["Bearer k3"])), wrong);
        // Upper-case hex is the same digest.
        let upper = format!("sha256:{}", digest[7..].to_uppercase());
        let keys = ApiKeys::parse(&upper).unwrap();
        assert_eq!(keys.authenticate(&with_auth(&["Bearer k1"])), Ok(()));
    }

    #[test]
    fn an_unusable_entry_rejects_the_variable_without_showing_it() {
        for (variable, reason) in [
            ("", "no key"),
            (" , ,", "no key"),
            ("good, secret key", "entry 2 has blanks inside"),
            ("clé", "entry 1 is not ASCII"),
            ("a\u{7}b", "entry 1 holds control characters"),
            ("sha256:abc", "entry 1 is not 'sha256:'"),
            (
                &format!("k, sha256:{}", "g".repeat(64)),
                "entry 2 is not 'sha256:'",
            ),
            (
                &format!("sha256:{}0", K1_DIGEST),
                "entry 1 is not 'sha256:'",
            ),
            // A sign is not a hex digit (`from_str_radix` would take `+f`).
            (
                &format!("sha256:+f{}", &K1_DIGEST[2..]),
                "entry 1 is not 'sha256:'",
            ),
        ] {
            let e = ApiKeys::parse(variable).unwrap_err();
            assert!(e.contains(reason), "{variable:?}: {e}");
            assert!(!e.contains("secret") && !e.contains("clé"), "{e}");
        }
    }
}
