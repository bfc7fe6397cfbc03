//! The explorer's store and platform: one store shared by concurrent
//! requests, which stops at a scheduling point before every call and inside
//! every call that is not one atomic step on the real backend — between
//! the keys of a `get-many` (DynamoDB's `BatchGetItem` reads each item at
//! its own moment), between the pairs of DynamoDB's `set-many`
//! (`BatchWriteItem`: neither atomic nor ordered), between DynamoDB's
//! `increment` read and its conditional write. What happens at a point is
//! the explorer's (run another request whole, or let a scheduler switch
//! threads); faults strike a request's n-th call. Semantics: [`Data`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use petstore::platform::Platform;
use petstore::store::{KvStore, StoreError, SwapReport};

use crate::data::{Data, Seen};
use crate::Backend;

/// What strikes a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strike {
    /// Fails, changing nothing.
    Fail,
    /// Applied, then its reply is lost.
    LoseReply,
    /// A `set-many` applies its first pair only (or, `Last`, its last),
    /// then fails; any other call fails.
    PartialFirst,
    PartialLast,
    /// The instance dies: this call and every later one of the request
    /// fail, changing nothing (its answer never reaches the client).
    Crash,
}

impl Strike {
    pub const ALL: [Strike; 5] = [
        Strike::Fail,
        Strike::LoseReply,
        Strike::PartialFirst,
        Strike::PartialLast,
        Strike::Crash,
    ];
}

/// A strike at call `call` (from 1) of request `request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub request: usize,
    pub call: u64,
    pub strike: Strike,
}

/// What runs at a scheduling point, told which request reached it.
pub type Yielder = Arc<dyn Fn(usize) + Send + Sync>;

/// The store every request shares, and the history's clock.
pub struct Shared {
    data: Mutex<Data>,
    /// One tick per scheduling point and per request sent or answered.
    ticks: AtomicU64,
    faults: Mutex<Vec<Fault>>,
    /// Calls made, per request.
    calls: Mutex<Vec<u64>>,
    /// Requests whose instance crashed.
    crashed: Mutex<Vec<usize>>,
    yielder: Mutex<Option<Yielder>>,
}

impl Shared {
    pub fn new(data: Data) -> Arc<Shared> {
        Arc::new(Shared {
            data: Mutex::new(data),
            ticks: AtomicU64::new(0),
            faults: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            crashed: Mutex::new(Vec::new()),
            yielder: Mutex::new(None),
        })
    }

    /// A new store holding what this one holds, its clock where this one's
    /// stands, no faults, no calls made.
    pub fn fork(&self) -> Arc<Shared> {
        let fork = Shared::new(self.data());
        fork.ticks
            .store(self.ticks.load(Ordering::SeqCst), Ordering::SeqCst);
        fork
    }

    /// The store as request `request` calls it.
    pub fn handle(self: &Arc<Self>, request: usize) -> Handle {
        Handle {
            shared: self.clone(),
            request,
        }
    }

    pub fn set_yielder(&self, yielder: Option<Yielder>) {
        *lock(&self.yielder) = yielder;
    }

    pub fn inject(&self, fault: Fault) {
        lock(&self.faults).push(fault);
    }

    /// A copy of the data as it stands.
    pub fn data(&self) -> Data {
        lock(&self.data).clone()
    }

    /// The stored value of `key`, outside any request.
    pub fn peek(&self, key: &str) -> Option<Vec<u8>> {
        lock(&self.data).peek(key).map(<[u8]>::to_vec)
    }

    /// Writes a value outside any request (a state a release or a failure left).
    pub fn put(&self, key: &str, value: &[u8]) {
        lock(&self.data).set(key, value);
    }

    /// The clock: the next tick.
    pub fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn calls(&self, request: usize) -> u64 {
        lock(&self.calls).get(request).copied().unwrap_or(0)
    }

    pub fn crashed(&self, request: usize) -> bool {
        lock(&self.crashed).contains(&request)
    }
}

/// Poisoning aside: a panic in one request (a failed check) must not hide
/// the store from the report.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// One request's view of the shared store.
pub struct Handle {
    shared: Arc<Shared>,
    request: usize,
}

/// A compare-and-swap begun: what `current` saw.
pub struct ExploreCas(Seen);

impl Handle {
    /// A scheduling point: the clock ticks, the explorer acts. No lock is
    /// held across it.
    fn point(&self) {
        self.shared.tick();
        let yielder = lock(&self.shared.yielder).clone();
        if let Some(yielder) = yielder {
            yielder(self.request);
        }
    }

    /// Enters call `what`: its point, its number, the strike that hits it.
    fn enter(&self, what: &str) -> Result<Option<Strike>, StoreError> {
        self.point();
        let call = {
            let mut calls = lock(&self.shared.calls);
            if calls.len() <= self.request {
                calls.resize(self.request + 1, 0);
            }
            calls[self.request] += 1;
            calls[self.request]
        };
        let strike = {
            let mut faults = lock(&self.shared.faults);
            let at = faults
                .iter()
                .position(|f| f.request == self.request && f.call == call);
            at.map(|at| faults.remove(at).strike)
        };
        if strike == Some(Strike::Crash) {
            lock(&self.shared.crashed).push(self.request);
        }
        if self.shared.crashed(self.request) {
            return Err(StoreError(format!("the instance died at {what}")));
        }
        match strike {
            Some(Strike::Fail) => Err(StoreError(format!("injected failure of {what}"))),
            Some(Strike::PartialFirst | Strike::PartialLast) if what != "set-many" => {
                Err(StoreError(format!("injected failure of {what}")))
            }
            other => Ok(other),
        }
    }

