//! How a page reads the store: one `get` at a time, or, where the backend's
//! `get-many` works (DynamoDB's `BatchGetItem`), its keys fetched ahead in
//! batches, so that a page's round trips do not grow with the keys it reads.

use std::collections::BTreeMap;

use crate::store::{KvStore, StoreError};

use super::backend::Reads;

/// Keys one `get-many` may name (DynamoDB's `BatchGetItem` limit).
pub const BATCH_KEYS: usize = 100;

/// Pairs one `set-many` may write (DynamoDB's `BatchWriteItem` limit).
pub const BATCH_WRITES: usize = 25;

/// A page's reads of the store.
pub(super) struct Reader<'s, S: KvStore> {
    store: &'s S,
    reads: Reads,
    /// What `get-many` answered, by key (`Some(None)`: the key does not
    /// exist); each taken once, leaving `None`: taken, not removed, since
    /// `BTreeMap::remove` and its rebalancing cost the module 11 KB
    /// (431,972 B without, 443,683 B with: BENCHMARKS.md, "Sizes").
    fetched: BTreeMap<String, Option<Option<Vec<u8>>>>,
}

impl<'s, S: KvStore> Reader<'s, S> {
    pub fn new(store: &'s S, reads: Reads) -> Self {
        Reader {
            store,
            reads,
            fetched: BTreeMap::new(),
        }
    }

    pub fn store(&self) -> &'s S {
        self.store
    }

    pub fn batched(&self) -> bool {
        self.reads == Reads::Batched
    }

    /// Whether `key` was fetched ahead and not taken yet. (This, `peek`
    /// and `get` are never inlined: each inlined copy of a `BTreeMap`
    /// search cost the module some 200 B, 4.6 KB in all: BENCHMARKS.md,
    /// "Sizes".)
    #[inline(never)]
    pub fn holds(&self, key: &str) -> bool {
        matches!(self.fetched.get(key), Some(Some(_)))
    }

    /// What was fetched ahead for `key`, without taking it.
    #[inline(never)]
    pub fn peek(&self, key: &str) -> Option<&[u8]> {
        self.fetched.get(key)?.as_ref()?.as_deref()
    }

    /// The value of `key`: taken from what was fetched ahead (no call), or
    /// read with one `get`.
    #[inline(never)]
    pub fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.fetched.get_mut(key).and_then(Option::take) {
            Some(value) => Ok(value),
            None => self.store.get(key),
        }
    }

    /// Fetches `keys` (those not fetched yet, each once) with one
    /// `get-many` per [`BATCH_KEYS`]; the number of calls made. Reading one
    /// at a time, it fetches nothing.
    pub fn fetch(&mut self, keys: Vec<String>) -> Result<usize, StoreError> {
        if !self.batched() {
            return Ok(0);
        }
        let mut wanted: Vec<String> = Vec::with_capacity(keys.len());
        for key in keys {
            if !self.holds(&key) && !wanted.contains(&key) {
                wanted.push(key);
            }
        }
        let mut calls = 0;
        for chunk in wanted.chunks(BATCH_KEYS) {
            let found = self.store.get_many(chunk)?;
            calls += 1;
            for key in chunk {
                self.fetched.insert(key.clone(), Some(None));
            }
            for (key, value) in found {
                self.fetched.insert(key, Some(Some(value)));
            }
        }
        Ok(calls)
    }
}
