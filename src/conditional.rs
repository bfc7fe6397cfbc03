//! Conditional reads (RFC 9110 §8.8.3, §13.1.2): a strong `ETag` computed
//! from the body of a 200, and `If-None-Match` answered with 304. The 200 is
//! computed first, so a 304 costs exactly the key-value calls of the 200.

use http::StatusCode;

use crate::request::Request;
use crate::response::Response;

/// `Cache-Control` of getPet's 200: a pet never changes in v1.
pub const PET_CACHE: &str = "private, max-age=86400";
/// `Cache-Control` of a list page's 200: revalidate every time.
pub const LIST_CACHE: &str = "private, no-cache";

/// The strong entity tag of a body: its 64-bit SipHash-1-3 with zero keys,
/// so it changes when the body does (two versions of one page collide with
/// odds of 2^-64). Our own code, fixed by a test vector, because std's
/// `DefaultHasher` (the same function today) may change with any Rust
/// release, and a changed tag costs every cached client a 200 for a 304.
/// Not SHA-256: on a page of 100 pets that cost ~40 µs per request, a sixth
/// of the request.
pub fn etag(body: &[u8]) -> String {
    format!("\"{:016x}\"", siphash13(body))
}

/// SipHash-1-3 (Aumasson and Bernstein; one compression round per 8-byte
/// word, three to finalize) with the key 0.
fn siphash13(data: &[u8]) -> u64 {
    let mut v = [
        0x736f_6d65_7073_6575_u64,
        0x646f_7261_6e64_6f6d,
        0x6c79_6765_6e65_7261,
        0x7465_6462_7974_6573,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let mut words = data.chunks_exact(8);
    for word in &mut words {
        let m = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        v[3] ^= m;
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = (data.len() as u64 & 0xff) << 56;
    for (i, byte) in words.remainder().iter().enumerate() {
        last |= u64::from(*byte) << (8 * i);
    }
    v[3] ^= last;
    round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    for _ in 0..3 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// Whether `If-None-Match` (every value the request sent) matches `tag` by
/// weak comparison: `*`, or a listed tag whose opaque part equals ours,
/// `W/` or not. A malformed member matches nothing.
pub fn none_match(request: &Request, tag: &str) -> bool {
    request.header_values("if-none-match").any(|value| {
        let Ok(value) = std::str::from_utf8(value) else {
            return false;
        };
        if value.trim() == "*" {
            return true;
        }
        value.split(',').any(|member| {
            let member = member.trim();
            let opaque = member.strip_prefix("W/").unwrap_or(member);
            opaque == tag
        })
    })
}

/// A 200 with its `ETag` and `Cache-Control`, or the 304 that replaces it
/// when the client holds the same representation: no body, and the fields a
/// 304 must repeat (`ETag`, `Cache-Control`), plus `keep` (such as a list
/// page's `Link`, which may change while its body does not).
pub fn respond(request: &Request, ok: Response, cache: &str, keep: &[&str]) -> Response {
    let tag = etag(&ok.body);
    if none_match(request, &tag) {
        let mut not_modified = Response {
            status: StatusCode::NOT_MODIFIED,
            headers: Vec::new(),
            body: Vec::new(),
        };
        for (name, value) in &ok.headers {
            if keep.contains(name) {
                not_modified.headers.push((name, value.clone()));
            }
        }
        return not_modified
            .with_header("etag", tag)
            .with_header("cache-control", cache);
    }
    ok.with_header("etag", tag)
        .with_header("cache-control", cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&str]) -> Request {
        Request::get_with_header("If-None-Match", values)
    }

    #[test]
    fn tags_are_strong_quoted_and_follow_the_body() {
        let tag = etag(b"[]");
        assert_eq!(tag.len(), 18);
        assert!(tag.starts_with('"') && tag.ends_with('"'));
        assert_eq!(tag, etag(b"[]"));
        assert_ne!(tag, etag(b"[ ]"));
    }

    #[test]
    fn tags_are_fixed_across_rust_releases() {
        // Pinned: a build with any Rust release tags these bodies so.
        assert_eq!(etag(b""), "\"d1fba762150c532c\"");
        assert_eq!(etag(b"[]"), etag(b"[]"));
        // Today the same function as std's DefaultHasher, so the tags of
        // 1.2.0 (which used it) stay valid across the upgrade.
        use std::hash::{DefaultHasher, Hasher};
        for len in 0..40 {
            let body: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let mut std = DefaultHasher::new();
            std.write(&body);
            assert_eq!(etag(&body), format!("\"{:016x}\"", std.finish()), "{len}");
        }
    }

    #[test]
    fn every_if_none_match_form() {
        let tag = etag(b"body");
        let weak = format!("W/{tag}");
        let listed = format!("\"other\", {tag}");
        let weak_listed = format!("\"other\",W/{tag}");
        for matching in [tag.as_str(), "*", " * ", &weak, &listed, &weak_listed] {
            assert!(none_match(&with(&[matching]), &tag), "{matching}");
        }
        let unquoted = tag.trim_matches('"').to_string();
        let stale = etag(b"old body");
        for other in [
            stale.as_str(),
            "",
            "W/",
            &unquoted,
            "\"other\", W/\"x\"",
            "**",
        ] {
            assert!(!none_match(&with(&[other]), &tag), "{other}");
        }
        assert!(!none_match(&with(&[]), &tag));
        // Sent as two header lines: either may match.
        assert!(none_match(&with(&[&stale, &tag]), &tag));
    }
}
