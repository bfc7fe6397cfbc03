//! Browsers (CORS, fetch.spec.whatwg.org): the origins of the `cors_origins`
//! variable may call the API from a web page. Their preflights are answered
//! without a key (browsers never send one on a preflight); their real
//! responses name them in `Access-Control-Allow-Origin`. Nothing changes for
//! anyone else, and with the variable empty no CORS header is ever sent.
//! (Every response says `Vary: Origin`: `routes::handle`.)

use http::{Method, StatusCode};

use crate::request::Request;
use crate::response::Response;

/// Request headers a client of this API sends.
pub const ALLOW_HEADERS: &str =
    "Authorization, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id";
/// Response headers a page's script may read.
pub const EXPOSE_HEADERS: &str =
    "Link, Location, ETag, Deprecation, Sunset, Retry-After, X-Request-Id, Idempotent-Replayed";
/// How long a browser may keep a preflight's answer (seconds).
pub const MAX_AGE: &str = "600";

/// The allowed origins, each `scheme://host[:port]` as browsers send it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsOrigins(Vec<String>);

impl CorsOrigins {
    /// Parses the variable: origins separated by commas, blanks around them
    /// ignored; empty means none. Any entry that is not an `http`/`https`
    /// origin in the form browsers send (lower-case, no path, no trailing
    /// slash; `*` is not supported) rejects the whole variable.
    pub fn parse(variable: &str) -> Result<CorsOrigins, String> {
        let mut origins = Vec::new();
        for (i, entry) in variable.split(',').enumerate() {
            let entry = entry.trim_matches([' ', '\t']);
            if entry.is_empty() {
                continue;
            }
            if !is_origin(entry) {
                return Err(format!(
                    "entry {} ('{entry}') is not an origin such as https://app.example.com \
                     or http://127.0.0.1:8080 (lower-case, no path)",
                    i + 1
                ));
            }
            origins.push(entry.to_string());
        }
        Ok(CorsOrigins(origins))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The request's `Origin`, if it is one of ours.
    fn allowed<'r>(&self, request: &'r Request) -> Option<&'r str> {
        let origin = std::str::from_utf8(request.single_header("origin")?).ok()?;
        self.0.iter().any(|o| o == origin).then_some(origin)
    }

    /// The answer to a CORS preflight from an allowed origin for a route
    /// that exists (its methods: `allow`), or `None` when the request is not
    /// one: then it is handled like any request, authentication first.
    pub fn preflight(&self, request: &Request, allow: Option<&str>) -> Option<Response> {
        let allow = allow?;
        if request.method != Method::OPTIONS
            || request
                .single_header("access-control-request-method")
                .is_none()
        {
            return None;
        }
        let origin = self.allowed(request)?;
        Some(
            Response {
                status: StatusCode::NO_CONTENT,
                headers: Vec::new(),
                body: Vec::new(),
            }
            .with_header("access-control-allow-origin", origin)
            .with_header("access-control-allow-methods", allow)
            .with_header("access-control-allow-headers", ALLOW_HEADERS)
            .with_header("access-control-max-age", MAX_AGE),
        )
    }

    /// A real response, granted to an allowed origin. An `OPTIONS` request
    /// is left alone: a granted preflight's answer is complete, any other is
    /// answered as before.
    pub fn decorate(&self, request: &Request, response: Response) -> Response {
        if request.method == Method::OPTIONS {
            return response;
        }
        match self.allowed(request) {
            Some(origin) => response
                .with_header("access-control-allow-origin", origin)
                .with_header("access-control-expose-headers", EXPOSE_HEADERS),
            None => response,
        }
    }
}

/// `http(s)://host[:port]`: host of letters, digits, `.` and `-` (or an
/// IPv6 literal in brackets), lower-case, port 1–65535.
fn is_origin(entry: &str) -> bool {
    let Some(rest) = entry
        .strip_prefix("https://")
        .or_else(|| entry.strip_prefix("http://"))
    else {
        return false;
    };
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && (h.ends_with(']') || !h.contains(':')) => (h, Some(p)),
        _ => (rest, None),
    };
    let host_ok = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !v6.is_empty()
            && v6.bytes().all(|b| {
                (b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) || b == b':' || b == b'.'
            })
    } else {
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
    };
    let port_ok = port.is_none_or(|p| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u16>().is_ok_and(|n| n > 0)
    });
    host_ok && port_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Body;

    #[test]
    fn origins_parse_as_browsers_send_them() {
        let ok = CorsOrigins::parse(
            " https://app.example.com , http://127.0.0.1:8080,,http://[::1]:3000",
        )
        .unwrap();
        assert_eq!(ok.0.len(), 3);
        assert!(CorsOrigins::parse("").unwrap().is_empty());
        assert!(CorsOrigins::parse(" , ").unwrap().is_empty());
        for bad in [
            "*",
            "app.example.com",
            "https://app.example.com/",
            "https://app.example.com/path",
            "https://App.example.com",
            "ftp://example.com",
            "https://example.com:0",
            "https://example.com:99999",
            "https://example.com:",
            "https://exa mple.com",
            "https://",
        ] {
            let e = CorsOrigins::parse(&format!("https://ok.example, {bad}")).unwrap_err();
            assert!(e.contains("entry 2"), "{bad}: {e}");
        }
    }

    fn request(method: Method, headers: &[(&str, &str)]) -> Request {
        let headers = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        Request::new(method, "/v1/pets", headers, Body::Complete(vec![]))
    }

    #[test]
    fn a_preflight_needs_an_allowed_origin_a_route_and_a_requested_method() {
        let cors = CorsOrigins::parse("http://a.test").unwrap();
        let preflight = [
            ("Origin", "http://a.test"),
            ("Access-Control-Request-Method", "POST"),
        ];
        let r = cors
            .preflight(&request(Method::OPTIONS, &preflight), Some("GET, POST"))
            .unwrap();
        assert_eq!(r.status, StatusCode::NO_CONTENT);
        assert_eq!(
            r.header("access-control-allow-origin"),
            Some("http://a.test")
        );
        assert_eq!(r.header("access-control-allow-methods"), Some("GET, POST"));
        assert_eq!(
            r.header("access-control-allow-headers"),
            Some(ALLOW_HEADERS)
        );
        assert_eq!(r.header("access-control-max-age"), Some("600"));
        assert!(cors
            .preflight(&request(Method::OPTIONS, &preflight), None)
            .is_none());
        let other = [
            ("Origin", "http://b.test"),
            ("Access-Control-Request-Method", "GET"),
        ];
        assert!(cors
            .preflight(&request(Method::OPTIONS, &other), Some("GET"))
            .is_none());
        let no_method = [("Origin", "http://a.test")];
        assert!(cors
            .preflight(&request(Method::OPTIONS, &no_method), Some("GET"))
            .is_none());
        assert!(cors
            .preflight(&request(Method::GET, &preflight), Some("GET"))
            .is_none());
        assert!(CorsOrigins::default()
            .preflight(&request(Method::OPTIONS, &preflight), Some("GET"))
            .is_none());
    }
}
