//! The store the host serves: an engine, exact counters of every call
//! (`stats`), and armed faults that fire at their call (`faults`); each
//! call goes through both on its way to the engine.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Result;

use petstore_testkit::replicated::Replicated;

use super::faults::{failed, lost, partly, Armed, Outcome};
use super::replicated::{Clock, ReplicaEngine};
use super::stats::{Kind, Stats};
use super::{memory, Backend, Engine, EngineCas, Fault, KeyValue, KvResult, Location, Part};

/// The handle behind a guest's `atomics::cas` resource.
pub struct Cas {
    pub key: String,
    inner: Box<dyn EngineCas>,
}

/// What the store counts and has armed, behind one lock.
#[derive(Debug, Default)]
struct Control {
    stats: Stats,
    armed: Armed,
}

/// The store the host serves: an engine, counters and armed faults.
#[derive(Clone)]
pub struct KvStore {
    backend: Backend,
    engine: Arc<dyn Engine>,
    /// The same engine when it is the memory one (preloading dumps it).
    memory: Option<memory::MemoryEngine>,
    control: Arc<Mutex<Control>>,
    /// Replicas, and the next request's.
    replicas: Option<(Replicated, Arc<AtomicUsize>)>,
}

impl KvStore {
    /// A fresh store on `backend`: an empty memory store, a new temporary
    /// SQLite file, or a `redis-server` of its own.
    pub fn new(backend: Backend) -> Result<KvStore> {
        KvStore::open(backend, &Location::default())
    }

    pub fn open(backend: Backend, location: &Location) -> Result<KvStore> {
        let (engine, memory) = super::open(backend, location)?;
        Ok(KvStore {
            backend,
            engine,
            memory,
            control: Arc::default(),
            replicas: None,
        })
    }

    /// A store replicated as Akamai Functions' is (`set`): each request
    /// served by the next replica in turn ([`KvStore::for_request`]); no
    /// atomics. Counters and faults are the whole store's.
    pub fn replicated(set: Replicated) -> KvStore {
        let engine = ReplicaEngine {
            set: set.clone(),
            replica: 0,
            clock: Arc::new(|| 0),
        };
        KvStore {
            backend: Backend::Memory,
            engine: Arc::new(engine),
            memory: None,
            control: Arc::default(),
            replicas: Some((set, Arc::default())),
        }
    }

    /// The store as one request sees it: this one, or on replicas the next
    /// replica, its writes arriving by `clock` (the one the request reads).
    pub fn for_request(&self, clock: Clock) -> KvStore {
        let Some((set, next)) = &self.replicas else {
            return self.clone();
        };
        let replica = next.fetch_add(1, Ordering::SeqCst) % set.replicas();
        KvStore {
            engine: Arc::new(ReplicaEngine {
                set: set.clone(),
                replica,
                clock,
            }),
            ..self.clone()
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    fn lock(&self) -> MutexGuard<'_, Control> {
        // Control holds only counters; a panic elsewhere cannot break them.
        self.control.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Arms faults counted from the next call (replacing any armed ones).
    pub fn inject(&self, faults: &[Fault]) {
        self.lock().armed.arm(faults);
    }

    /// The next `k` swaps report `cas-failed` and write nothing.
    pub fn fail_next_swaps(&self, k: u64) {
        self.lock().armed.fail_next_swaps(k);
    }

    /// The next `k` opens of the store fail, as a Spin process's first
    /// open of a SQLite file fails when another process keeps the file
    /// locked past the busy timeout (rusqlite's 5 s).
    pub fn fail_next_opens(&self, k: u64) {
        self.lock().armed.fail_next_opens(k);
    }

    /// Whether this open fails (one of [`KvStore::fail_next_opens`]).
    pub fn open_fails(&self) -> Option<String> {
        let fails = self.lock().armed.open_fails();
        fails.then(|| petstore_testkit::SQLITE_LOCKED.to_string())
    }

    pub fn stats(&self) -> Stats {
        self.lock().stats
    }

    pub fn reset_stats(&self) {
        self.lock().stats = Stats::default();
    }

    pub fn largest_value(&self) -> usize {
        self.engine.largest_value()
    }

    pub fn key_count(&self) -> usize {
        self.engine.key_count()
    }

    /// Reads a value without counting it (tests and preloading checks).
    pub fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.engine.peek(key)
    }

    pub fn memory_engine(&self) -> Option<memory::MemoryEngine> {
        self.memory.clone()
    }

    /// The engine itself, outside counting and faults (preloading).
    pub fn engine(&self) -> &dyn Engine {
        self.engine.as_ref()
    }

    /// Counts a call and decides its fate.
    fn enter(&self, kind: Kind, bytes_out: usize) -> Outcome {
        let mut c = self.lock();
        c.stats.count(kind, bytes_out);
        c.armed.strike()
    }

    fn count_read(&self, bytes: usize) {
        self.lock().stats.bytes += bytes as u64;
    }

    /// Runs one call through counting and faults: a failed call never
    /// reaches the engine; a lost reply does, and its answer is dropped.
    fn call<T>(
        &self,
        kind: Kind,
        bytes_out: usize,
        run: impl FnOnce() -> KvResult<T>,
    ) -> KvResult<T> {
        match self.enter(kind, bytes_out) {
            Outcome::Fail | Outcome::Partial(_) => Err(failed()),
            Outcome::LoseReply => {
                run()?;
                Err(lost())
            }
            Outcome::Normal => run(),
        }
    }

    pub fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        self.call(Kind::Read, 0, || {
            let value = self.engine.get(key)?;
            self.count_read(value.as_ref().map_or(0, Vec::len));
            Ok(value)
        })
    }

