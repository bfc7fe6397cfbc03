//! The contract's types, and the parsing that turns raw input into them.
//!
//! A request body becomes a [`NewPet`] and a query string a [`ListQuery`]
//! here, once; past this module the core only handles validated values.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::errors::ApiError;
use crate::request::query_pairs;

/// Longest accepted pet name, in Unicode characters.
pub const MAX_NAME_CHARS: usize = 200;
/// `limit` bounds and default (contract: 1..=100, default 20).
pub const MIN_LIMIT: usize = 1;
pub const MAX_LIMIT: usize = 100;
pub const DEFAULT_LIMIT: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PetStatus {
    Available,
    Pending,
    Sold,
}

impl PetStatus {
    pub const ALL: [PetStatus; 3] = [PetStatus::Available, PetStatus::Pending, PetStatus::Sold];

    pub fn as_str(self) -> &'static str {
        match self {
            PetStatus::Available => "available",
            PetStatus::Pending => "pending",
            PetStatus::Sold => "sold",
        }
    }

    pub fn parse(s: &str) -> Option<PetStatus> {
        PetStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A pet as stored and returned. Field order is the contract's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pet {
    pub id: i64,
    pub name: String,
    #[serde(rename = "categoryId")]
    pub category_id: i64,
    pub status: PetStatus,
}

/// A validated pet name: 1..=200 characters, not only white space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetName(String);

impl PetName {
    pub fn parse(value: &Value) -> Result<PetName, ApiError> {
        let invalid = |m: &str| Err(ApiError::InvalidBody(format!("field 'name' {m}")));
        let Value::String(s) = value else {
            return invalid("must be a string");
        };
        if s.trim().is_empty() {
            return invalid("must not be empty or only white space");
        }
        if s.chars().count() > MAX_NAME_CHARS {
            return invalid(&format!("must be at most {MAX_NAME_CHARS} characters"));
        }
        Ok(PetName(s.clone()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The validated body of `createPet`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPet {
    pub name: PetName,
    pub category_id: i64,
    pub status: PetStatus,
}

impl NewPet {
    /// The pet this request creates, once it has an id.
    pub fn into_pet(self, id: i64) -> Pet {
        Pet {
            id,
            name: self.name.as_str().to_string(),
            category_id: self.category_id,
            status: self.status,
        }
    }

    /// Parses a request body. Unknown fields and a client-sent `id` are ignored;
    /// an omitted `status` is `available`. The message names the offending field.
    pub fn from_json(body: &[u8]) -> Result<NewPet, ApiError> {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::InvalidBody(format!("the body is not valid JSON: {e}")))?;
        let Value::Object(fields) = value else {
            return Err(ApiError::InvalidBody(
                "the body must be a JSON object".into(),
            ));
        };
        let name = PetName::parse(required(&fields, "name")?)?;
        required(&fields, "categoryId")?;
        let category_id = category_id(body).ok_or_else(|| {
            ApiError::InvalidBody(
                "field 'categoryId' must be an integer in the int64 range, without exponent or fraction"
                    .into(),
            )
        })?;
        let status = match fields.get("status") {
            None => PetStatus::Available,
            Some(v) => v.as_str().and_then(PetStatus::parse).ok_or_else(|| {
                ApiError::InvalidBody(
                    "field 'status' must be one of 'available', 'pending', 'sold'".into(),
                )
            })?,
        };
        Ok(NewPet {
            name,
            category_id,
            status,
        })
    }
}

/// `categoryId` as written in the body: an integer literal, optionally with
/// a fraction of zeros (`7.0` is the integer 7 in the OpenAPI 3.1 document's
/// JSON Schema dialect). `1.5`, `1e3`, `"7"` and values outside int64 are not.
fn category_id(body: &[u8]) -> Option<i64> {
    #[derive(Deserialize)]
    struct Lexical<'a> {
        #[serde(rename = "categoryId", borrow)]
        category_id: &'a serde_json::value::RawValue,
    }
    let raw = serde_json::from_slice::<Lexical>(body)
        .ok()?
        .category_id
        .get();
    let (integer, fraction) = raw.split_once('.').unwrap_or((raw, ""));
    if !fraction.bytes().all(|b| b == b'0') || (raw.contains('.') && fraction.is_empty()) {
        return None;
    }
    let digits = integer.strip_prefix('-').unwrap_or(integer);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    integer.parse().ok()
}

fn required<'a>(fields: &'a Map<String, Value>, name: &str) -> Result<&'a Value, ApiError> {
    fields
        .get(name)
        .ok_or_else(|| ApiError::InvalidBody(format!("field '{name}' is required")))
}

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
}

/// Where a walk through a list goes on: the next position in that list.
///
/// Opaque to clients: `c<position>`, e.g. `c21`. It is only meaningful with
/// the same `status` it was given out with; any well-formed cursor is
/// accepted (one past the end gives an empty last page), so that the set of
/// valid requests is exactly what the OpenAPI document describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub position: i64,
}

/// Longest position a cursor may carry: 18 digits always fit an i64.
const MAX_CURSOR_DIGITS: usize = 18;

impl Cursor {
    pub fn encode(&self) -> String {
        format!("c{}", self.position)
    }

