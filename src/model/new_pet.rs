//! A createPet body, parsed: a [`NewPet`] with a valid [`PetName`], a
//! `categoryId` that is a whole int64 (`7.0` is 7), and a status, or the
//! `invalid_body` error that names the field.

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::pet::{Pet, PetStatus, MAX_NAME_CHARS};
use crate::errors::ApiError;

/// A validated pet name: 1..=200 characters, not only white space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetName(String);

impl PetName {
    /// The JSON value of `name`.
    pub fn parse(value: &RawValue) -> Result<PetName, ApiError> {
        let invalid = |m: &str| Err(ApiError::InvalidBody(format!("field 'name' {m}")));
        let Ok(s) = serde_json::from_str::<String>(value.get()) else {
            return invalid("must be a string");
        };
        if s.trim().is_empty() {
            return invalid("must not be empty or only white space");
        }
        if s.chars().count() > MAX_NAME_CHARS {
            return invalid(&format!("must be at most {MAX_NAME_CHARS} characters"));
        }
        Ok(PetName(s))
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

/// The body's members this API reads, each as the JSON text it was sent as
/// (`null` included); any other member is ignored. Read in one pass, with
/// no tree of the whole body.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(default, borrow)]
    name: Member<'a>,
    #[serde(rename = "categoryId", default, borrow)]
    category_id: Member<'a>,
    #[serde(default, borrow)]
    status: Member<'a>,
}

/// A member's JSON text, if the body has the member (a `null` is text too).
#[derive(Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Member(Some(raw)))
    }
}

impl<'a> Member<'a> {
    fn required(self, name: &str) -> Result<&'a RawValue, ApiError> {
        self.0
            .ok_or_else(|| ApiError::InvalidBody(format!("field '{name}' is required")))
    }
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
        // (A struct would also take a JSON array of its members, in order.)
        let object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let fields: Body = serde_json::from_slice(body).map_err(|e| {
            ApiError::InvalidBody(match e.classify() {
                serde_json::error::Category::Data if e.to_string().contains("duplicate") => {
                    format!("the body names a field twice: {e}")
                }
                serde_json::error::Category::Data => "the body must be a JSON object".into(),
                _ => format!("the body is not valid JSON: {e}"),
            })
        })?;
        if !object {
            return Err(ApiError::InvalidBody(
                "the body must be a JSON object".into(),
            ));
        }
        let name = PetName::parse(fields.name.required("name")?)?;
        let raw = fields.category_id.required("categoryId")?;
        let category_id = category_id(raw.get()).ok_or_else(|| {
            ApiError::InvalidBody(
                "field 'categoryId' must be an integer in the int64 range, without exponent or fraction"
                    .into(),
            )
        })?;
        let status = match fields.status.0 {
            None => PetStatus::Available,
            Some(raw) => serde_json::from_str::<&str>(raw.get())
                .ok()
                .and_then(PetStatus::parse)
                .ok_or_else(|| {
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
fn category_id(raw: &str) -> Option<i64> {
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
        assert!(body_error(r#"{"name":"a","name":"b","categoryId":1}"#).contains("twice"));
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
}
