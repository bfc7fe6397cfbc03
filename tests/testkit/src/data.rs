//! What each of Spin's key-value backends does with one call, as data: the
//! one model of their semantics, which the in-memory store
//! ([`MemStore`](crate::MemStore)) and the explorer's store
//! ([`explore::Shared`](crate::explore)) both run. From Spin 4.0.2's source
//! (`crates/key-value-*/src/store.rs`) and docs/spin-platform.md:
//!
//! - SQLite: a swap is `UPDATE … WHERE value = <seen>`, and an upsert when
//!   `current` saw nothing; counters are 8 bytes little-endian.
//! - Redis: `cas.new` WATCHes the key, so a swap lands only if nothing wrote
//!   the key since; it then reports `cas-failed` whatever happened (the
//!   failing `UNWATCH`); counters are decimal text.
//! - DynamoDB: items carry `VAL` and, once swapped, a version `VER`. A swap
//!   is conditioned on the `VER` `current` saw, else on the value it saw,
//!   else on the item's absence (an atomic put-if-absent); `increment` is a
//!   read and a write conditioned on the value read, which leaves `VER` as
//!   it was; `set` replaces the item, `VER` included. An empty key is
//!   refused. Counters are decimal text.

use std::collections::BTreeMap;

use petstore::store::{StoreError, SwapReport};

use crate::Backend;

/// One stored item.
#[derive(Debug, Clone)]
struct Item {
    value: Vec<u8>,
    /// Bumped by every write: what Redis's WATCH and the ideal store notice.
    stamp: u64,
    /// DynamoDB's `VER`: set by a swap, kept by `increment`, dropped by `set`.
    ver: Option<u64>,
}

/// What a compare-and-swap's `current` saw, as the backend remembers it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub key: String,
    stamp: Option<u64>,
    value: Option<Vec<u8>>,
    ver: Option<u64>,
}

impl Seen {
    /// Whether the key was absent when `current` read it.
    pub fn absent(&self) -> bool {
        self.value.is_none()
    }
}

/// The items of one store, and the semantics of the backend it stands for.
#[derive(Debug, Clone)]
pub struct Data {
    backend: Backend,
    items: BTreeMap<String, Item>,
    stamp: u64,
    /// Value bytes moved (read and written).
    pub bytes: u64,
}

/// How Spin's `aws_dynamo` backend reports an `increment` whose conditional
/// write lost a race (the AWS SDK's error, as Spin passes it on).
pub const DYNAMODB_RACE_LOST: &str = "TransactionCanceledException: Transaction cancelled, \
     please refer cancellation reasons for specific reasons [ConditionalCheckFailed]";

