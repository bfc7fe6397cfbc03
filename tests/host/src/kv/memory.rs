//! The ideal store, in memory: every call atomic, a swap fails exactly when
//! the key changed since `cas.new`, counters as 8 bytes little-endian, as
//! Spin's default store keeps them (a store declared `spin` is read as on
//! SQLite). No backend's quirks: those come from the real engines.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Result;

use super::{Engine, EngineCas, KeyValue, KvError, KvResult};

#[derive(Debug, Clone)]
struct Entry {
    version: u64,
    value: Vec<u8>,
    /// Last written by `increment` (preloading copies counters as counters).
    counter: bool,
}

#[derive(Debug, Default)]
struct Data {
    entries: HashMap<String, Entry>,
    next_version: u64,
}

impl Data {
    fn write(&mut self, key: &str, value: Vec<u8>, counter: bool) {
        self.next_version += 1;
        let version = self.next_version;
        self.entries.insert(
            key.to_string(),
            Entry {
                version,
                value,
                counter,
            },
        );
    }

    fn version(&self, key: &str) -> Option<u64> {
        self.entries.get(key).map(|e| e.version)
    }
}

#[derive(Debug, Clone, Default)]
pub struct MemoryEngine {
    data: Arc<Mutex<Data>>,
}

/// What a preload copies into another engine: plain values, and counters
/// (which that engine stores in its own encoding through `increment`).
pub struct Dump {
    pub values: Vec<(String, Vec<u8>)>,
    pub counters: Vec<(String, i64)>,
}

impl MemoryEngine {
    fn lock(&self) -> MutexGuard<'_, Data> {
        // Each call is one insert or read: a poisoned lock is still consistent.
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn dump(&self) -> Dump {
        let data = self.lock();
        let mut dump = Dump {
            values: Vec::new(),
            counters: Vec::new(),
        };
        for (key, entry) in &data.entries {
            match decode_counter(&entry.value).filter(|_| entry.counter) {
                Some(n) => dump.counters.push((key.clone(), n)),
                None => dump.values.push((key.clone(), entry.value.clone())),
            }
        }
        dump
    }
}

/// 8 bytes little-endian, or decimal text (a counter another engine wrote).
fn decode_counter(value: &[u8]) -> Option<i64> {
    match <[u8; 8]>::try_from(value) {
        Ok(bytes) if !value.iter().all(u8::is_ascii_digit) => Some(i64::from_le_bytes(bytes)),
        _ => std::str::from_utf8(value).ok()?.parse().ok(),
    }
}

struct MemoryCas {
    engine: MemoryEngine,
    key: String,
    /// The key's version at `cas.new`; `None` if it was absent.
    version: Option<u64>,
}

impl EngineCas for MemoryCas {
    fn current(&mut self) -> KvResult<Option<Vec<u8>>> {
        Ok(self
            .engine
            .lock()
            .entries
            .get(&self.key)
            .map(|e| e.value.clone()))
    }

    fn swap(&mut self, value: &[u8]) -> KvResult<bool> {
        let mut data = self.engine.lock();
        if data.version(&self.key) != self.version {
            return Ok(false);
        }
        data.write(&self.key, value.to_vec(), false);
        Ok(true)
    }
}

impl Engine for MemoryEngine {
    fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        Ok(self.peek(key))
    }

    fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        self.lock().write(key, value.to_vec(), false);
        Ok(())
    }

    fn delete(&self, key: &str) -> KvResult<()> {
        self.lock().entries.remove(key);
        Ok(())
    }

    fn exists(&self, key: &str) -> KvResult<bool> {
        Ok(self.lock().entries.contains_key(key))
    }

    fn list_keys(&self) -> KvResult<Vec<String>> {
        let mut keys: Vec<String> = self.lock().entries.keys().cloned().collect();
        keys.sort();
        Ok(keys)
    }

    fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        let mut data = self.lock();
        let current = match data.entries.get(key) {
            None => 0,
            Some(e) => decode_counter(&e.value)
                .ok_or_else(|| KvError::Store(format!("value of '{key}' is not an integer")))?,
        };
        let next = current
            .checked_add(delta)
            .ok_or_else(|| KvError::Store("increment overflows".into()))?;
        data.write(key, next.to_le_bytes().to_vec(), true);
        Ok(next)
    }

    fn cas_new(&self, key: &str) -> KvResult<Box<dyn EngineCas>> {
        Ok(Box::new(MemoryCas {
            engine: self.clone(),
            key: key.to_string(),
            version: self.lock().version(key),
        }))
    }

    fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>> {
        let data = self.lock();
        Ok(keys
            .iter()
            .map(|k| (k.clone(), data.entries.get(k).map(|e| e.value.clone())))
            .collect())
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()> {
        let mut data = self.lock();
        for (k, v) in pairs {
            data.write(k, v.clone(), false);
        }
        Ok(())
    }

    fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        let mut data = self.lock();
        for k in keys {
            data.entries.remove(k);
        }
        Ok(())
    }

    fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.lock().entries.get(key).map(|e| e.value.clone())
    }

    fn largest_value(&self) -> usize {
        let data = self.lock();
        data.entries
            .values()
            .map(|e| e.value.len())
            .max()
            .unwrap_or(0)
    }

    fn key_count(&self) -> usize {
        self.lock().entries.len()
    }

    fn load(&self, values: &[(String, Vec<u8>)]) -> Result<()> {
        self.set_many(values).map_err(|e| anyhow::anyhow!("{e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_fails_exactly_when_the_key_changed() {
        let m = MemoryEngine::default();
        let mut a = m.cas_new("k").unwrap();
        m.set("k", b"x").unwrap();
        assert!(!a.swap(b"A").unwrap());
        let mut b = m.cas_new("k").unwrap();
        assert_eq!(b.current().unwrap().unwrap(), b"x");
        assert!(b.swap(b"B").unwrap());
        assert_eq!(m.peek("k").unwrap(), b"B");
    }

    #[test]
    fn a_dump_tells_counters_from_values() {
        let m = MemoryEngine::default();
        m.increment("n", 7).unwrap();
        m.set("v", b"12").unwrap();
        let dump = m.dump();
        assert_eq!(dump.counters, vec![("n".to_string(), 7)]);
        assert_eq!(dump.values, vec![("v".to_string(), b"12".to_vec())]);
    }
}
