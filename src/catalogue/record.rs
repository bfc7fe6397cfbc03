//! What `pet:{id}` holds, in either layout: a pet (its JSON, as responses
//! carry it; in the lanes layout after a line that names the create that
//! wrote it), a counters keyed create's pending record, or nothing.

use crate::errors::ApiError;
use crate::model::Pet;

use super::listed::Listed;

use super::pending::{Pending, PENDING_HEADER};

/// What `pet:{id}` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PetRecord {
    Absent,
    /// A counters keyed create's intent, staged before it claims its key
    /// (or, started at 0, a create withdrawn or a position sealed).
    Pending(Pending),
    /// The pet: its JSON, and in the lanes layout the nonce of the create
    /// that claimed it (how a create whose reply was lost knows its own).
    Committed {
        json: Vec<u8>,
        nonce: Option<u64>,
    },
}

/// First words of a lanes layout pet record: `petstore-pet 1 <nonce>\n<json>`.
const PERSISTED_HEADER: &str = "petstore-pet 1 ";

/// The JSON of a pet as stored and sent in responses.
pub fn encode_pet(pet: &Pet) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(pet).map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))
}

/// A lanes layout pet record: the nonce of its create, then its JSON.
pub fn persisted(nonce: u64, json: &[u8]) -> Vec<u8> {
    let mut out = format!("{PERSISTED_HEADER}{nonce:016x}\n").into_bytes();
    out.extend_from_slice(json);
    out
}

impl PetRecord {
    /// What the value read at `key` (a `pet:{id}`) holds.
    pub fn of(key: &str, value: Option<Vec<u8>>) -> Result<PetRecord, ApiError> {
        let unreadable = || unreadable(key);
        Ok(match value {
            None => PetRecord::Absent,
            Some(bytes) if bytes.starts_with(PENDING_HEADER.as_bytes()) => {
                PetRecord::Pending(Pending::decode(&bytes).ok_or_else(unreadable)?)
            }
            Some(bytes) if bytes.starts_with(PERSISTED_HEADER.as_bytes()) => {
                let rest = &bytes[PERSISTED_HEADER.len()..];
                let line = rest
                    .iter()
                    .position(|b| *b == b'\n')
                    .ok_or_else(unreadable)?;
                let nonce = std::str::from_utf8(&rest[..line])
                    .ok()
                    .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                    .ok_or_else(unreadable)?;
                PetRecord::Committed {
                    json: rest[line + 1..].to_vec(),
                    nonce: Some(nonce),
                }
            }
            Some(json) => PetRecord::Committed { json, nonce: None },
        })
    }

    /// The pet's JSON, if the record is one (committed), checked.
    pub fn listed(self, key: &str) -> Result<Option<Listed>, ApiError> {
        match self {
            PetRecord::Absent | PetRecord::Pending(_) => Ok(None),
            PetRecord::Committed { json, .. } => listed(key, json).map(Some),
        }
    }
}

/// A pet's stored JSON as a list holds it; an error if it is not one.
pub fn listed(key: &str, json: Vec<u8>) -> Result<Listed, ApiError> {
    Listed::from_json(json).ok_or_else(|| unreadable(key))
}

/// What the store holds at `key` is in no format this release wrote.
pub fn unreadable(key: &str) -> ApiError {
    ApiError::Internal(format!("stored value '{key}' is unreadable"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layouts_record_reads_as_a_pet_or_as_none() {
        let json = br#"{"id":3,"name":"a","categoryId":1,"status":"sold"}"#;
        let plain = PetRecord::of("pet:3", Some(json.to_vec())).unwrap();
        assert_eq!(
            plain,
            PetRecord::Committed {
                json: json.to_vec(),
                nonce: None
            }
        );
        let lanes = PetRecord::of("pet:3", Some(persisted(0xabc, json))).unwrap();
        assert_eq!(
            lanes,
            PetRecord::Committed {
                json: json.to_vec(),
                nonce: Some(0xabc)
            }
        );
        let listed = lanes.listed("pet:3").unwrap().unwrap();
        assert_eq!(
            (listed.id, listed.status()),
            (3, Some(crate::model::PetStatus::Sold))
        );
        let corrupt = PetRecord::of("pet:3", Some(b"{oops".to_vec())).unwrap();
        assert!(corrupt.listed("pet:3").is_err());
        assert!(PetRecord::of("pet:3", Some(b"petstore-pet 1 zz\n{}".to_vec())).is_err());
        assert_eq!(PetRecord::of("pet:3", None).unwrap(), PetRecord::Absent);
    }
}
