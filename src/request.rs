//! A request as the core sees it: method, path, query, headers and a body
//! that was read up to the size limit. The Spin layer builds it once.

use http::Method;

/// Largest request body accepted (decisions: 16 KiB, else 413).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The whole body, at most [`MAX_BODY_BYTES`].
    Complete(Vec<u8>),
    /// The body was longer than [`MAX_BODY_BYTES`]; reading stopped there.
    TooLarge,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    /// The path without the query, as sent (not percent-decoded).
    pub path: String,
    /// The raw query string after `?`, if any.
    pub query: Option<String>,
    /// Header names in lower case, values as bytes, in the order received
    /// (as `wasi:http` gives them; `http::HeaderMap` would link 22 KB of
    /// header-name tables, see `Response::headers`).
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Body,
}

impl Request {
    /// A bodiless `GET /v1/pets` that carries header `name` once per value:
    /// for the unit tests of the modules that each read one header.
    #[cfg(test)]
    pub fn get_with_header<V: AsRef<[u8]>>(name: &str, values: &[V]) -> Self {
        let headers = values
            .iter()
            .map(|v| (name.to_string(), v.as_ref().to_vec()))
            .collect();
        Request::new(Method::GET, "/v1/pets", headers, Body::Complete(vec![]))
    }

    /// Splits a request target (`/v1/pets?limit=5`) into path and query.
    pub fn new(method: Method, target: &str, headers: Vec<(String, Vec<u8>)>, body: Body) -> Self {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (target.to_string(), None),
        };
        let headers = headers
            .into_iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v))
            .collect();
        Request {
            method,
            path,
            query,
            headers,
            body,
        }
    }

    /// All values of header `name` (lower-case).
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The value of header `name` if it is sent exactly once. A repeated
    /// header is as good as none: it is ambiguous, so nothing trusts it.
    pub fn single_header<'a>(&'a self, name: &'a str) -> Option<&'a [u8]> {
        let mut values = self.header_values(name);
        let first = values.next();
        match values.next() {
            Some(_) => None,
            None => first,
        }
    }
}

/// Decodes one `application/x-www-form-urlencoded` component (`+` is a
/// space, `%XX` a byte). `None` if an escape is malformed or the result is
/// not UTF-8.
pub fn decode_query_component(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                out.push(crate::hex::byte(bytes.get(i + 1..i + 3)?)?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The query's `name=value` pairs, decoded. A pair without `=` has an empty value.
pub fn query_pairs(query: &str) -> Result<Vec<(String, String)>, String> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            match (decode_query_component(name), decode_query_component(value)) {
                (Some(n), Some(v)) => Ok((n, v)),
                _ => Err(format!("query parameter '{pair}' is not validly encoded")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_target_and_lowercases_header_names() {
        let r = Request::new(
            Method::GET,
            "/v1/pets?limit=5&status=sold",
            vec![("Authorization".into(), b"Bearer k".to_vec())],
            Body::Complete(vec![]),
        );
        assert_eq!(r.path, "/v1/pets");
        assert_eq!(r.query.as_deref(), Some("limit=5&status=sold"));
        assert_eq!(r.single_header("authorization"), Some(&b"Bearer k"[..]));
    }

    #[test]
    fn a_repeated_header_has_no_single_value_and_every_value_in_order() {
        let r = Request::new(
            Method::GET,
            "/",
            vec![("a".into(), b"1".to_vec()), ("A".into(), b"2".to_vec())],
            Body::Complete(vec![]),
        );
        assert_eq!(r.single_header("a"), None);
        let all: Vec<&[u8]> = r.header_values("a").collect();
        assert_eq!(all, [&b"1"[..], b"2"]);
        let once = Request::new(
            Method::GET,
            "/",
            vec![("B".into(), b"x".to_vec())],
            Body::Complete(vec![]),
        );
        assert_eq!(once.single_header("b"), Some(&b"x"[..]));
    }

    #[test]
    fn decodes_form_encoding() {
        assert_eq!(decode_query_component("%73old").as_deref(), Some("sold"));
        assert_eq!(decode_query_component("a+b").as_deref(), Some("a b"));
        assert_eq!(decode_query_component("%zz"), None);
        assert_eq!(decode_query_component("%4"), None);
        assert_eq!(decode_query_component("%ff"), None);
        // A sign is not a hex digit (`from_str_radix` would take `%+5`).
        assert_eq!(decode_query_component("%+5"), None);
        assert_eq!(decode_query_component("%-0"), None);
        assert_eq!(
            query_pairs("limit=5&&x&status=sold").unwrap(),
            vec![
                ("limit".to_string(), "5".to_string()),
                ("x".to_string(), String::new()),
                ("status".to_string(), "sold".to_string())
            ]
        );
    }
}
