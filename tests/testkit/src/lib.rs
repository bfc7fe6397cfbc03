//! Test-only: an in-memory [`KvStore`] with Spin's atomic semantics, for the
//! component's native tests, the one emulation of the backends' quirks; and
//! the tests' one vocabulary for a backend ([`Backend`]) and a fault
//! ([`Fault`]), which the test host and the end-to-end suites take too.
//!
//! It can behave like the backends described in `docs/spin-platform.md`
//! ([`Backend`]) and inject faults ([`Fault`]), so the unit tests show that
//! the catalogue survives each quirk; the end-to-end tests meet the same
//! quirks from the real engines in the test host. Clones share one store,
//! like two component instances sharing Spin's `default` store.

mod data;
pub mod explore;
pub mod model;
pub mod replicated;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use petstore::errors::RETRY_AFTER_SECONDS;
use petstore::store::{KvStore, StoreError, SwapReport};
use serde_json::Value;

pub use data::{Data, Seen, DYNAMODB_RACE_LOST};

/// One of Spin's key-value backends, or an ideal one: the quirks this store
/// reproduces, the engine the test host drives, the store real `spin up`
/// runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Ideal semantics in memory: CAS fails exactly when the key changed
    /// since `cas_begin`.
    Memory,
    /// Spin's SQLite: the swap is `UPDATE … WHERE value = <value seen at
    /// cas_begin>` (values compared, not versions); on a key that was absent
    /// at `cas_begin` it is an unconditional upsert (a concurrent creator's
    /// write is lost).
    Sqlite,
    /// Spin's Redis: `swap` applies the write, then reports a conflict.
    Redis,
    /// Spin's DynamoDB: counters are decimal text; a compare-and-swap is
    /// conditioned on what `current` saw, its absence included (an atomic
    /// put-if-absent), as [`Backend::Memory`]'s is; an empty key is refused.
    Dynamo,
}

impl Backend {
    /// The backends that need nothing but this machine (the test host's
    /// engines; DynamoDB needs DynamoDB Local).
    pub const LOCAL: [Backend; 3] = [Backend::Memory, Backend::Sqlite, Backend::Redis];
    /// Spin's own backends, as real `spin up` runs them.
    pub const SPIN: [Backend; 3] = [Backend::Sqlite, Backend::Redis, Backend::Dynamo];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Memory => "memory",
            Backend::Sqlite => "sqlite",
            Backend::Redis => "redis",
            Backend::Dynamo => "dynamo",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [
            Backend::Memory,
            Backend::Sqlite,
            Backend::Redis,
            Backend::Dynamo,
        ]
        .into_iter()
        .find(|b| b.name() == s)
        .ok_or_else(|| format!("unknown backend '{s}' (memory, sqlite, redis, dynamo)"))
    }
}

/// A fault to inject on a future call, counted from 1 over all calls: in
/// the in-memory store here, and armed at the N-th call in the test host
/// (`petstore-host`), which takes the same faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Call `n` fails and changes nothing.
    Fail(u64),
    /// Call `n` is applied, then its reply is lost (the caller sees an error).
    LoseReply(u64),
    /// A `set-many` applies only one of its pairs (the first, or the last),
    /// then fails: a batch that is neither atomic nor ordered (Spin's
    /// DynamoDB `BatchWriteItem`) failing part-way. Any other call fails.
    Partial(u64, Part),
    /// Call `n`, an `increment`, is refused as SQLite refuses a write that
    /// read inside its transaction while another process holds the file
    /// (`database is locked`, at once: SQLite breaks the deadlock); it
    /// changes nothing. Any other call fails.
    Locked(u64),
}

/// How Spin's SQLite backend reports a write refused while another
/// process holds the file (rusqlite's message, as Spin passes it on).
pub const SQLITE_LOCKED: &str = "database is locked";

/// Which pair of a `set-many` a [`Fault::Partial`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    First,
    Last,
}

impl Fault {
    /// The call it strikes.
    pub fn call(self) -> u64 {
        match self {
            Fault::Fail(n) | Fault::LoseReply(n) | Fault::Partial(n, _) | Fault::Locked(n) => n,
        }
    }
}