    pub fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        self.call(Kind::Write, value.len(), || self.engine.set(key, value))
    }

    pub fn delete(&self, key: &str) -> KvResult<()> {
        self.call(Kind::Write, 0, || self.engine.delete(key))
    }

    pub fn exists(&self, key: &str) -> KvResult<bool> {
        self.call(Kind::Read, 0, || self.engine.exists(key))
    }

    pub fn list_keys(&self) -> KvResult<Vec<String>> {
        self.call(Kind::Read, 0, || self.engine.list_keys())
    }

    /// Atomic add; an absent key counts as 0. The stored form is the engine's
    /// (SQLite: 8 bytes little-endian; Redis: decimal text).
    pub fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        self.call(Kind::Increment, 0, || self.engine.increment(key, delta))
    }

    pub fn cas_new(&self, key: &str) -> KvResult<Cas> {
        self.call(Kind::Cas, 0, || {
            Ok(Cas {
                key: key.to_string(),
                inner: self.engine.cas_new(key)?,
            })
        })
    }

    pub fn cas_current(&self, cas: &mut Cas) -> KvResult<Option<Vec<u8>>> {
        self.call(Kind::Cas, 0, || {
            let value = cas.inner.current()?;
            self.count_read(value.as_ref().map_or(0, Vec::len));
            Ok(value)
        })
    }

    /// `Ok(true)`: swapped; `Ok(false)`: `cas-failed`; `Err`: store error.
    pub fn swap(&self, cas: &mut Cas, value: &[u8]) -> KvResult<bool> {
        self.call(Kind::Cas, value.len(), || {
            if self.lock().armed.swap_fails() {
                return Ok(false);
            }
            cas.inner.swap(value)
        })
    }

    /// `batch::get-many`: on Redis it fails the request, as Spin's does.
    pub fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>> {
        self.lock().stats.get_many += 1;
        self.call(Kind::Read, 0, || {
            let values = self.engine.get_many(keys)?;
            let read = values.iter().map(|(_, v)| v.as_ref().map_or(0, Vec::len));
            self.count_read(read.sum());
            Ok(values)
        })
    }

    pub fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()> {
        let bytes = pairs.iter().map(|(_, v)| v.len()).sum();
        self.lock().stats.set_many += 1;
        match self.enter(Kind::Write, bytes) {
            Outcome::Fail => Err(failed()),
            Outcome::LoseReply => {
                self.engine.set_many(pairs)?;
                Err(lost())
            }
            Outcome::Partial(part) => {
                let one = match part {
                    Part::First => pairs.first(),
                    Part::Last => pairs.last(),
                };
                self.engine
                    .set_many(one.map(std::slice::from_ref).unwrap_or_default())?;
                Err(partly())
            }
            Outcome::Normal => self.engine.set_many(pairs),
        }
    }

    pub fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        self.call(Kind::Write, 0, || self.engine.delete_many(keys))
    }
}
