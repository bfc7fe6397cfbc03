//! A listPets query, parsed: the list ([`ListName`]), the `limit`, and the
//! [`Cursor`] of a next page, or the `invalid_parameter` error that names
//! the parameter.

use super::cursor::Cursor;
use super::pet::{PetStatus, DEFAULT_LIMIT, MAX_LIMIT, MIN_LIMIT};
use crate::errors::ApiError;
use crate::request::query_pairs;

/// One of the catalogue's ordered lists: every pet, or the pets of one status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListName {
    All,
    Status(PetStatus),
}

impl ListName {
    pub fn as_str(self) -> &'static str {
        match self {
            ListName::All => "all",
            ListName::Status(s) => s.as_str(),
        }
    }

    /// The status whose pets the list holds, if it is a status's list.
    pub fn status(self) -> Option<PetStatus> {
        match self {
            ListName::All => None,
            ListName::Status(status) => Some(status),
        }
    }
}

/// A decimal made of ASCII digits only (no sign, no blanks), within i64.
pub fn parse_digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The validated query of `listPets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub limit: usize,
    pub status: Option<PetStatus>,
    pub cursor: Option<Cursor>,
    /// Whether the client sent `limit` (the `next` link repeats only what it sent).
    pub limit_given: bool,
}

impl ListQuery {
    pub fn list(&self) -> ListName {
        self.status.map_or(ListName::All, ListName::Status)
    }

    /// Parses `limit`, `status` and `cursor`; other parameters are ignored.
    pub fn parse(query: Option<&str>) -> Result<ListQuery, ApiError> {
        let pairs = query_pairs(query.unwrap_or("")).map_err(ApiError::InvalidParameter)?;
        let single = |name: &str| -> Result<Option<&str>, ApiError> {
            let mut values = pairs
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.as_str());
            let first = values.next();
            if values.next().is_some() {
                return Err(ApiError::InvalidParameter(format!(
                    "query parameter '{name}' is given more than once"
                )));
            }
            Ok(first)
        };
        let limit = match single("limit")? {
            None => DEFAULT_LIMIT,
            Some(raw) => parse_digits(raw)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (MIN_LIMIT..=MAX_LIMIT).contains(n))
                .ok_or_else(|| {
                    ApiError::InvalidParameter(format!(
                        "query parameter 'limit' must be an integer from {MIN_LIMIT} to {MAX_LIMIT}"
                    ))
                })?,
        };
        let status = single("status")?
            .map(|raw| {
                PetStatus::parse(raw).ok_or_else(|| {
                    ApiError::InvalidParameter(
                        "query parameter 'status' must be one of 'available', 'pending', 'sold'"
                            .into(),
                    )
                })
            })
            .transpose()?;
        let cursor = single("cursor")?
            .map(|raw| Cursor::parse(raw).ok_or_else(Cursor::malformed))
            .transpose()?;
        Ok(ListQuery {
            limit,
            status,
            cursor,
            limit_given: single("limit")?.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(q: &str) -> Result<ListQuery, ApiError> {
        ListQuery::parse(Some(q))
    }

    #[test]
    fn list_query_defaults() {
        let q = ListQuery::parse(None).unwrap();
        assert_eq!(
            (q.limit, q.status, q.cursor.clone(), q.limit_given),
            (20, None, None, false)
        );
        assert_eq!(q.list(), ListName::All);
    }

    #[test]
    fn list_query_limit_bounds_are_exact_and_nothing_is_clamped() {
        assert_eq!(query("limit=1").unwrap().limit, 1);
        assert_eq!(query("limit=100").unwrap().limit, 100);
        for bad in [
            "0",
            "101",
            "-1",
            "abc",
            "1.5",
            "",
            "+5",
            " 5",
            "1e2",
            "99999999999999999999",
        ] {
            let q = format!("limit={bad}");
            assert!(
                matches!(query(&q), Err(ApiError::InvalidParameter(m)) if m.contains("'limit'")),
                "{bad}"
            );
        }
        assert!(matches!(query("limit"), Err(ApiError::InvalidParameter(_))));
        assert!(matches!(
            query("limit=5&limit=6"),
            Err(ApiError::InvalidParameter(_))
        ));
    }

    #[test]
    fn list_query_status_and_unknown_parameters() {
        let q = query("status=sold&foo=bar").unwrap();
        assert_eq!(q.status, Some(PetStatus::Sold));
        assert_eq!(q.list(), ListName::Status(PetStatus::Sold));
        assert_eq!(
            query("status=%73old").unwrap().status,
            Some(PetStatus::Sold)
        );
        for bad in ["lost", "SOLD", "", "sold%20"] {
            let q = format!("status={bad}");
            assert!(
                matches!(query(&q), Err(ApiError::InvalidParameter(m)) if m.contains("'status'")),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_cursor_is_taken_once_and_one_outside_its_alphabet_is_rejected() {
        assert_eq!(
            query("status=sold&cursor=c42").unwrap().cursor,
            Cursor::parse("c42")
        );
        // The parts are each layout's to read (tests/list.rs: a 400 all the same).
        for bad in ["", "C42", "c4%202", "c42/"] {
            let q = format!("cursor={bad}");
            assert!(
                matches!(query(&q), Err(ApiError::InvalidParameter(m)) if m.contains("'cursor'")),
                "{bad}"
            );
        }
    }
}