impl std::str::FromStr for Fault {
    type Err = String;
    /// `fail:N`, `lose-reply:N`, `partial-first:N`, `partial-last:N`,
    /// `locked:N`.
    fn from_str(s: &str) -> Result<Fault, String> {
        let (kind, n) = s.split_once(':').ok_or("KIND:N")?;
        let n: u64 = n
            .parse()
            .map_err(|_| format!("'{n}' is not a call number"))?;
        match kind {
            "fail" => Ok(Fault::Fail(n)),
            "lose-reply" => Ok(Fault::LoseReply(n)),
            "partial-first" => Ok(Fault::Partial(n, Part::First)),
            "partial-last" => Ok(Fault::Partial(n, Part::Last)),
            "locked" => Ok(Fault::Locked(n)),
            _ => Err(format!("unknown fault '{kind}'")),
        }
    }
}

/// One operation, as counted and as seen by hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Get(String),
    /// `get-many`, with its keys.
    GetMany(Vec<String>),
    Set(String),
    /// `set-many`, with its keys.
    SetMany(Vec<String>),
    Increment(String),
    CasBegin(String),
    Swap(String),
    /// `list-keys`: every key at once.
    ListKeys,
}

type Hook = Box<dyn FnMut(&Op)>;
type Matcher = Box<dyn Fn(&Op) -> bool>;

struct Inner {
    data: Data,
    calls: u64,
    log: Vec<Op>,
    faults: Vec<Fault>,
    /// Swaps attempted on a key that was absent at `cas_begin`.
    absent_key_swaps: u64,
    /// Run before the matching operation executes (to interleave a competitor).
    hooks: VecDeque<(Matcher, Hook)>,
}

/// The handle of a compare-and-swap in progress: what `current` saw.
pub struct MemCas(Seen);

#[derive(Clone)]
pub struct MemStore(Rc<RefCell<Inner>>);

impl Default for MemStore {
    fn default() -> Self {
        MemStore::new(Backend::Memory)
    }
}

impl MemStore {
    pub fn new(backend: Backend) -> MemStore {
        MemStore(Rc::new(RefCell::new(Inner {
            data: Data::new(backend),
            calls: 0,
            log: Vec::new(),
            faults: Vec::new(),
            absent_key_swaps: 0,
            hooks: VecDeque::new(),
        })))
    }

    /// The backend whose quirks it plays.
    pub fn backend(&self) -> Backend {
        self.0.borrow().data.backend()
    }

    pub fn inject(&self, fault: Fault) {
        self.0.borrow_mut().faults.push(fault);
    }

    /// Disarms the faults not triggered yet.
    pub fn clear_faults(&self) {
        self.0.borrow_mut().faults.clear();
    }

    /// Disarms the hooks not run yet.
    pub fn clear_hooks(&self) {
        self.0.borrow_mut().hooks.clear();
    }

    /// Runs `hook` once, just before the first operation that `when` matches.
    pub fn before(&self, when: impl Fn(&Op) -> bool + 'static, hook: impl FnMut(&Op) + 'static) {
        self.0
            .borrow_mut()
            .hooks
            .push_back((Box::new(when), Box::new(hook)));
    }

    /// Calls made so far (each `cas_begin` counts as the two host calls
    /// `cas.new` and `cas.current`).
    pub fn calls(&self) -> u64 {
        self.0.borrow().calls
    }

    /// Value bytes moved so far (read and written).
    pub fn bytes(&self) -> u64 {
        self.0.borrow().data.bytes
    }

    /// How many swaps targeted a key that was absent at `cas_begin` (the
    /// pattern that loses writes on Spin's SQLite backend).
    pub fn absent_key_swaps(&self) -> u64 {
        self.0.borrow().absent_key_swaps
    }

    pub fn ops(&self) -> Vec<Op> {
        self.0.borrow().log.clone()
    }

    pub fn reset_counts(&self) {
        let mut inner = self.0.borrow_mut();
        inner.calls = 0;
        inner.data.bytes = 0;
        inner.log.clear();
    }

