//! The [`Catalogue`] handle over a store, and what `pet:{id}` holds: a pet
//! (its JSON, as responses carry it), a keyed create's pending record, or
//! nothing. getPet's read.

use crate::errors::ApiError;
use crate::model::Pet;
use crate::store::KvStore;

use super::keys::pet_key;
use super::pending::{Pending, PENDING_HEADER};

/// The catalogue over any [`KvStore`].
pub struct Catalogue<'a, S: KvStore> {
    pub(super) store: &'a S,
}

/// What `pet:{id}` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PetRecord {
    Absent,
    /// A keyed create's intent, staged with its slot before it claims its
    /// key: the position it reserved, when it started, and the pet's JSON.
    Pending(Pending),
    /// The pet's JSON: the pet exists.
    Committed(Vec<u8>),
}

/// The JSON of a pet as stored in `pet:{id}` and sent in responses.
pub fn encode_pet(pet: &Pet) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(pet).map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))
}

impl<'a, S: KvStore> Catalogue<'a, S> {
    pub fn new(store: &'a S) -> Self {
        Catalogue { store }
    }

    /// What `pet:{id}` holds, undecoded.
    pub fn record(&self, id: i64) -> Result<PetRecord, ApiError> {
        let key = pet_key(id);
        let value = self.store.get(&key)?;
        PetRecord::of(&key, value)
    }

    /// The pet with this id, if it was committed.
    pub fn get(&self, id: i64) -> Result<Option<Pet>, ApiError> {
        let key = pet_key(id);
        let value = self.store.get(&key)?;
        PetRecord::of(&key, value)?.pet(&key)
    }
}

impl PetRecord {
    /// What the value read at `key` (a `pet:{id}`) holds.
    pub fn of(key: &str, value: Option<Vec<u8>>) -> Result<PetRecord, ApiError> {
        Ok(match value {
            None => PetRecord::Absent,
            Some(bytes) if bytes.starts_with(PENDING_HEADER.as_bytes()) => {
                PetRecord::Pending(Pending::decode(&bytes).ok_or_else(|| {
                    ApiError::Internal(format!("stored value '{key}' is unreadable"))
                })?)
            }
            Some(bytes) => PetRecord::Committed(bytes),
        })
    }

    /// The pet, if the record is one (committed).
    pub fn pet(self, key: &str) -> Result<Option<Pet>, ApiError> {
        match self {
            PetRecord::Absent | PetRecord::Pending(_) => Ok(None),
            PetRecord::Committed(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                ApiError::Internal(format!("stored value '{key}' is unreadable: {e}"))
            }),
        }
    }
}
