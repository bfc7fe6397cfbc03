//! The key-value store behind `wasi:keyvalue`: one of four engines, with
//! fault injection and exact counters on top.
//!
//! - [`Backend::Sqlite`] and [`Backend::Redis`] re-implement Spin 4.0.2's
//!   backends on the real engines (a SQLite file, a `redis-server`), issuing
//!   the same statements and commands per call as Spin does, so every quirk in
//!   `docs/spin-platform.md` arises from the engine itself.
//! - [`Backend::Dynamo`] re-implements Spin's AWS DynamoDB backend over
//!   DynamoDB's API (AWS DynamoDB Local in tests), request for request.
//! - [`Backend::Memory`] is an ideal in-memory store for quick runs.
//!
//! One [`KvStore`] (`store`: counters, `stats`, and armed [`Fault`]s,
//! `faults`, over an engine) is shared by every request, as Spin's
//! `default` store is shared by every instance; or, replicated
//! ([`KvStore::replicated`], the edge build's platform), each request gets
//! the next replica.

pub mod dynamo;
mod faults;
pub mod memory;
pub mod redis;
pub mod replicated;
pub mod sqlite;
mod stats;
mod store;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

pub use petstore_testkit::{Backend, Fault, Part};
pub use stats::Stats;
pub use store::{Cas, KvStore};

/// The engine of `backend`, on the data at `location` (or a fresh store of
/// its own); also as the memory engine when it is one (preloading dumps it).
fn open(
    backend: Backend,
    location: &Location,
) -> Result<(Arc<dyn Engine>, Option<memory::MemoryEngine>)> {
    Ok(match backend {
        Backend::Memory => {
            let memory = memory::MemoryEngine::default();
            (Arc::new(memory.clone()), Some(memory))
        }
        Backend::Sqlite => (
            Arc::new(sqlite::SqliteEngine::open(location.sqlite_file.clone())?),
            None,
        ),
        Backend::Redis => (
            Arc::new(redis::RedisEngine::open(location.redis_url.as_deref())?),
            None,
        ),
        Backend::Dynamo => {
            let (endpoint, table) = location.dynamo.as_ref().ok_or_else(|| {
                anyhow::anyhow!("the dynamo backend needs an endpoint and a table")
            })?;
            (Arc::new(dynamo::DynamoEngine::open(endpoint, table)?), None)
        }
    })
}

/// Where a backend keeps its data; `None` fields mean "a fresh one of its own".
#[derive(Debug, Clone, Default)]
pub struct Location {
    /// The SQLite database file (default: a new temporary file).
    pub sqlite_file: Option<PathBuf>,
    /// A running Redis/Valkey (default: start a `redis-server` on a free port).
    pub redis_url: Option<String>,
    /// A DynamoDB endpoint and the table of the store (required for dynamo).
    pub dynamo: Option<(String, String)>,
}

/// How a key-value call failed, as the guest will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvError {
    /// The `error::other` variant of `wasi:keyvalue`: the guest can handle it.
    Store(String),
    /// The host itself failed (Spin panics): the request ends in a bodiless 500.
    Trap(String),
}

impl std::fmt::Display for KvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KvError::Store(m) => write!(f, "store error: {m}"),
            KvError::Trap(m) => write!(f, "host trap: {m}"),
        }
    }
}

pub type KvResult<T> = Result<T, KvError>;
pub type KeyValue = (String, Option<Vec<u8>>);

/// One engine's implementation of the calls, with its own semantics.
pub trait Engine: Send + Sync {
    fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>>;
    fn set(&self, key: &str, value: &[u8]) -> KvResult<()>;
    fn delete(&self, key: &str) -> KvResult<()>;
    fn exists(&self, key: &str) -> KvResult<bool>;
    fn list_keys(&self) -> KvResult<Vec<String>>;
    fn increment(&self, key: &str, delta: i64) -> KvResult<i64>;
    fn cas_new(&self, key: &str) -> KvResult<Box<dyn EngineCas>>;
    fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>>;
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()>;
    fn delete_many(&self, keys: &[String]) -> KvResult<()>;

    /// Reads a value outside any request: not counted, never faulted.
    fn peek(&self, key: &str) -> Option<Vec<u8>>;
    /// Size of the largest stored value.
    fn largest_value(&self) -> usize;
    /// Number of keys stored.
    fn key_count(&self) -> usize;
    /// Writes many values at once, outside any request (preloading).
    fn load(&self, values: &[(String, Vec<u8>)]) -> Result<()>;
}

/// A compare-and-swap in progress on one engine.
pub trait EngineCas: Send {
    fn current(&mut self) -> KvResult<Option<Vec<u8>>>;
    /// `Ok(true)`: swapped; `Ok(false)`: the engine reported `cas-failed`.
    fn swap(&mut self, value: &[u8]) -> KvResult<bool>;
}