    /// Writes a value bypassing counting, faults and hooks (to set up a
    /// store as an older release or a failure left it).
    pub fn put(&self, key: &str, value: &[u8]) {
        self.0.borrow_mut().data.set(key, value);
    }

    /// Removes a key bypassing counting, faults and hooks.
    pub fn remove(&self, key: &str) {
        self.0.borrow_mut().data.remove(key);
    }

    /// The stored value of `key`, bypassing counting and faults.
    pub fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.0.borrow().data.peek(key).map(<[u8]>::to_vec)
    }

    pub fn keys(&self) -> Vec<String> {
        self.0.borrow().data.keys().cloned().collect()
    }

    pub fn largest_value(&self) -> usize {
        self.0.borrow().data.largest_value()
    }

    /// Counts the call, runs a matching hook, and says which fault hits it.
    fn enter(&self, op: Op, call_weight: u64) -> Option<Fault> {
        let hook = {
            let mut inner = self.0.borrow_mut();
            let pos = inner.hooks.iter().position(|(when, _)| when(&op));
            pos.and_then(|p| inner.hooks.remove(p))
        };
        if let Some((_, mut hook)) = hook {
            hook(&op);
        }
        let mut inner = self.0.borrow_mut();
        let first = inner.calls + 1;
        inner.calls += call_weight;
        let last = inner.calls;
        inner.log.push(op);
        let hit = inner
            .faults
            .iter()
            .position(|f| (first..=last).contains(&f.call()));
        let fault = hit.map(|i| inner.faults.remove(i));
        // A partial batch is a failure of any call but a `set-many`, a
        // lock of any but an `increment`.
        match (fault, inner.log.last()) {
            (Some(Fault::Partial(n, _)), Some(op)) if !matches!(op, Op::SetMany(_)) => {
                Some(Fault::Fail(n))
            }
            (Some(Fault::Locked(n)), Some(op)) if !matches!(op, Op::Increment(_)) => {
                Some(Fault::Fail(n))
            }
            (fault, _) => fault,
        }
    }
}

fn failed(what: &str) -> StoreError {
    StoreError(format!("injected failure of {what}"))
}

fn lost(what: &str) -> StoreError {
    StoreError(format!("reply of {what} lost (it was applied)"))
}

/// What a call returns under `fault`, once it was applied (a lost reply is
/// an error all the same).
fn replied<T>(fault: Option<Fault>, what: &str, value: T) -> Result<T, StoreError> {
    match fault {
        Some(Fault::LoseReply(_)) => Err(lost(what)),
        _ => Ok(value),
    }
}

