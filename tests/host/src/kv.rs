//! The key-value store behind `wasi:keyvalue`, with Spin's semantics and,
//! on demand, the behaviour of the backends Spin 4.0.2 was measured on
//! (`shared/spec/spin-platform-facts.md`), fault injection and counters.
//!
//! One [`KvStore`] is shared by every request, as Spin's `default` store is
//! shared by every instance; a mutex makes each operation atomic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Which backend's behaviour to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Ideal semantics: a swap fails exactly when the key changed since `cas.new`.
    Clean,
    /// Spin's SQLite backend: counters are 8 bytes little-endian; a swap whose
    /// `cas.current()` saw no value is an unconditional upsert.
    Sqlite,
    /// Spin's Redis backend: counters are decimal text; `swap` writes and then
    /// reports `cas-failed`; `get-many` traps the request.
    Redis,
}

impl std::str::FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "clean" => Ok(Profile::Clean),
            "sqlite" => Ok(Profile::Sqlite),
            "redis" => Ok(Profile::Redis),
            _ => Err(format!("unknown profile '{s}' (clean, sqlite, redis)")),
        }
    }
}

/// A fault on the N-th key-value call from now (counted from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The call fails with `error::other` and changes nothing.
    Fail(u64),
    /// The call is applied, then the guest gets `error::other` (a lost reply).
    LoseReply(u64),
}

/// What a call did and how it should answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Normal,
    Fail,
    LoseReply,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Key-value calls (get, set, delete, exists, list-keys, increment,
    /// cas.new, cas.current, swap, and each batch call).
    pub calls: u64,
    /// Value bytes read and written.
    pub bytes: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    version: u64,
    value: Vec<u8>,
}

#[derive(Debug)]
struct State {
    data: HashMap<String, Entry>,
    next_version: u64,
    stats: Stats,
    faults: Vec<Fault>,
    /// Calls made since the faults were armed.
    calls_since_arm: u64,
    cas_failures: u64,
}

#[derive(Debug, Clone)]
pub struct KvStore {
    profile: Profile,
    state: Arc<Mutex<State>>,
}

/// A compare-and-swap in progress: the version it read and what `current`
/// returned (Spin's SQLite backend bases its swap on the latter).
#[derive(Debug, Clone)]
pub struct Cas {
    pub key: String,
    version: Option<u64>,
    current: Option<Option<Vec<u8>>>,
}

/// Errors as the `wasi:keyvalue` `error` variant carries them.
pub type KvResult<T> = Result<T, String>;
/// A failure that traps the guest (the request ends in a bodiless 500).
pub type Trap = String;
pub type KeyValue = (String, Option<Vec<u8>>);

impl KvStore {
    pub fn new(profile: Profile) -> KvStore {
        KvStore {
            profile,
            state: Arc::new(Mutex::new(State {
                data: HashMap::new(),
                next_version: 1,
                stats: Stats::default(),
                faults: Vec::new(),
                calls_since_arm: 0,
                cas_failures: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave an entry half-written
        // (each operation is one insert), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Arms faults counted from the next call.
    pub fn inject(&self, faults: &[Fault]) {
        let mut s = self.lock();
        s.faults = faults.to_vec();
        s.calls_since_arm = 0;
    }

    /// The next `k` swaps report `cas-failed` and write nothing.
    pub fn fail_next_swaps(&self, k: u64) {
        self.lock().cas_failures = k;
    }

    pub fn stats(&self) -> Stats {
        self.lock().stats
    }

    pub fn reset_stats(&self) {
        self.lock().stats = Stats::default();
    }

    pub fn largest_value(&self) -> usize {
        self.lock()
            .data
            .values()
            .map(|e| e.value.len())
            .max()
            .unwrap_or(0)
    }

    /// Reads a value without counting it (for tests and preloading checks).
    pub fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.lock().data.get(key).map(|e| e.value.clone())
    }

    /// Counts a call and decides its fate.
    fn enter(s: &mut State) -> Outcome {
        s.stats.calls += 1;
        s.calls_since_arm += 1;
        let n = s.calls_since_arm;
        match s
            .faults
            .iter()
            .position(|f| matches!(f, Fault::Fail(m) | Fault::LoseReply(m) if *m == n))
        {
            Some(i) => match s.faults.remove(i) {
                Fault::Fail(_) => Outcome::Fail,
                Fault::LoseReply(_) => Outcome::LoseReply,
            },
            None => Outcome::Normal,
        }
    }

    pub fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        let value = s.data.get(key).map(|e| e.value.clone());
        s.stats.bytes += value.as_ref().map_or(0, |v| v.len() as u64);
        answer(outcome, value)
    }

    pub fn set(&self, key: &str, value: Vec<u8>) -> KvResult<()> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        write(&mut s, key, value);
        answer(outcome, ())
    }

    pub fn delete(&self, key: &str) -> KvResult<()> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        s.data.remove(key);
        answer(outcome, ())
    }

    pub fn exists(&self, key: &str) -> KvResult<bool> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        let exists = s.data.contains_key(key);
        answer(outcome, exists)
    }

