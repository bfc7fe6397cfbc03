//! The catalogue in the key-value store: how a pet is written, indexed and
//! read, over any [`KvStore`]. The layout and why it is correct on every
//! backend's quirks: docs/key-value-layout.md. One job per file:
//!
//! - [`keys`]: the key names, and the counter encodings of Spin's backends;
//! - [`ahead`]: how a page reads: a `get` at a time, or batches fetched ahead;
//! - [`create`]: reserving an id and a position, and the commit;
//! - [`pending`]: the pending record a keyed create stages before its claim;
//! - [`piece`]: the index piece, a cache of 32 positions of a list, as text;
//! - [`list`]: a page's walk along a list, healing the pieces it reads;
//! - [`listed`]: a pet as a list holds it, a span of a piece's text;
//! - `truth`: a page's look-ups of what its pieces lack.
//!
//! A create is two `increment`s and one `set-many` (one transaction, one
//! `MSET`; on DynamoDB two `set`s): it never touches the index. The pieces are a cache over data that
//! never changes (`pet`, `slot`): a reader takes what a piece holds, fills
//! gaps from that truth, and writes the piece back, so a missing, stale or
//! unreadable piece costs reads once and never changes an answer.

pub mod ahead;
pub mod create;
pub mod keys;
pub mod list;
pub mod listed;
pub mod pending;
pub mod piece;
mod truth;

pub use ahead::Reads;
pub use create::{Batches, Reserved};
pub use keys::{decode_counter, encode_counter_like, FALLBACK_BUDGET, ID_COUNTER, PIECE_LEN};
pub use list::Page;
pub use listed::Listed;
pub use pending::Pending;

use crate::errors::ApiError;
use crate::model::Pet;
use crate::store::KvStore;

use keys::pet_key;
use pending::PENDING_HEADER;

/// The catalogue over any [`KvStore`].
pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
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