impl KvStore for MemStore {
    type Cas = MemCas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let fault = self.enter(Op::Get(key.into()), 1);
        if matches!(fault, Some(Fault::Fail(_))) {
            return Err(failed("get"));
        }
        let mut inner = self.0.borrow_mut();
        inner.data.check_key(key)?;
        let value = inner.data.get(key);
        replied(fault, "get", value)
    }

    /// As DynamoDB's `BatchGetItem` through Spin: only found keys come back;
    /// more than 100 keys, or one key twice, fails the call. On Redis it
    /// fails the whole request, as Spin's does (a trap the component cannot
    /// catch): here, a panic.
    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let fault = self.enter(Op::GetMany(keys.to_vec()), 1);
        self.0.borrow().data.check_get_many(keys)?;
        if matches!(fault, Some(Fault::Fail(_))) {
            return Err(failed("get-many"));
        }
        let mut inner = self.0.borrow_mut();
        let found: Vec<(String, Vec<u8>)> = keys
            .iter()
            .rev()
            .filter_map(|k| inner.data.get(k).map(|v| (k.clone(), v)))
            .collect();
        replied(fault, "get-many", found)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let fault = self.enter(Op::Set(key.into()), 1);
        if matches!(fault, Some(Fault::Fail(_))) {
            return Err(failed("set"));
        }
        self.0.borrow_mut().data.set(key, value);
        replied(fault, "set", ())
    }

    /// All or nothing, like Spin's SQLite transaction and Redis `MSET`,
    /// unless a [`Fault::Partial`] makes it fail part-way.
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        let keys = pairs.iter().map(|(k, _)| k.clone()).collect();
        let fault = self.enter(Op::SetMany(keys), 1);
        if matches!(fault, Some(Fault::Fail(_))) {
            return Err(failed("set-many"));
        }
        let mut inner = self.0.borrow_mut();
        if let Some(Fault::Partial(_, part)) = fault {
            let applied = match part {
                Part::First => pairs.first(),
                Part::Last => pairs.last(),
            };
            if let Some((key, value)) = applied {
                inner.data.set(key, value);
            }
            return Err(StoreError("set-many failed part-way".into()));
        }
        for (key, value) in pairs {
            inner.data.set(key, value);
        }
        replied(fault, "set-many", ())
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        let fault = self.enter(Op::Increment(key.into()), 1);
        if matches!(fault, Some(Fault::Locked(_))) {
            return Err(StoreError(SQLITE_LOCKED.into()));
        }
        if matches!(fault, Some(Fault::Fail(_))) {
            // On DynamoDB a failed `increment` is most often a race lost:
            // Spin reports its conditional write's cancellation.
            return Err(match self.0.borrow().data.backend() {
                Backend::Dynamo => StoreError(DYNAMODB_RACE_LOST.into()),
                _ => failed("increment"),
            });
        }
        let next = self.0.borrow_mut().data.increment(key, delta)?;
        replied(fault, "increment", next)
    }

    fn cas_begin(&self, key: &str) -> Result<(MemCas, Option<Vec<u8>>), StoreError> {
        let fault = self.enter(Op::CasBegin(key.into()), 2);
        if fault.is_some() {
            return Err(failed("cas.new/current"));
        }
        let (seen, current) = self.0.borrow_mut().data.cas_begin(key);
        Ok((MemCas(seen), current))
    }

    fn cas_swap(&self, cas: MemCas, value: &[u8]) -> Result<SwapReport, StoreError> {
        let fault = self.enter(Op::Swap(cas.0.key.clone()), 1);
        if matches!(fault, Some(Fault::Fail(_))) {
            return Err(failed("swap"));
        }
        let mut inner = self.0.borrow_mut();
        if cas.0.absent() {
            inner.absent_key_swaps += 1;
        }
        let report = inner.data.cas_swap(&cas.0, value);
        replied(fault, "swap", report)
    }

    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        let fault = self.enter(Op::ListKeys, 1);
        if matches!(fault, Some(Fault::Fail(_))) {
            return Err(failed("list-keys"));
        }
        let keys = self.0.borrow().data.keys().cloned().collect();
        replied(fault, "list-keys", keys)
    }
}

/// A client retrying a keyed create until its 201, the one retry loop of
/// the suites: `send` makes one attempt and says its status and its
/// `Retry-After` (seconds); on a 409 the client waits that long (`wait_ms`:
/// a real sleep over HTTP, a moved clock in memory), on a 503 it retries at
/// once. Panics on any other status, or with no 201 after `tries`.
pub fn retry_until_created<R>(
    tries: usize,
    mut send: impl FnMut() -> (u16, Option<u64>, R),
    mut wait_ms: impl FnMut(u64),
) -> R {
    for _ in 0..tries {
        match send() {
            (201, _, reply) => return reply,
            (409, after, _) => wait_ms(after.expect("a 409 says when to retry") * 1000),
            (503, _, _) => {}
            (status, _, _) => panic!("a keyed create answered {status}"),
        }
    }
    panic!("no 201 after {tries} tries");
}