impl Data {
    pub fn new(backend: Backend) -> Data {
        Data {
            backend,
            items: BTreeMap::new(),
            stamp: 0,
            bytes: 0,
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Refuses what the backend refuses of any key (DynamoDB: an empty one).
    pub fn check_key(&self, key: &str) -> Result<(), StoreError> {
        if key.is_empty() && self.backend == Backend::Dynamo {
            return Err(StoreError("ValidationException: an empty key".into()));
        }
        Ok(())
    }

    /// Refuses a `get-many` the backend cannot make: any on Redis (Spin's
    /// fails the whole request, a trap the component cannot catch: a
    /// panic here), more than 100 keys or a key twice on DynamoDB.
    pub fn check_get_many(&self, keys: &[String]) -> Result<(), StoreError> {
        assert!(
            self.backend != Backend::Redis,
            "get-many on Spin's Redis backend fails the request: {keys:?}"
        );
        let distinct: std::collections::BTreeSet<&String> = keys.iter().collect();
        if distinct.len() != keys.len() || keys.len() > 100 {
            return Err(StoreError(format!(
                "get-many of {} keys ({} distinct): ValidationException",
                keys.len(),
                distinct.len()
            )));
        }
        Ok(())
    }

    pub fn get(&mut self, key: &str) -> Option<Vec<u8>> {
        let value = self.items.get(key).map(|item| item.value.clone());
        self.bytes += value.as_ref().map_or(0, |v| v.len() as u64);
        value
    }

    /// The value, outside any call (not counted).
    pub fn peek(&self, key: &str) -> Option<&[u8]> {
        self.items.get(key).map(|item| item.value.as_slice())
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.items.keys()
    }

    pub fn largest_value(&self) -> usize {
        self.items
            .values()
            .map(|i| i.value.len())
            .max()
            .unwrap_or(0)
    }

    pub fn remove(&mut self, key: &str) {
        self.items.remove(key);
    }

    /// `set`: the whole item replaced (DynamoDB's `PutItem` drops `VER`).
    pub fn set(&mut self, key: &str, value: &[u8]) {
        self.write(key, value.to_vec(), None);
    }

    fn write(&mut self, key: &str, value: Vec<u8>, ver: Option<u64>) {
        self.stamp += 1;
        self.bytes += value.len() as u64;
        let stamp = self.stamp;
        self.items
            .insert(key.to_string(), Item { value, stamp, ver });
    }

    /// Whether counters are decimal text (Redis, DynamoDB) rather than 8
    /// bytes little-endian (SQLite).
    fn text_counters(&self) -> bool {
        matches!(self.backend, Backend::Redis | Backend::Dynamo)
    }

    /// The counter at `key` as `increment` reads it (absent: 0), and the
    /// value it was read from (what DynamoDB's write is conditioned on).
    pub fn counter(&self, key: &str) -> Result<(i64, Option<Vec<u8>>), StoreError> {
        let not_a_counter = || StoreError(format!("'{key}' does not hold a counter"));
        let Some(item) = self.items.get(key) else {
            return Ok((0, None));
        };
        let current = if self.text_counters() {
            std::str::from_utf8(&item.value)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(not_a_counter)?
        } else {
            let bytes: Result<[u8; 8], _> = item.value.as_slice().try_into();
            // Spin's SQLite host: `expect("incorrect length")`, a panic that
            // poisons the store's mutex, every later call of every request
            // failing until the process restarts. No request may make it.
            if bytes.is_err() && self.backend == Backend::Sqlite {
                panic!(
                    "Spin's SQLite host panics here, and wedges the store: `increment` of \
                     '{key}', which holds {} bytes, not 8",
                    item.value.len()
                );
            }
            i64::from_le_bytes(bytes.map_err(|_| not_a_counter())?)
        };
        Ok((current, Some(item.value.clone())))
    }

    /// The second half of an `increment` that read `read` (from
    /// [`Data::counter`]): writes `read + delta` if the key still holds
    /// what was read (DynamoDB's condition; elsewhere the two halves are
    /// one atomic call), keeping DynamoDB's `VER`.
    pub fn increment_from(
        &mut self,
        key: &str,
        read: (i64, Option<Vec<u8>>),
        delta: i64,
    ) -> Result<i64, StoreError> {
        let now = self.items.get(key).map(|item| &item.value);
        if now != read.1.as_ref() {
            return Err(StoreError(DYNAMODB_RACE_LOST.into()));
        }
        let next = read
            .0
            .checked_add(delta)
            .ok_or_else(|| StoreError("counter overflow".into()))?;
        let stored = if self.text_counters() {
            next.to_string().into_bytes()
        } else {
            next.to_le_bytes().to_vec()
        };
        let ver = self.items.get(key).and_then(|item| item.ver);
        self.write(key, stored, ver);
        Ok(next)
    }

    /// An atomic `increment`.
    pub fn increment(&mut self, key: &str, delta: i64) -> Result<i64, StoreError> {
        let read = self.counter(key)?;
        self.increment_from(key, read, delta)
    }

    /// A compare-and-swap's `new` and `current`.
    pub fn cas_begin(&mut self, key: &str) -> (Seen, Option<Vec<u8>>) {
        let item = self.items.get(key).cloned();
        self.bytes += item.as_ref().map_or(0, |i| i.value.len() as u64);
        let seen = Seen {
            key: key.to_string(),
            stamp: item.as_ref().map(|i| i.stamp),
            value: item.as_ref().map(|i| i.value.clone()),
            ver: item.as_ref().and_then(|i| i.ver),
        };
        (seen, item.map(|i| i.value))
    }

    /// A swap after `seen`: whether the backend writes it, and what it
    /// reports (Redis: a conflict, whatever happened).
    pub fn cas_swap(&mut self, seen: &Seen, value: &[u8]) -> SwapReport {
        let item = self.items.get(&seen.key);
        let allowed = match self.backend {
            Backend::Memory | Backend::Redis => item.map(|i| i.stamp) == seen.stamp,
            Backend::Sqlite => match &seen.value {
                None => true,
                Some(value) => item.is_some_and(|i| &i.value == value),
            },
            Backend::Dynamo => match (seen.ver, &seen.value) {
                (Some(ver), _) => item.and_then(|i| i.ver) == Some(ver),
                (None, Some(value)) => item.is_some_and(|i| &i.value == value),
                (None, None) => item.is_none(),
            },
        };
        if allowed {
            let ver = match self.backend {
                Backend::Dynamo => Some(item.and_then(|i| i.ver).unwrap_or(0) + 1),
                _ => None,
            };
            self.write(&seen.key, value.to_vec(), ver);
        }
        match (allowed, self.backend) {
            (true, Backend::Redis) | (false, _) => SwapReport::Conflict,
            (true, _) => SwapReport::Swapped,
        }
    }
}