    fn data(&self) -> MutexGuard<'_, Data> {
        lock(&self.shared.data)
    }

    fn backend(&self) -> Backend {
        self.data().backend()
    }
}

/// The reply of a call applied under `strike`.
fn replied<T>(strike: Option<Strike>, what: &str, value: T) -> Result<T, StoreError> {
    match strike {
        Some(Strike::LoseReply) => {
            Err(StoreError(format!("reply of {what} lost (it was applied)")))
        }
        _ => Ok(value),
    }
}

impl KvStore for Handle {
    type Cas = ExploreCas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let strike = self.enter("get")?;
        let mut data = self.data();
        data.check_key(key)?;
        let value = data.get(key);
        replied(strike, "get", value)
    }

    /// Each key read at its own moment, with a point between two.
    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let strike = self.enter("get-many")?;
        self.data().check_get_many(keys)?;
        let mut found = Vec::new();
        for (n, key) in keys.iter().enumerate() {
            if n > 0 {
                self.point();
            }
            if let Some(value) = self.data().get(key) {
                found.push((key.clone(), value));
            }
        }
        found.reverse();
        replied(strike, "get-many", found)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let strike = self.enter("set")?;
        self.data().set(key, value);
        replied(strike, "set", ())
    }

    /// One step on SQLite and Redis; pair by pair, with points between,
    /// on DynamoDB.
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        let strike = self.enter("set-many")?;
        let partial = match strike {
            Some(Strike::PartialFirst) => pairs.first(),
            Some(Strike::PartialLast) => pairs.last(),
            _ => None,
        };
        if let Some((key, value)) = partial {
            self.data().set(key, value);
            return Err(StoreError("set-many failed part-way".into()));
        }
        if self.backend() == Backend::Dynamo {
            for (n, (key, value)) in pairs.iter().enumerate() {
                if n > 0 {
                    self.point();
                }
                self.data().set(key, value);
            }
        } else {
            let mut data = self.data();
            for (key, value) in pairs {
                data.set(key, value);
            }
        }
        replied(strike, "set-many", ())
    }

    /// Atomic on SQLite and Redis; on DynamoDB a read, a point, and a
    /// write conditioned on the value read (a race lost fails the call).
    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        let strike = self.enter("increment")?;
        let next = if self.backend() == Backend::Dynamo {
            let read = self.data().counter(key)?;
            self.point();
            self.data().increment_from(key, read, delta)?
        } else {
            self.data().increment(key, delta)?
        };
        replied(strike, "increment", next)
    }

    fn cas_begin(&self, key: &str) -> Result<(ExploreCas, Option<Vec<u8>>), StoreError> {
        self.enter("cas.current")?;
        let (seen, current) = self.data().cas_begin(key);
        Ok((ExploreCas(seen), current))
    }

    fn cas_swap(&self, cas: ExploreCas, value: &[u8]) -> Result<SwapReport, StoreError> {
        let strike = self.enter("swap")?;
        let report = self.data().cas_swap(&cas.0, value);
        replied(strike, "swap", report)
    }

    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        let strike = self.enter("list-keys")?;
        let keys = self.data().keys().cloned().collect();
        replied(strike, "list-keys", keys)
    }
}

/// One request's platform: the deployment's variables, the shared clock
/// (ms; waits move it on), and random bits of its own, drawn from a seed so
/// that every run of a schedule is the same run.
pub struct ExplorePlatform {
    pub variables: Vec<(&'static str, String)>,
    pub clock_ms: Arc<AtomicU64>,
    random: Mutex<u64>,
    /// Waits between retries so far.
    pub waits: AtomicU64,
}

impl ExplorePlatform {
    pub fn new(
        variables: Vec<(&'static str, String)>,
        clock_ms: Arc<AtomicU64>,
        seed: u64,
    ) -> Self {
        ExplorePlatform {
            variables,
            clock_ms,
            random: Mutex::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            waits: AtomicU64::new(0),
        }
    }
}

impl Platform for ExplorePlatform {
    fn variable(&self, name: &str) -> Result<String, String> {
        self.variables
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("no variable {name}"))
    }

    fn now_ms(&self) -> u64 {
        self.clock_ms.load(Ordering::SeqCst)
    }

    fn random(&self) -> [u8; 16] {
        let mut x = lock(&self.random);
        let mut out = [0u8; 16];
        for half in out.chunks_mut(8) {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            half.copy_from_slice(&x.to_le_bytes());
        }
        out
    }

    fn sleep_ms(&self, ms: u64) {
        self.waits.fetch_add(1, Ordering::SeqCst);
        self.clock_ms.fetch_add(ms, Ordering::SeqCst);
    }
}
