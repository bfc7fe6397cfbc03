//! A response as the core builds it: status, headers and the whole body.
//!
//! The Spin layer writes it out in one piece (body first, then the
//! `ResponseOutparam`), which is why the body is a complete `Vec<u8>`.

use http::StatusCode;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: StatusCode,
    /// Lower-case names; `content-length` is added by whoever sends it.
    /// Not `http::HeaderName`: its tables of standard names cost the module
    /// 22 KB once linked (measured), 5% of it, for names that are all our
    /// own constants.
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response. Our bodies are plain data and always serialize; if one
    /// ever did not, the client still gets a well-formed 500 Error body.
    pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
        match serde_json::to_vec(value) {
            Ok(body) => Response {
                status,
                headers: vec![("content-type", "application/json".to_string())],
                body,
            },
            Err(_) => Response {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                headers: vec![("content-type", "application/json".to_string())],
                body: br#"{"code":"internal_error","message":"internal error","status":500}"#
                    .to_vec(),
            },
        }
    }

    /// A JSON response whose body is already JSON text.
    pub fn json_text(status: StatusCode, body: Vec<u8>) -> Response {
        Response {
            status,
            headers: vec![("content-type", "application/json".to_string())],
            body,
        }
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    /// The value of header `name` (lower-case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}