    pub fn list_keys(&self) -> KvResult<Vec<String>> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        let mut keys: Vec<String> = s.data.keys().cloned().collect();
        keys.sort();
        answer(outcome, keys)
    }

    /// Atomic add; an absent key counts as 0. The stored form is the
    /// backend's: 8 bytes little-endian (SQLite) or decimal text (others).
    pub fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        let current = match s.data.get(key) {
            None => 0,
            Some(e) => self
                .decode_counter(&e.value)
                .ok_or_else(|| format!("value of '{key}' is not an integer"))?,
        };
        let next = current
            .checked_add(delta)
            .ok_or_else(|| "increment overflows".to_string())?;
        let encoded = match self.profile {
            Profile::Sqlite => next.to_le_bytes().to_vec(),
            Profile::Clean | Profile::Redis => next.to_string().into_bytes(),
        };
        write(&mut s, key, encoded);
        answer(outcome, next)
    }

    fn decode_counter(&self, value: &[u8]) -> Option<i64> {
        match self.profile {
            Profile::Sqlite => Some(i64::from_le_bytes(value.try_into().ok()?)),
            Profile::Clean | Profile::Redis => std::str::from_utf8(value).ok()?.parse().ok(),
        }
    }

    pub fn cas_new(&self, key: &str) -> KvResult<Cas> {
        let mut s = self.lock();
        if Self::enter(&mut s) != Outcome::Normal {
            return Err(injected());
        }
        Ok(Cas {
            key: key.to_string(),
            version: s.data.get(key).map(|e| e.version),
            current: None,
        })
    }

    pub fn cas_current(&self, cas: &mut Cas) -> KvResult<Option<Vec<u8>>> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        let value = s.data.get(&cas.key).map(|e| e.value.clone());
        s.stats.bytes += value.as_ref().map_or(0, |v| v.len() as u64);
        cas.current = Some(value.clone());
        answer(outcome, value)
    }

    /// `Ok(true)`: swapped; `Ok(false)`: `cas-failed`; `Err`: store error.
    pub fn swap(&self, cas: Cas, value: Vec<u8>) -> KvResult<bool> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        if s.cas_failures > 0 {
            s.cas_failures -= 1;
            return Ok(false);
        }
        let stored = s.data.get(&cas.key);
        let unchanged = match self.profile {
            // SQLite compares with what `current` returned; when that was
            // nothing, it upserts without looking (the measured lost write).
            Profile::Sqlite => match &cas.current {
                Some(None) => true,
                Some(Some(seen)) => stored.is_some_and(|e| &e.value == seen),
                None => stored.map(|e| e.version) == cas.version,
            },
            Profile::Clean | Profile::Redis => stored.map(|e| e.version) == cas.version,
        };
        if !unchanged {
            return Ok(false);
        }
        write(&mut s, &cas.key, value);
        match (outcome, self.profile) {
            (Outcome::LoseReply, _) => Err(lost()),
            // Redis: the transaction ran, then UNWATCH failed: reported as a conflict.
            (_, Profile::Redis) => Ok(false),
            _ => Ok(true),
        }
    }

    /// `batch::get-many`. On the Redis profile it traps, as Spin's does.
    pub fn get_many(&self, keys: &[String]) -> Result<KvResult<Vec<KeyValue>>, Trap> {
        if self.profile == Profile::Redis {
            return Err("redis backend: get-many sent KEYS and failed to decode the reply".into());
        }
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Ok(Err(injected()));
        }
        let values: Vec<KeyValue> = keys
            .iter()
            .map(|k| (k.clone(), s.data.get(k).map(|e| e.value.clone())))
            .collect();
        s.stats.bytes += values
            .iter()
            .map(|(_, v)| v.as_ref().map_or(0, |v| v.len() as u64))
            .sum::<u64>();
        Ok(answer(outcome, values))
    }

    pub fn set_many(&self, pairs: Vec<(String, Vec<u8>)>) -> KvResult<()> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        for (k, v) in pairs {
            write(&mut s, &k, v);
        }
        answer(outcome, ())
    }

    pub fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        let mut s = self.lock();
        let outcome = Self::enter(&mut s);
        if outcome == Outcome::Fail {
            return Err(injected());
        }
        for k in keys {
            s.data.remove(k);
        }
        answer(outcome, ())
    }
}