    /// `c` and a positive decimal without leading zeros, at most 18 digits
    /// (the OpenAPI pattern `^c[1-9][0-9]{0,17}$`).
    pub fn parse(raw: &str) -> Option<Cursor> {
        let digits = raw.strip_prefix('c')?;
        if digits.len() > MAX_CURSOR_DIGITS || digits.starts_with('0') {
            return None;
        }
        let position = parse_digits(digits)?;
        (position >= 1).then_some(Cursor { position })
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
            .map(|raw| {
                Cursor::parse(raw).ok_or_else(|| {
                    ApiError::InvalidParameter(
                        "query parameter 'cursor' is malformed: use the one in the 'next' link"
                            .into(),
                    )
                })
            })
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

    fn body_error(body: &str) -> String {
        match NewPet::from_json(body.as_bytes()) {
            Err(ApiError::InvalidBody(m)) => m,
            other => panic!("expected invalid_body for {body}, got {other:?}"),
        }
    }

    #[test]
    fn new_pet_defaults_status_to_available_and_ignores_extra_fields() {
        let p =
            NewPet::from_json(br#"{"name":"Rex","categoryId":7,"id":99,"colour":"red"}"#).unwrap();
        assert_eq!(p.name.as_str(), "Rex");
        assert_eq!(p.category_id, 7);
        assert_eq!(p.status, PetStatus::Available);
    }

    #[test]
    fn new_pet_accepts_every_status_and_int64_bounds() {
        for s in PetStatus::ALL {
            let body = format!(
                r#"{{"name":"a","categoryId":-9223372036854775808,"status":"{}"}}"#,
                s.as_str()
            );
            assert_eq!(NewPet::from_json(body.as_bytes()).unwrap().status, s);
        }
        let p = NewPet::from_json(br#"{"name":"a","categoryId":9223372036854775807}"#).unwrap();
        assert_eq!(p.category_id, i64::MAX);
    }

    #[test]
    fn new_pet_rejections_name_the_field() {
        assert!(body_error("not json").contains("not valid JSON"));
        assert!(body_error("").contains("not valid JSON"));
        assert!(body_error("[1]").contains("JSON object"));
        assert!(body_error("\"x\"").contains("JSON object"));
        assert!(body_error(r#"{"categoryId":1}"#).contains("'name' is required"));
        assert!(body_error(r#"{"name":"a"}"#).contains("'categoryId' is required"));
        assert!(body_error(r#"{"name":5,"categoryId":1}"#).contains("'name' must be a string"));
        assert!(body_error(r#"{"name":null,"categoryId":1}"#).contains("'name'"));
        assert!(body_error(r#"{"name":"","categoryId":1}"#).contains("'name' must not be empty"));
        assert!(body_error(r#"{"name":" \t\n","categoryId":1}"#).contains("'name'"));
        for bad in [
            "1.5",
            "\"7\"",
            "1e3",
            "1.0e0",
            "1.01",
            "1E3",
            "9223372036854775808",
            "9223372036854775808.0",
            "-9223372036854775809",
            "null",
            "{}",
            "true",
            "[]",
        ] {
            let body = format!(r#"{{"name":"a","categoryId":{bad}}}"#);
            assert!(body_error(&body).contains("'categoryId'"), "{bad}");
        }
        for bad in ["\"lost\"", "\"Sold\"", "null", "1", "\"\""] {
            let body = format!(r#"{{"name":"a","categoryId":1,"status":{bad}}}"#);
            assert!(body_error(&body).contains("'status'"), "{bad}");
        }
    }

    #[test]
    fn whole_numbers_written_with_a_zero_fraction_are_integers() {
        for (literal, value) in [
            ("7.0", 7),
            ("-24481.00", -24481),
            ("0", 0),
            ("-0", 0),
            ("9223372036854775807.0", i64::MAX),
        ] {
            let body = format!(r#"{{"name":"a","categoryId":{literal}}}"#);
            assert_eq!(
                NewPet::from_json(body.as_bytes()).unwrap().category_id,
                value,
                "{literal}"
            );
        }
    }

    #[test]
    fn name_length_counts_characters_not_bytes() {
        let ok = "é".repeat(MAX_NAME_CHARS);
        let body = format!(r#"{{"name":"{ok}","categoryId":1}}"#);
        assert!(NewPet::from_json(body.as_bytes()).is_ok());
        let long = "a".repeat(MAX_NAME_CHARS + 1);
        let body = format!(r#"{{"name":"{long}","categoryId":1}}"#);
        assert!(body_error(&body).contains("at most 200"));
    }

    fn query(q: &str) -> Result<ListQuery, ApiError> {
        ListQuery::parse(Some(q))
    }

    #[test]
    fn list_query_defaults() {
        let q = ListQuery::parse(None).unwrap();
        assert_eq!(
            (q.limit, q.status, q.cursor, q.limit_given),
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
    fn cursors_round_trip_and_malformed_ones_are_rejected() {
        let c = Cursor { position: 42 };
        assert_eq!(c.encode(), "c42");
        assert_eq!(query("status=sold&cursor=c42").unwrap().cursor, Some(c));
        assert_eq!(query("cursor=c7").unwrap().cursor.unwrap().position, 7);
        let max = format!("cursor=c{}", "9".repeat(18));
        assert!(query(&max).is_ok());
        for bad in [
            "42",
            "c0",
            "c-1",
            "c",
            "",
            "zzz",
            "c1x",
            "c01",
            "C5",
            "c+5",
            "c1234567890123456789",
        ] {
            let q = format!("cursor={bad}");
            assert!(
                matches!(query(&q), Err(ApiError::InvalidParameter(m)) if m.contains("'cursor'")),
                "{bad}"
            );
        }
    }
}