/// The target of a `Link` value if it is a `rel="next"` (getPet's answers
/// carry `rel="successor-version"` instead).
pub fn next_of(link: &str) -> Option<String> {
    link.ends_with(r#">; rel="next""#)
        .then(|| next_target(link))
}

/// A client that reads pages and pets: the native test client (through the
/// core's router) and the HTTP one (real `spin up`, the test host) alike, so
/// that both walk and check the catalogue with the same code.
pub trait Reader {
    /// `GET target` (authenticated): its status, its body as JSON, and the
    /// target of its `Link: rel="next"`, if any.
    fn read(&self, target: &str) -> (u16, Value, Option<String>);
}

/// The target of a `Link: <target>; rel="next"` value.
pub fn next_target(link: &str) -> String {
    assert!(link.ends_with(r#">; rel="next""#), "{link}");
    let target = link.trim_start_matches('<').split('>').next();
    target.expect("a target").to_string()
}

/// Follows `next` links from `target`; the pets in walk order.
pub fn walk_pets(reader: &impl Reader, target: &str) -> Vec<Value> {
    let mut pets = Vec::new();
    let mut next = Some(target.to_string());
    let mut pages = 0;
    while let Some(page) = next {
        let (status, body, link) = reader.read(&page);
        assert_eq!(status, 200, "{page}: {body}");
        pets.extend(body.as_array().expect("a list of pets").iter().cloned());
        next = link;
        pages += 1;
        assert!(pages < 100_000, "walk does not end");
    }
    pets
}

/// Follows `next` links from `target`; the ids in walk order.
pub fn walk(reader: &impl Reader, target: &str) -> Vec<i64> {
    walk_pets(reader, target).iter().map(pet_id).collect()
}

fn pet_id(pet: &Value) -> i64 {
    pet["id"].as_i64().expect("an id")
}

/// The ids a store handed out, read with `peek` (a store's value, outside
/// any request): 1 to `ctr:id` in the counters layout (a create that took
/// an id and never stored its pet leaves one no walk lists: a hole); in the
/// lanes layout the ids from before a move, then every round up to each
/// lane's head (`petstore-lane 1 <round> …`).
pub fn handed_out_ids(peek: impl Fn(&str) -> Option<Vec<u8>>) -> BTreeSet<i64> {
    let Some(word) = peek("ctr:id") else {
        return BTreeSet::new();
    };
    let text = String::from_utf8_lossy(&word).to_string();
    // The lanes' mark, as docs/key-value-layout.md gives it:
    // `petstore-lanes <1: 16 lanes, 2: 32> <base> <last> <moved ms>`.
    let words: Vec<&str> = text.split(' ').collect();
    let (width, base, last): (i64, i64, i64) = match words[..] {
        ["petstore-lanes", version, base, last, _] => {
            let width = if version == "1" { 16 } else { 32 };
            (
                width,
                base.parse().expect("a base"),
                last.parse().expect("a last id"),
            )
        }
        _ => {
            let last = petstore::catalogue::decode_counter(&word).expect("a counter");
            return (1..=last).collect();
        }
    };
    let mut ids: BTreeSet<i64> = (1..=last).collect();
    for lane in 0..width {
        let round = peek(&format!("lane:{lane}")).map_or(0, |head| {
            let head = String::from_utf8_lossy(&head).to_string();
            head.split(' ')
                .nth(2)
                .and_then(|r| r.parse().ok())
                .unwrap_or(0)
        });
        ids.extend((1..=round).map(|n: i64| base + width * (n - 1) + lane));
    }
    ids
}

/// A client that keeps a copy of a list in sync, as docs/decisions.md tells
/// clients to: it follows `next` links until a page has none, and later
/// requests that last page again, which lists what was created since.
#[derive(Debug, Clone)]
pub struct Follower {
    /// Where the follower resumes: the last page it requested.
    pub url: String,
    /// Every id it was shown, in order.
    pub seen: Vec<i64>,
    pub requests: usize,
    /// How many times a page answered 503 `store_unavailable` and was
    /// requested again; only a follower made [`Follower::retrying_busy`]
    /// does that, any other fails on the first 503.
    pub retried: usize,
    retry_busy: bool,
}

/// Times one page may answer 503 before a busy-tolerant follower fails.
const BUSY_RETRIES: usize = 5;

impl Follower {
    pub fn new(target: &str) -> Follower {
        Follower {
            url: target.to_string(),
            seen: Vec::new(),
            requests: 0,
            retried: 0,
            retry_busy: false,
        }
    }

    /// A follower that requests a page again after the service's
    /// `Retry-After` ([`RETRY_AFTER_SECONDS`]) when it answered 503
    /// `store_unavailable`, up to 5 times a page: what a
    /// client does on a store that can be busy past a request's wait, such as
    /// one SQLite file under two Spin processes (docs/operations.md).
    pub fn retrying_busy(mut self) -> Follower {
        self.retry_busy = true;
        self
    }

    /// Follows the list from where it stopped to where it ends now.
    pub fn poll(&mut self, reader: &impl Reader) {
        let mut busy = 0;
        loop {
            let (status, body, next) = reader.read(&self.url);
            self.requests += 1;
            if status == 503 && self.retry_busy && busy < BUSY_RETRIES {
                assert_eq!(body["code"], "store_unavailable", "{}: {body}", self.url);
                eprintln!("{}: answered 503, retried: {body}", self.url);
                (busy, self.retried) = (busy + 1, self.retried + 1);
                let wait = std::time::Duration::from_secs(RETRY_AFTER_SECONDS.into());
                std::thread::sleep(wait);
                continue;
            }
            busy = 0;
            assert_eq!(status, 200, "{}: {body}", self.url);
            let pets = body.as_array().expect("a list of pets");
            self.seen.extend(pets.iter().map(pet_id));
            match next {
                Some(next) => self.url = next,
                None => return,
            }
            assert!(self.requests < 1_000_000, "the follower never catches up");
        }
    }

    /// Asserts that it was shown exactly `expected`, each once.
    pub fn assert_saw_exactly(&self, expected: &BTreeSet<i64>, context: &str) {
        let distinct: BTreeSet<i64> = self.seen.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            self.seen.len(),
            "{context}: an id shown twice"
        );
        let missing: Vec<&i64> = expected.difference(&distinct).collect();
        let extra: Vec<&i64> = distinct.difference(expected).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{context}: never shown {missing:?}, shown but not created {extra:?}"
        );
    }
}

/// The suites' one check of the whole catalogue, as its walks show it: the
/// unfiltered walk (pages of `limit`) lists exactly `expected`, once each,
/// in ascending id; each pet appears once in the walk of its own status and
/// in no other; pets from id `fetch_from` on are fetched one by one
/// (getPet), equal to their listed JSON. `context` names the moment.
pub fn assert_consistent(
    reader: &impl Reader,
    expected: &BTreeSet<i64>,
    limit: usize,
    fetch_from: i64,
    context: &str,
) {
    let all = walk_pets(reader, &format!("/v1/pets?limit={limit}"));
    let ids: Vec<i64> = all.iter().map(pet_id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ascending, once each: {ids:?} ({context})"
    );
    let listed: BTreeSet<i64> = ids.iter().copied().collect();
    let missing: Vec<&i64> = expected.difference(&listed).collect();
    let extra: Vec<&i64> = listed.difference(expected).collect();
    if !(missing.is_empty() && extra.is_empty()) {
        // What getPet says of each, so a failure names its cause.
        let fetched: Vec<String> = missing
            .iter()
            .chain(&extra)
            .take(20)
            .map(|id| {
                let (status, body, _) = reader.read(&format!("/v1/pets/{id}"));
                format!("{id}: {status} {body}")
            })
            .collect();
        panic!(
            "the unfiltered walk ({context}): not listed {missing:?}, listed but not expected {extra:?}; getPet: {fetched:#?}"
        );
    }
    let mut by_status: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for pet in &all {
        let status = pet["status"].as_str().expect("a status").to_string();
        by_status.entry(status).or_default().insert(pet_id(pet));
    }
    for status in ["available", "pending", "sold"] {
        let walked = walk(reader, &format!("/v1/pets?limit={limit}&status={status}"));
        let distinct: BTreeSet<i64> = walked.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            walked.len(),
            "{status}: a pet listed twice ({context})"
        );
        assert_eq!(
            distinct,
            by_status.remove(status).unwrap_or_default(),
            "the walk of {status} lists exactly the pets of that status ({context})"
        );
    }
    assert!(by_status.is_empty(), "unknown statuses: {by_status:?}");
    for pet in all.iter().filter(|p| pet_id(p) >= fetch_from) {
        let id = pet_id(pet);
        let (status, fetched, _) = reader.read(&format!("/v1/pets/{id}"));
        assert_eq!(status, 200, "pet {id} not fetchable ({context})");
        assert_eq!(&fetched, pet, "pet {id}: getPet and the list agree");
    }
}