fn write(s: &mut State, key: &str, value: Vec<u8>) {
    s.stats.bytes += value.len() as u64;
    let version = s.next_version;
    s.next_version += 1;
    s.data.insert(key.to_string(), Entry { version, value });
}

fn answer<T>(outcome: Outcome, value: T) -> KvResult<T> {
    match outcome {
        Outcome::LoseReply => Err(lost()),
        _ => Ok(value),
    }
}

fn injected() -> String {
    "injected fault: the backend did not answer".to_string()
}

fn lost() -> String {
    "injected fault: the reply was lost after the operation was applied".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_counters_are_little_endian_and_redis_counters_text() {
        let sqlite = KvStore::new(Profile::Sqlite);
        assert_eq!(sqlite.increment("n", 5).unwrap(), 5);
        assert_eq!(sqlite.peek("n").unwrap(), 5i64.to_le_bytes());
        let redis = KvStore::new(Profile::Redis);
        redis.increment("n", 5).unwrap();
        assert_eq!(redis.peek("n").unwrap(), b"5");
    }

    #[test]
    fn sqlite_absent_key_cas_upserts_over_a_concurrent_creator() {
        let kv = KvStore::new(Profile::Sqlite);
        let mut a = kv.cas_new("k").unwrap();
        let mut b = kv.cas_new("k").unwrap();
        assert_eq!(kv.cas_current(&mut a).unwrap(), None);
        assert_eq!(kv.cas_current(&mut b).unwrap(), None);
        assert!(kv.swap(a, b"A".to_vec()).unwrap());
        assert!(kv.swap(b, b"B".to_vec()).unwrap());
        assert_eq!(kv.peek("k").unwrap(), b"B");
    }

    #[test]
    fn clean_cas_detects_a_concurrent_write_and_redis_lies_after_writing() {
        let clean = KvStore::new(Profile::Clean);
        let a = clean.cas_new("k").unwrap();
        clean.set("k", b"x".to_vec()).unwrap();
        assert!(!clean.swap(a, b"A".to_vec()).unwrap());
        assert_eq!(clean.peek("k").unwrap(), b"x");
        let redis = KvStore::new(Profile::Redis);
        let a = redis.cas_new("k").unwrap();
        assert!(!redis.swap(a, b"A".to_vec()).unwrap());
        assert_eq!(redis.peek("k").unwrap(), b"A");
        assert!(redis.get_many(&["k".into()]).is_err(), "get-many traps");
    }

    #[test]
    fn faults_count_from_arming() {
        let kv = KvStore::new(Profile::Clean);
        kv.set("a", b"1".to_vec()).unwrap();
        kv.inject(&[Fault::Fail(1), Fault::LoseReply(2)]);
        assert!(kv.set("b", b"2".to_vec()).is_err());
        assert_eq!(kv.peek("b"), None);
        assert!(kv.set("c", b"3".to_vec()).is_err());
        assert_eq!(kv.peek("c").unwrap(), b"3");
        assert!(kv.set("d", b"4".to_vec()).is_ok());
        assert_eq!(kv.stats().calls, 4);
    }
}
