//! The explorer's store and platform: one store shared by concurrent
//! requests, which stops at a scheduling point before every call and inside
//! every call that is not one atomic step on the real backend — between
//! the keys of a `get-many` (DynamoDB's `BatchGetItem` reads each item at
//! its own moment), between the pairs of DynamoDB's `set-many`
//! (`BatchWriteItem`: neither atomic nor ordered), between DynamoDB's
//! `increment` read and its conditional write. What happens at a point is
//! the explorer's (run another request whole, or let a scheduler switch
//! threads); faults strike a request's n-th call. Semantics: [`Data`].
//!
//! Each request runs on an instance, request n on instance n mod
//! [`INSTANCES`], whose clock is the run's plus an offset of its own (the
//! instances' clock skew), which the explorer may move.
//!
//! Or the store is replicated ([`Replicated`]: the edge build's platform):
//! request n is served by replica n mod N and sees its writes at once; the
//! others get them when the explorer delivers them (at its points, in any
//! order) or, at the latest, once the run's clock passes their delay.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use petstore::platform::Platform;
use petstore::store::{KvStore, StoreError, SwapReport};

use crate::data::{Data, Seen};
use crate::replicated::{ReplicaStore, Replicated};
use crate::Backend;

/// What strikes a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strike {
    /// Fails, changing nothing.
    Fail,
    /// Applied, then its reply is lost.
    LoseReply,
    /// A `set-many` applies its first pair only (or, `Last`, its last),
    /// then fails, where it is not atomic (DynamoDB, replicas); any other
    /// call, or a `set-many` that is one transaction (Spin's SQLite and
    /// Redis), fails, changing nothing.
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

/// The instances requests run on: request n on instance n mod 3.
pub const INSTANCES: usize = 3;

/// What runs at a scheduling point, told which request reached it.
pub type Yielder = Arc<dyn Fn(usize) + Send + Sync>;

/// The store every request shares, the history's clock, and the
/// platform's clock (ms; waits move it on).
pub struct Shared {
    data: Mutex<Data>,
    /// Replicas in place of `data`.
    replicated: Option<Replicated>,
    clock_ms: Arc<AtomicU64>,
    /// Each instance's clock ahead of the run's (ms).
    offsets: [Arc<AtomicU64>; INSTANCES],
    /// One tick per scheduling point and per request sent or answered.
    ticks: AtomicU64,
    faults: Mutex<Vec<Fault>>,
    /// Calls made, per request.
    calls: Mutex<Vec<u64>>,
    /// The calls each request made, by name.
    names: Mutex<Vec<Vec<&'static str>>>,
    /// Requests whose instance crashed.
    crashed: Mutex<Vec<usize>>,
    yielder: Mutex<Option<Yielder>>,
}

impl Shared {
    /// A store holding `data`, its platform's clock at `clock_ms`.
    pub fn new(data: Data, clock_ms: u64) -> Arc<Shared> {
        Shared::with(data, None, clock_ms)
    }

    /// A replicated store (its writes delivered once the clock passes their
    /// delay, or earlier by [`Shared::deliver_one`]).
    pub fn replicated(set: Replicated, clock_ms: u64) -> Arc<Shared> {
        set.advance_to(clock_ms);
        Shared::with(Data::new(Backend::Sqlite), Some(set), clock_ms)
    }

    fn with(data: Data, replicated: Option<Replicated>, clock_ms: u64) -> Arc<Shared> {
        Arc::new(Shared {
            data: Mutex::new(data),
            replicated,
            clock_ms: Arc::new(AtomicU64::new(clock_ms)),
            offsets: Default::default(),
            ticks: AtomicU64::new(0),
            faults: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            names: Mutex::new(Vec::new()),
            crashed: Mutex::new(Vec::new()),
            yielder: Mutex::new(None),
        })
    }

