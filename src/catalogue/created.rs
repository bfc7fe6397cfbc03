//! What a create is asked and answers, whatever the layout: how it ended
//! ([`Created`]), and a create under an `Idempotency-Key` ([`Keyed`]) with
//! the lease that keeps its key to it.

use crate::errors::ApiError;
use crate::model::{IdempotencyKey, NewPet, Pet};

use super::keys::record_key;

/// The time a keyed create runs at, and how long an unfinished create
/// keeps its key to itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Now, in Unix milliseconds.
    pub now_ms: u64,
    pub lease_ms: u64,
}

/// How a create ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// This request created the pet (or finished an earlier attempt's create).
    Pet(Pet),
    /// The key's pet already existed: its stored JSON, byte for byte.
    Replayed { id: i64, body: Vec<u8> },
}

/// A create under an `Idempotency-Key`: its record's key, the pet, the lease.
pub struct Keyed {
    pub record_key: String,
    pub new: NewPet,
    pub lease: Lease,
}

impl Keyed {
    /// A create of `new` under `key`.
    pub fn new(key: &IdempotencyKey, new: NewPet, lease: Lease) -> Keyed {
        Keyed {
            record_key: record_key(key),
            new,
            lease,
        }
    }

    /// A keyed create's store failure as its client reads it: whatever the
    /// store did, a retry with the same key ends in one pet.
    pub fn unavailable(error: ApiError) -> ApiError {
        match error {
            ApiError::StoreUnavailable(e) | ApiError::CreateOutcomeUnknown(e) => {
                ApiError::KeyedCreateUnavailable(e)
            }
            other => other,
        }
    }

    /// 409 while a create that began at `started_ms` may still be at work.
    pub fn within_lease(&self, started_ms: u64) -> Result<(), ApiError> {
        let ends = started_ms.saturating_add(self.lease.lease_ms);
        if self.lease.now_ms < ends {
            let wait_ms = ends - self.lease.now_ms;
            return Err(ApiError::IdempotencyKeyInUse {
                retry_after_seconds: wait_ms.div_ceil(1000).max(1),
            });
        }
        Ok(())
    }
}