#[cfg(test)]
mod tests {
    //! The store reproduces each measured quirk; the catalogue tests rely on it.
    use super::*;

    #[test]
    fn clean_cas_fails_when_the_key_changed() {
        let s = MemStore::new(Backend::Memory);
        let (a, cur) = s.cas_begin("k").unwrap();
        assert_eq!(cur, None);
        let (b, _) = s.cas_begin("k").unwrap();
        assert_eq!(s.cas_swap(a, b"A").unwrap(), SwapReport::Swapped);
        assert_eq!(s.cas_swap(b, b"B").unwrap(), SwapReport::Conflict);
        assert_eq!(s.peek("k").unwrap(), b"A");
    }

    #[test]
    fn sqlite_absent_key_cas_is_an_upsert_that_loses_the_first_write() {
        let s = MemStore::new(Backend::Sqlite);
        let (a, _) = s.cas_begin("k").unwrap();
        let (b, _) = s.cas_begin("k").unwrap();
        assert_eq!(s.cas_swap(a, b"A").unwrap(), SwapReport::Swapped);
        assert_eq!(s.cas_swap(b, b"B").unwrap(), SwapReport::Swapped);
        assert_eq!(s.peek("k").unwrap(), b"B", "A was told 'swapped' and lost");
        // On an existing key SQLite's CAS is correct.
        let (c, _) = s.cas_begin("k").unwrap();
        let (d, _) = s.cas_begin("k").unwrap();
        assert_eq!(s.cas_swap(c, b"C").unwrap(), SwapReport::Swapped);
        assert_eq!(s.cas_swap(d, b"D").unwrap(), SwapReport::Conflict);
        // It compares values: the same value written again is no change.
        let (e, _) = s.cas_begin("k").unwrap();
        s.set("k", b"C").unwrap();
        assert_eq!(s.cas_swap(e, b"E").unwrap(), SwapReport::Swapped);
    }

