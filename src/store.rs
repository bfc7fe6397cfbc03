//! The key-value operations the core needs, as a small trait.
//!
//! The component implements it over Spin's `wasi:keyvalue` (src/spin.rs); the
//! native tests use the test-only crate `petstore-testkit` (`tests/testkit`),
//! an in-memory store that can reproduce the quirks of Spin's backends.

use std::fmt;

/// A key-value operation failed (backend down, timeout, lost reply, ...).
///
/// The component answers it with 503 `store_unavailable`; the message is only
/// logged, never shown to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key-value store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// What the backend *reported* for a compare-and-swap. Callers never trust a
/// reported conflict (Spin's Redis backend reports one after writing); they
/// read the key back to learn what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapReport {
    Swapped,
    Conflict,
}

/// The operations of `wasi:keyvalue/{store,atomics,batch}@0.2.0-draft2` that
/// the service uses. `set-many` is one SQLite transaction, one Redis `MSET`,
/// one DynamoDB `BatchWriteItem`; `get-many` is called only where the backend
/// has it (DynamoDB's `BatchGetItem`): it fails every request on Spin's Redis.
pub trait KvStore {
    /// A compare-and-swap in progress (`atomics::cas`).
    type Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// The values of those of `keys` that exist, in any order (at most 100
    /// distinct keys: DynamoDB's limit). Never on Redis (see above).
    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError>;
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError>;
    /// Writes all pairs at once: all or none on Spin's SQLite and Redis backends.
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError>;
    /// Atomically adds `delta` and returns the new value; an absent key counts as 0.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError>;
    /// Starts a compare-and-swap on `key`: its handle and the key's current value.
    /// The catalogue makes them on a keyed create's record (every layout),
    /// and on the lanes' heads and mark (DynamoDB only, where a
    /// put-if-absent is atomic); each decides its outcome by reading back
    /// (Spin's Redis reports `cas-failed` after writing; Spin's DynamoDB
    /// reports a lost reply as a conflict), and none creates a key this way
    /// on SQLite (which upserts an absent key).
    fn cas_begin(&self, key: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError>;
    /// Writes `value` if the key has not changed since `cas_begin`.
    fn cas_swap(&self, cas: Self::Cas, value: &[u8]) -> Result<SwapReport, StoreError>;
    /// Every key of the store (`list-keys`, which Spin 4.0.2 answers with
    /// every key at once). Only the replicated layout calls it.
    fn list_keys(&self) -> Result<Vec<String>, StoreError>;
}