    /// A new store holding what this one holds, its clock where this one's
    /// stands, no faults, no calls made.
    pub fn fork(&self) -> Arc<Shared> {
        let replicated = self.replicated.as_ref().map(Replicated::fork);
        let fork = Shared::with(self.data(), replicated, self.now_ms());
        fork.ticks
            .store(self.ticks.load(Ordering::SeqCst), Ordering::SeqCst);
        for (to, from) in fork.offsets.iter().zip(&self.offsets) {
            to.store(from.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        fork
    }

    /// The store as request `request` calls it.
    pub fn handle(self: &Arc<Self>, request: usize) -> Handle {
        Handle {
            shared: self.clone(),
            request,
        }
    }

    /// The platform's clock, which the requests' platforms share.
    pub fn clock(&self) -> Arc<AtomicU64> {
        self.clock_ms.clone()
    }

    pub fn now_ms(&self) -> u64 {
        self.clock_ms.load(Ordering::SeqCst)
    }

    /// The offset of the clock of the instance request `request` runs on.
    pub fn offset(&self, request: usize) -> Arc<AtomicU64> {
        self.offsets[request % INSTANCES].clone()
    }

    /// Sets the clock of instance `instance` to the run's plus `ms`.
    pub fn set_offset(&self, instance: usize, ms: u64) {
        self.offsets[instance].store(ms, Ordering::SeqCst);
    }

    /// Moves the platform's clock on (delivering the writes due by then).
    pub fn advance_ms(&self, ms: u64) {
        self.clock_ms.fetch_add(ms, Ordering::SeqCst);
        if let Some(set) = &self.replicated {
            set.advance_to(self.now_ms());
        }
    }

    /// The replica that serves request `request`; `None`: one store.
    pub fn replica_of(&self, request: usize) -> Option<usize> {
        self.replicated.as_ref().map(|set| request % set.replicas())
    }

    /// Delivers write number `pick` of those on their way to a replica
    /// (early: before the clock passes its delay); whether there was one.
    pub fn deliver_one(&self, pick: usize) -> bool {
        self.replicated
            .as_ref()
            .is_some_and(|set| set.deliver_one(pick))
    }

    /// Delivers the newest write on its way (before those sent earlier);
    /// whether there was one.
    pub fn deliver_newest(&self) -> bool {
        let set = self.replicated.as_ref();
        set.is_some_and(|set| set.in_flight() > 0 && set.deliver_one(set.in_flight() - 1))
    }

    pub fn set_yielder(&self, yielder: Option<Yielder>) {
        *lock(&self.yielder) = yielder;
    }

    pub fn inject(&self, fault: Fault) {
        lock(&self.faults).push(fault);
    }

    /// A copy of the data as it stands (of one store: replicas have none).
    fn data(&self) -> Data {
        lock(&self.data).clone()
    }

    /// The keys stored (on replicas: the first's).
    pub fn keys(&self) -> Vec<String> {
        match &self.replicated {
            Some(set) => set.serve(0).list_keys().unwrap_or_default(),
            None => lock(&self.data).keys().cloned().collect(),
        }
    }

    /// The stored value of `key`, outside any request (on replicas: the
    /// first's).
    pub fn peek(&self, key: &str) -> Option<Vec<u8>> {
        match &self.replicated {
            Some(set) => set.peek(0, key),
            None => lock(&self.data).peek(key).map(<[u8]>::to_vec),
        }
    }

    /// Writes a value outside any request (a state a release or a failure
    /// left; on replicas, on every one at once).
    pub fn put(&self, key: &str, value: &[u8]) {
        match &self.replicated {
            Some(set) => {
                (0..set.replicas()).for_each(|r| drop(set.serve(r).set(key, value)));
            }
            None => lock(&self.data).set(key, value),
        }
    }

    /// The clock: the next tick.
    pub fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn calls(&self, request: usize) -> u64 {
        lock(&self.calls).get(request).copied().unwrap_or(0)
    }

    /// The name of call `call` (from 1) of request `request`, if made.
    pub fn call_name(&self, request: usize, call: u64) -> Option<&'static str> {
        let names = lock(&self.names);
        names.get(request)?.get(call as usize - 1).copied()
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
    fn enter(&self, what: &'static str) -> Result<Option<Strike>, StoreError> {
        self.point();
        let call = {
            let mut calls = lock(&self.shared.calls);
            if calls.len() <= self.request {
                calls.resize(self.request + 1, 0);
            }
            calls[self.request] += 1;
            calls[self.request]
        };
        {
            let mut names = lock(&self.shared.names);
            if names.len() <= self.request {
                names.resize(self.request + 1, Vec::new());
            }
            names[self.request].push(what);
        }
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

    /// On replicas, the one serving this request, the writes due by the
    /// clock delivered first.
    fn replica(&self) -> Option<ReplicaStore> {
        let set = self.shared.replicated.as_ref()?;
        set.advance_to(self.shared.now_ms());
        Some(set.serve(self.request % set.replicas()))
    }

    fn backend(&self) -> Backend {
        self.data().backend()
    }
}

impl Shared {
    /// Whether a `set-many` may apply in part: on DynamoDB and on replicas.
    pub fn batches_in_part(&self) -> bool {
        self.replicated.is_some() || lock(&self.data).backend() == Backend::Dynamo
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
        if let Some(replica) = self.replica() {
            return replied(strike, "get", replica.get(key)?);
        }
        let mut data = self.data();
        data.check_key(key)?;
        let value = data.get(key);
        replied(strike, "get", value)
    }

    /// Each key read at its own moment, with a point between two.
    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let strike = self.enter("get-many")?;
        if self.replica().is_none() {
            self.data().check_get_many(keys)?;
        }
        let mut found = Vec::new();
        for (n, key) in keys.iter().enumerate() {
            if n > 0 {
                self.point();
            }
            let value = match self.replica() {
                Some(replica) => replica.get(key)?,
                None => self.data().get(key),
            };
            if let Some(value) = value {
                found.push((key.clone(), value));
            }
        }
        found.reverse();
        replied(strike, "get-many", found)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let strike = self.enter("set")?;
        match self.replica() {
            Some(replica) => replica.set(key, value)?,
            None => self.data().set(key, value),
        }
        replied(strike, "set", ())
    }

    /// One step on SQLite and Redis; pair by pair, with points between,
    /// on DynamoDB and on replicas (whose platform does not promise a batch
    /// whole).
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        let strike = self.enter("set-many")?;
        let partial = match strike {
            Some(Strike::PartialFirst) => pairs.first(),
            Some(Strike::PartialLast) => pairs.last(),
            _ => None,
        };
        let whole = self.replica().is_none() && self.backend() != Backend::Dynamo;
        if partial.is_some() && whole {
            return Err(StoreError("injected failure of set-many".into()));
        }
        if let Some((key, value)) = partial {
            match self.replica() {
                Some(replica) => replica.set(key, value)?,
                None => self.data().set(key, value),
            }
            return Err(StoreError("set-many failed part-way".into()));
        }
        if self.replica().is_some() {
            for (n, (key, value)) in pairs.iter().enumerate() {
                if n > 0 {
                    self.point();
                }
                if let Some(replica) = self.replica() {
                    replica.set(key, value)?;
                }
            }
        } else if self.backend() == Backend::Dynamo {
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
        if let Some(replica) = self.replica() {
            return replica.increment(key, delta);
        }
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
        if let Some(replica) = self.replica() {
            replica.cas_begin(key)?;
        }
        let (seen, current) = self.data().cas_begin(key);
        Ok((ExploreCas(seen), current))
    }

    fn cas_swap(&self, cas: ExploreCas, value: &[u8]) -> Result<SwapReport, StoreError> {
        let strike = self.enter("swap")?;
        if let Some(replica) = self.replica() {
            return replica.cas_swap((), value);
        }
        let report = self.data().cas_swap(&cas.0, value);
        replied(strike, "swap", report)
    }

    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        let strike = self.enter("list-keys")?;
        let keys = match self.replica() {
            Some(replica) => replica.list_keys()?,
            None => self.data().keys().cloned().collect(),
        };
        replied(strike, "list-keys", keys)
    }
}

/// One request's platform: the deployment's variables, the shared clock
/// (ms; waits move it on) plus its instance's offset, and random bits of its own, drawn from a seed so
/// that every run of a schedule is the same run.
pub struct ExplorePlatform {
    pub variables: Vec<(&'static str, String)>,
    pub clock_ms: Arc<AtomicU64>,
    pub offset_ms: Arc<AtomicU64>,
    random: Mutex<u64>,
    /// Waits between retries so far.
    pub waits: AtomicU64,
}

impl ExplorePlatform {
    pub fn new(
        variables: Vec<(&'static str, String)>,
        (clock_ms, offset_ms): (Arc<AtomicU64>, Arc<AtomicU64>),
        seed: u64,
    ) -> Self {
        ExplorePlatform {
            variables,
            clock_ms,
            offset_ms,
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
        self.clock_ms.load(Ordering::SeqCst) + self.offset_ms.load(Ordering::SeqCst)
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