    #[test]
    fn redis_swap_writes_then_reports_failure() {
        let s = MemStore::new(Backend::Redis);
        s.set("k", b"old").unwrap();
        let (a, _) = s.cas_begin("k").unwrap();
        assert_eq!(s.cas_swap(a, b"new").unwrap(), SwapReport::Conflict);
        assert_eq!(s.peek("k").unwrap(), b"new");
    }

    /// A reader that answers from a script, one answer a request.
    struct Scripted(std::cell::RefCell<Vec<(u16, Value, Option<String>)>>);

    impl Reader for Scripted {
        fn read(&self, _target: &str) -> (u16, Value, Option<String>) {
            self.0.borrow_mut().remove(0)
        }
    }

    fn busy_then_pets() -> Scripted {
        let busy = serde_json::json!({"code": "store_unavailable", "status": 503});
        let pets = serde_json::json!([{"id": 7}, {"id": 8}]);
        Scripted(std::cell::RefCell::new(
            vec![(503, busy), (200, pets)]
                .into_iter()
                .map(|(status, body)| (status, body, None))
                .collect(),
        ))
    }

    #[test]
    fn a_busy_tolerant_follower_asks_again_after_a_503_and_sees_the_page_once() {
        let mut follower = Follower::new("/v1/pets").retrying_busy();
        follower.poll(&busy_then_pets());
        assert_eq!(
            (follower.seen, follower.requests, follower.retried),
            (vec![7, 8], 2, 1)
        );
    }

    #[test]
    #[should_panic(expected = "left: 503")]
    fn a_plain_follower_fails_on_a_503() {
        Follower::new("/v1/pets").poll(&busy_then_pets());
    }

    #[test]
    fn faults_fail_or_lose_the_reply() {
        let s = MemStore::default();
        s.inject(Fault::Fail(1));
        s.inject(Fault::LoseReply(2));
        assert!(s.set("a", b"1").is_err());
        assert_eq!(s.peek("a"), None);
        assert!(s.increment("n", 5).is_err());
        assert_eq!(
            s.increment("n", 1).unwrap(),
            6,
            "the lost increment was applied"
        );
        assert_eq!(s.peek("n").unwrap(), 6i64.to_le_bytes());
        assert_eq!(s.calls(), 3);
    }
}
