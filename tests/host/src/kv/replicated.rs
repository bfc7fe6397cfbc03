//! A store replicated as Akamai Functions' is, for the edge module (the
//! edge build, no atomics): the test kit's replicated store, each request
//! served by one replica (the next in turn), its writes reaching the
//! others after their drawn delay on the clock the component reads.

use std::sync::Arc;

use petstore::store::{KvStore as _, StoreError};
use petstore_testkit::replicated::{ReplicaStore, Replicated};

use super::{Engine, EngineCas, KeyValue, KvError, KvResult};

/// The clock the component reads (Unix ms): the store's writes arrive by it.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// One replica of the store, as one request sees it.
pub struct ReplicaEngine {
    pub set: Replicated,
    pub replica: usize,
    pub clock: Clock,
}

impl ReplicaEngine {
    /// The replica, every write due by now delivered first.
    fn store(&self) -> ReplicaStore {
        self.set.advance_to((self.clock)());
        self.set.serve(self.replica)
    }
}

fn guest(e: StoreError) -> KvError {
    KvError::Store(e.0)
}

impl Engine for ReplicaEngine {
    fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        self.store().get(key).map_err(guest)
    }

    fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        self.store().set(key, value).map_err(guest)
    }

    fn delete(&self, key: &str) -> KvResult<()> {
        self.store().delete(key).map_err(guest)
    }

    fn exists(&self, key: &str) -> KvResult<bool> {
        Ok(self.get(key)?.is_some())
    }

    fn list_keys(&self) -> KvResult<Vec<String>> {
        self.store().list_keys().map_err(guest)
    }

    fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        self.store().increment(key, delta).map_err(guest)
    }

    fn cas_new(&self, key: &str) -> KvResult<Box<dyn EngineCas>> {
        match self.store().cas_begin(key) {
            Err(e) => Err(guest(e)),
            Ok(_) => Err(KvError::Trap("a replica has no compare-and-swap".into())),
        }
    }

    fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>> {
        let store = self.store();
        keys.iter()
            .map(|k| Ok((k.clone(), store.get(k).map_err(guest)?)))
            .collect()
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()> {
        self.store().set_many(pairs).map_err(guest)
    }

    fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        let store = self.store();
        keys.iter().try_for_each(|k| store.delete(k).map_err(guest))
    }

    fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.set.peek(self.replica, key)
    }

    fn largest_value(&self) -> usize {
        let keys = self.list_keys().unwrap_or_default();
        keys.iter()
            .filter_map(|k| self.peek(k).map(|v| v.len()))
            .max()
            .unwrap_or(0)
    }

    fn key_count(&self) -> usize {
        self.list_keys().map_or(0, |keys| keys.len())
    }

    /// On every replica at once (a store replicated before the test).
    fn load(&self, values: &[(String, Vec<u8>)]) -> anyhow::Result<()> {
        for replica in 0..self.set.replicas() {
            self.set
                .serve(replica)
                .set_many(values)
                .map_err(|e| anyhow::anyhow!(e.0))?;
        }
        Ok(())
    }
}
