//! How a page reads: one `get` at a time, or keys fetched ahead with
//! `get-many` (DynamoDB), so that its round trips do not grow with them.

use std::collections::BTreeMap;

use crate::store::{KvStore, StoreError};

/// Keys one `get-many` may name, and pairs one `set-many` may write
/// (DynamoDB's `BatchGetItem` and `BatchWriteItem` limits).
pub const BATCH_KEYS: usize = 100;
pub const BATCH_WRITES: usize = 25;

/// What a `get-many` found: each key present, and its value.
pub type Found = Vec<(String, Vec<u8>)>;

/// The value of `key` among what a `get-many` found.
pub fn found<'f>(found: &'f [(String, Vec<u8>)], key: &str) -> Option<&'f [u8]> {
    found.iter().find(|(k, _)| k == key).map(|(_, v)| &v[..])
}

/// What a page's `get-many`s answered (`Some(None)`: absent), each taken
/// once by [`Reader::get`], leaving `None`: `BTreeMap::remove` costs 11 KB
/// of module. The data a page's steps read, fetched by its [`Reader`].
#[derive(Default)]
pub struct Fetched(BTreeMap<String, Option<Option<Vec<u8>>>>);

impl Fetched {
    /// Whether a batch read `key` and it is not taken. (Not inlined, as
    /// `peek` and `get`: each inlined search costs some 200 B of module.)
    #[inline(never)]
    pub fn holds(&self, key: &str) -> bool {
        matches!(self.0.get(key), Some(Some(_)))
    }

    #[inline(never)]
    pub fn peek(&self, key: &str) -> Option<&[u8]> {
        self.0.get(key)?.as_ref()?.as_deref()
    }
}

pub struct Reader<'s, S: KvStore> {
    store: &'s S,
    batched: bool,
    fetched: Fetched,
}

impl<'s, S: KvStore> Reader<'s, S> {
    pub fn new(store: &'s S, batched: bool) -> Self {
        Reader {
            store,
            batched,
            fetched: Fetched::default(),
        }
    }

    pub fn store(&self) -> &'s S {
        self.store
    }

    pub fn batched(&self) -> bool {
        self.batched
    }

    /// What its batches found.
    pub fn fetched(&self) -> &Fetched {
        &self.fetched
    }

    /// `key`'s value: taken from what was fetched ahead, or one `get`.
    /// Read one at a time, a value is kept: a walk that stopped to ask for
    /// its list's end walks again without a call more.
    #[inline(never)]
    pub fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(value) = self.fetched.0.get_mut(key).and_then(Option::take) {
            return Ok(value);
        }
        let value = self.store.get(key)?;
        if !self.batched {
            self.fetched.0.insert(key.to_string(), Some(value.clone()));
        }
        Ok(value)
    }

    /// Fetches those of `keys` not fetched yet, in `get-many`s of
    /// [`BATCH_KEYS`] (reading one at a time: none).
    pub fn fetch(&mut self, keys: Vec<String>) -> Result<(), StoreError> {
        let mut wanted: Vec<String> = Vec::with_capacity(keys.len());
        for key in keys {
            if self.batched && !self.fetched.holds(&key) && !wanted.contains(&key) {
                wanted.push(key);
            }
        }
        for chunk in wanted.chunks(BATCH_KEYS) {
            let found = self.store.get_many(chunk)?;
            for key in chunk {
                self.fetched.0.insert(key.clone(), Some(None));
            }
            for (key, value) in found {
                self.fetched.0.insert(key, Some(Some(value)));
            }
        }
        Ok(())
    }
}
