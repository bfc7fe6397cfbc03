//! The edge build's replicated layout (`--features edge`) on a store that
//! replicates as Akamai Functions' does (`petstore_testkit::replicated`):
//! each request served by one of N replicas, writes reaching the others
//! late and out of order, no atomics, the platform's quotas. No
//! acknowledged pet is lost, no id given twice, every walk exact once the
//! store has settled, getPet and keyed creates as docs/decisions.md says.
#![cfg(feature = "edge")]

use std::cell::Cell;
use std::collections::BTreeSet;

use http::Method;
use petstore::platform::Platform;
use petstore::request::{Body, Request};
use petstore::response::Response;
use petstore::routes;
use petstore::store::{KvStore, StoreError, SwapReport};
use petstore_testkit::next_of;
use petstore_testkit::replicated::{Quota, Replicated};
use serde_json::Value;

const AUTH: &str = "Bearer test-key";
/// Unix ms of the test clock's 0.
const START_MS: u64 = 1_800_000_000_000;
/// What a page waits for: the commit window (1 s) and `replication_ms`.
const SETTLE_MS: u64 = 1_000 + REPLICATION_MS;
const REPLICATION_MS: u64 = 1_000;

/// Instances on one replicated store; the store's clock is theirs.
struct Edge {
    set: Replicated,
    replication_ms: u64,
    /// `piece_interval_ms` (B): 0 unless a test sets it.
    interval_ms: Cell<u64>,
    /// The last page a counted walk asked for: a follower's next poll.
    last: std::cell::RefCell<String>,
    /// How far each replica's instances' clocks are ahead of the store's
    /// (none: all at 0), within `clock_skew_ms`; and the one serving now.
    skews: std::cell::RefCell<Vec<u64>>,
    skew_ms: Cell<u64>,
    random: Cell<u64>,
}

/// One request's platform: the edge build's variables, the store's clock
/// (a wait moves it on), random bits of a seeded sequence.
struct Host<'e>(&'e Edge);

impl Platform for Host<'_> {
    fn variable(&self, name: &str) -> Result<String, String> {
        Ok(match name {
            "api_key" => "test-key".into(),
            "idempotency_lease_ms" => "10000".into(),
            "cors_origins" => String::new(),
            "key_value_backend" => "spin".into(),
            "catalogue_layout" => "replicated".into(),
            "replication_ms" => self.0.replication_ms.to_string(),
            "clock_skew_ms" => self.0.skews.borrow().iter().max().unwrap_or(&0).to_string(),
            "piece_interval_ms" => self.0.interval_ms.get().to_string(),
            _ => return Err(format!("no variable {name}")),
        })
    }

    fn now_ms(&self) -> u64 {
        START_MS + self.0.set.now_ms() + self.0.skew_ms.get()
    }

    fn random(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        for half in out.chunks_mut(8) {
            let mut x = self.0.random.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0.random.set(x);
            half.copy_from_slice(&x.to_le_bytes());
        }
        out
    }

    fn sleep_ms(&self, ms: u64) {
        self.0.set.advance(ms);
    }
}

impl Edge {
    fn new(set: Replicated, replication_ms: u64) -> Edge {
        Edge {
            set,
            replication_ms,
            interval_ms: Cell::new(0),
            last: Default::default(),
            skews: Default::default(),
            skew_ms: Cell::new(0),
            random: Cell::new(0x9e37_79b9_7f4a_7c15),
        }
    }

    fn request(
        &self,
        replica: usize,
        method: Method,
        target: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Response {
        let skew = self.skews.borrow().get(replica).copied().unwrap_or(0);
        self.skew_ms.set(skew);
        self.send(&self.set.serve(replica), method, target, headers, body)
    }

    /// A request through `store` (a replica, or one wrapped).
    fn send<S: KvStore>(
        &self,
        store: &S,
        method: Method,
        target: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Response {
        let mut all = vec![
            ("authorization".to_string(), AUTH.as_bytes().to_vec()),
            ("content-type".to_string(), b"application/json".to_vec()),
        ];
        all.extend(
            headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())),
        );
        let request = Request::new(
            method,
            target,
            all,
            Body::Complete(body.as_bytes().to_vec()),
        );
        routes::handle(&request, &Host(self), store).response
    }

    /// A create through `replica`: its status and, on 201, its id.
    fn create(&self, replica: usize, status: &str, key: Option<&str>) -> (u16, Option<i64>) {
        let body = format!(r#"{{"name":"p","categoryId":1,"status":"{status}"}}"#);
        let headers: Vec<(&str, &str)> = key.map(|k| ("idempotency-key", k)).into_iter().collect();
        let r = self.request(replica, Method::POST, "/v1/pets", &headers, &body);
        let id = (r.status.as_u16() == 201).then(|| json(&r)["id"].as_i64().unwrap());
        (r.status.as_u16(), id)
    }

    /// A walk through `replica` from `target`, 7 pets a page: the ids in
    /// walk order.
    fn walk(&self, replica: usize, target: &str) -> Vec<i64> {
        let (mut ids, mut target) = (Vec::new(), target.to_string());
        loop {
            let r = self.request(replica, Method::GET, &target, &[], "");
            assert_eq!(
                r.status.as_u16(),
                200,
                "{}",
                String::from_utf8_lossy(&r.body)
            );
            ids.extend(
                json(&r)
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["id"].as_i64().unwrap()),
            );
            match r.header("link").and_then(next_of) {
                Some(next) => target = next,
                None => return ids,
            }
        }
    }
}

impl Edge {
    /// A page through `replica`: its ids, its next link, and what it asked
    /// of the store (keys `list-keys` answered, keys written).
    fn page(&self, replica: usize, target: &str) -> (Vec<i64>, Option<String>, u64, u64) {
        let store = Counting::new(self.set.serve(replica));
        let r = self.send(&store, Method::GET, target, &[], "");
        assert_eq!(r.status.as_u16(), 200, "{target}");
        let body = json(&r);
        let ids = body.as_array().unwrap().iter();
        let ids = ids.map(|p| p["id"].as_i64().unwrap()).collect();
        let next = r.header("link").and_then(next_of);
        (ids, next, store.listed.get().0, store.writes.get())
    }

    /// A walk from `target` through `replica`: its ids, and per page the
    /// keys `list-keys` answered and the keys written; its last link (a
    /// follower's cursor) is `self.last`.
    fn walk_counted(&self, replica: usize, target: &str) -> (Vec<i64>, Vec<(u64, u64)>) {
        let (mut ids, mut costs, mut target) = (Vec::new(), Vec::new(), target.to_string());
        loop {
            let (page, next, listed, written) = self.page(replica, &target);
            ids.extend(page);
            costs.push((listed, written));
            match next {
                Some(next) => target = next,
                None => {
                    *self.last.borrow_mut() = target;
                    return (ids, costs);
                }
            }
        }
    }

    /// Creates `n` pets through replica 0, 3 a ms, a status in turn: ids.
    fn fill(&self, n: usize) -> Vec<i64> {
        let statuses = ["available", "pending", "sold"];
        let made = (0..n).map(|i| {
            if i % 3 == 2 {
                self.set.advance(1);
            }
            self.create(0, statuses[i % 3], None).1.unwrap()
        });
        made.collect()
    }

    /// The id of the first pet a walk shows.
    fn walk_first(&self, replica: usize) -> i64 {
        let r = self.request(replica, Method::GET, "/v1/pets?limit=1", &[], "");
        json(&r)[0]["id"].as_i64().unwrap()
    }
}

fn json(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[test]
fn a_create_writes_its_pet_and_its_entry_and_its_id_is_exact_in_javascript() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 1), 0);
    let (status, id) = edge.create(0, "sold", None);
    assert_eq!(status, 201);
    let id = id.unwrap();
    assert!((1..1i64 << 53).contains(&id), "{id}");
    assert_eq!(
        edge.set.peek(0, "ctr:id").unwrap(),
        b"petstore-replicated 1"
    );
    let entry = format!("ixr:{START_MS:013}:{id:016}:sold");
    let stored = String::from_utf8(edge.set.peek(0, &entry).unwrap()).unwrap();
    assert_eq!(
        stored,
        format!(r#"{{"id":{id},"name":"p","categoryId":1,"status":"sold"}}"#)
    );
    // getPet at once on the replica that created it.
    let r = edge.request(0, Method::GET, &format!("/v1/pets/{id}"), &[], "");
    assert_eq!(
        (r.status.as_u16(), json(&r)["id"].as_i64()),
        (200, Some(id))
    );
    // Listed once its time is past the commit window.
    assert!(edge.walk(0, "/v1/pets").is_empty());
    edge.set.advance(1_001);
    assert_eq!(edge.walk(0, "/v1/pets"), vec![id]);
    assert_eq!(edge.walk(0, "/v1/pets?status=sold"), vec![id]);
    assert!(edge.walk(0, "/v1/pets?status=available").is_empty());
}

#[test]
fn thirty_two_creators_on_three_replicas_lose_nothing_and_every_settled_walk_is_exact() {
    let runs = [
        (1, 0..=0, [0; 3]),
        (2, 0..=200, [0; 3]),
        (3, 0..=1_000, [0; 3]),
        (4, 200..=1_000, [0; 3]),
        // The instances' clocks apart by up to `clock_skew_ms` (1 s): a
        // pet created by one ahead settles for one behind twice that later.
        (5, 0..=1_000, [0, 400, 1_000]),
        (6, 200..=1_000, [1_000, 0, 0]),
    ];
    for (seed, delays, skews) in runs {
        let edge = Edge::new(Replicated::new(3, delays.clone(), seed), *delays.end());
        *edge.skews.borrow_mut() = skews.to_vec();
        let mut made = BTreeSet::new();
        let mut walks: Vec<(usize, Vec<i64>)> = Vec::new();
        // 32 creators, each a create every 320 ms through a replica of its
        // own, interleaved 10 ms apart, for 40 rounds; a walk during them.
        for round in 0..40 {
            for creator in 0..32usize {
                let (status, id) = edge.create(
                    creator % 3,
                    ["available", "pending", "sold"][creator % 3],
                    None,
                );
                assert_eq!(status, 201, "seed {seed}");
                assert!(made.insert(id.unwrap()), "id {id:?} given twice");
                edge.set.advance(10);
            }
            if round % 10 == 5 {
                walks.push((round % 3, edge.walk(round % 3, "/v1/pets")));
            }
        }
        // A walk during the creates shows what had settled: no pet twice,
        // nothing not created.
        for (replica, walk) in &walks {
            let shown: BTreeSet<i64> = walk.iter().copied().collect();
            assert_eq!(shown.len(), walk.len(), "replica {replica}: a pet twice");
            assert!(shown.is_subset(&made));
        }
        edge.set.settle();
        edge.set
            .advance(SETTLE_MS.max(edge.replication_ms + 1_000) + 1 + 2 * 1_000);
        assert!(edge.set.converged());
        for replica in 0..3 {
            let walk = edge.walk(replica, "/v1/pets");
            assert_eq!(
                walk.iter().copied().collect::<BTreeSet<_>>(),
                made,
                "seed {seed}, replica {replica}"
            );
            assert_eq!(walk.len(), made.len(), "a pet twice");
            let by_status: usize = ["available", "pending", "sold"]
                .iter()
                .map(|s| edge.walk(replica, &format!("/v1/pets?status={s}")).len())
                .sum();
            assert_eq!(by_status, made.len());
            for id in [made.first().unwrap(), made.last().unwrap()] {
                let r = edge.request(replica, Method::GET, &format!("/v1/pets/{id}"), &[], "");
                assert_eq!(r.status.as_u16(), 200);
            }
        }
    }
}

#[test]
fn a_follower_polling_with_its_cursor_sees_each_pet_once_while_writes_replicate_late() {
    let edge = Edge::new(Replicated::new(3, 0..=REPLICATION_MS, 9), REPLICATION_MS);
    let (mut seen, mut made) = (Vec::new(), BTreeSet::new());
    let mut target = "/v1/pets?limit=5".to_string();
    for step in 0..200usize {
        let (_, id) = edge.create(step % 3, "available", None);
        made.insert(id.unwrap());
        edge.set.advance(37);
        if step % 5 == 0 {
            // The follower reads through a replica of its own each time.
            // Pages on while they link on; the empty page that ends the
            // walk is requested again at the next poll (docs/api.md,
            // "Keeping a copy in sync").
            loop {
                let r = edge.request((step / 5) % 3, Method::GET, &target, &[], "");
                let ids: Vec<i64> = json(&r)
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["id"].as_i64().unwrap())
                    .collect();
                seen.extend(ids);
                let Some(next) = r.header("link").and_then(next_of) else {
                    break;
                };
                target = next;
            }
        }
    }
    edge.set.settle();
    edge.set.advance(SETTLE_MS + 1);
    let rest = edge.walk(0, &target);
    seen.extend(rest);
    let once: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(once.len(), seen.len(), "a pet shown twice");
    assert_eq!(once, made, "every pet, once");
}

#[test]
fn getpet_on_another_replica_finds_the_pet_once_it_has_replicated() {
    let edge = Edge::new(Replicated::new(2, 500..=500, 5), 500);
    let (_, id) = edge.create(0, "pending", None);
    let get = |replica| {
        edge.request(
            replica,
            Method::GET,
            &format!("/v1/pets/{}", id.unwrap()),
            &[],
            "",
        )
        .status
        .as_u16()
    };
    assert_eq!((get(0), get(1)), (200, 404));
    edge.set.advance(500);
    assert_eq!(get(1), 200);
}

#[test]
fn a_keyed_retry_replays_within_a_replicas_reach_and_may_create_again_beyond_it() {
    let edge = Edge::new(Replicated::new(2, 1_000..=1_000, 7), 1_000);
    let (status, first) = edge.create(0, "sold", Some("key-1"));
    assert_eq!(status, 201);
    // The same replica: replayed, nothing written.
    let writes = edge.set.in_flight();
    assert_eq!(edge.create(0, "sold", Some("key-1")), (201, first));
    assert_eq!(edge.set.in_flight(), writes);
    // Another replica before the record reached it: a second pet (the
    // promise's stated limit).
    let (_, second) = edge.create(1, "sold", Some("key-1"));
    assert_ne!(second, first);
    // Once both records have replicated, every replica replays one of them,
    // the same.
    edge.set.settle();
    let a = edge.create(0, "sold", Some("key-1"));
    let b = edge.create(1, "sold", Some("key-1"));
    assert_eq!(a, b);
    assert!(a.1 == first || a.1 == second);
    // The key under another pet: refused, as on every layout.
    let body = r#"{"name":"q","categoryId":1,"status":"sold"}"#;
    let r = edge.request(
        0,
        Method::POST,
        "/v1/pets",
        &[("idempotency-key", "key-1")],
        body,
    );
    assert_eq!(
        (r.status.as_u16(), json(&r)["code"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    // A retry after the record replicated, through the other replica.
    let (_, third) = edge.create(0, "sold", Some("key-2"));
    edge.set.advance(1_000);
    assert_eq!(edge.create(1, "sold", Some("key-2")), (201, third));
}

#[test]
fn a_create_past_the_write_quota_is_a_503_with_retry_after_and_writes_nothing() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 3).with_quota(Quota::AKAMAI), 0);
    // Back to back, within a second or two of the test's clock (only the
    // retries' waits move it): 50 writes a second hold 24 creates of two
    // writes (the first also writes the mark), and then refuse.
    let mut created = BTreeSet::new();
    let mut refused = 0;
    for _ in 0..40 {
        let r = edge.request(
            0,
            Method::POST,
            "/v1/pets",
            &[],
            r#"{"name":"p","categoryId":1,"status":"sold"}"#,
        );
        match r.status.as_u16() {
            201 => assert!(created.insert(json(&r)["id"].as_i64().unwrap())),
            503 => {
                refused += 1;
                assert!(r.header("retry-after").is_some());
                assert_eq!(json(&r)["code"], "store_unavailable");
            }
            other => panic!("{other}"),
        }
    }
    assert!(
        refused > 0 && created.len() >= 24,
        "{} created, {refused} refused",
        created.len()
    );
    // A refused create wrote nothing: every pet and every entry is one
    // acknowledged.
    edge.set.advance(SETTLE_MS + 2_000);
    let keys = KvStore::list_keys(&edge.set.serve(0)).unwrap();
    let pets = keys.iter().filter(|k| k.starts_with("pet:")).count();
    let entries = keys.iter().filter(|k| k.starts_with("ixr:")).count();
    assert_eq!((pets, entries), (created.len(), created.len()));
    let listed: BTreeSet<i64> = edge.walk(0, "/v1/pets?limit=100").into_iter().collect();
    assert_eq!(listed, created);
}

#[test]
fn a_store_another_layout_wrote_is_refused_never_misread() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 3), 0);
    KvStore::set(&edge.set.serve(0), "ctr:id", &7i64.to_le_bytes()).unwrap();
    let health = edge.request(0, Method::GET, "/v1/health", &[], "");
    assert_eq!(health.status.as_u16(), 503);
    assert_eq!(json(&health)["code"], "misconfigured");
    assert_eq!(edge.create(0, "sold", None).0, 503);
    assert_eq!(
        edge.request(0, Method::GET, "/v1/pets", &[], "")
            .status
            .as_u16(),
        503
    );
}

#[test]
fn a_ten_second_replication_delay_still_loses_nothing() {
    let edge = Edge::new(Replicated::new(3, 0..=10_000, 11), 10_000);
    let mut made = BTreeSet::new();
    for n in 0..300usize {
        let (status, id) = edge.create(n % 3, "available", None);
        assert_eq!(status, 201);
        assert!(made.insert(id.unwrap()));
        edge.set.advance(20);
    }
    // Before it settles, a walk shows only pets older than the horizon.
    let early: BTreeSet<i64> = edge.walk(1, "/v1/pets").into_iter().collect();
    assert!(early.is_empty(), "6 s of creates, 11 s horizon");
    edge.set.settle();
    edge.set.advance(11_001);
    for replica in 0..3 {
        assert_eq!(
            edge.walk(replica, "/v1/pets")
                .into_iter()
                .collect::<BTreeSet<_>>(),
            made
        );
    }
}

#[test]
fn another_layouts_cursor_ends_the_walk_and_a_malformed_one_is_a_400() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 3), 0);
    edge.create(0, "sold", None);
    edge.set.advance(1_001);
    let lanes = format!("l{}", ["0"; 32].join("-"));
    for cursor in ["c5", "c2u1_0", lanes.as_str()] {
        let r = edge.request(
            0,
            Method::GET,
            &format!("/v1/pets?cursor={cursor}"),
            &[],
            "",
        );
        assert_eq!(
            (r.status.as_u16(), r.body.as_slice(), r.header("link")),
            (200, &b"[]"[..], None),
            "{cursor}"
        );
    }
    let r = edge.request(0, Method::GET, "/v1/pets?cursor=r12x", &[], "");
    assert_eq!(
        (r.status.as_u16(), json(&r)["code"].as_str()),
        (400, Some("invalid_parameter"))
    );
}

/// A store that counts what a request asks of the one it wraps: calls,
/// keys written, and the keys `list-keys` answered with and their bytes;
/// and that may take its time over a `set-many` (`lag`: the store's
/// clock moved on by so many ms).
struct Counting<S> {
    inner: S,
    calls: Cell<u64>,
    writes: Cell<u64>,
    listed: Cell<(u64, u64)>,
    lag: Option<(Replicated, u64)>,
    /// A create's `set-many` applies only its pairs whose key starts so,
    /// then fails: a batch the platform applied in part.
    part: Option<&'static str>,
}

impl<S> Counting<S> {
    fn new(inner: S) -> Self {
        Counting {
            inner,
            calls: Cell::new(0),
            writes: Cell::new(0),
            listed: Cell::new((0, 0)),
            lag: None,
            part: None,
        }
    }
}

impl<S: KvStore> KvStore for Counting<S> {
    type Cas = S::Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.calls.set(self.calls.get() + 1);
        self.inner.get(key)
    }
    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.calls.set(self.calls.get() + 1);
        self.inner.get_many(keys)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.calls.set(self.calls.get() + 1);
        self.writes.set(self.writes.get() + 1);
        self.inner.set(key, value)
    }
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        self.calls.set(self.calls.get() + 1);
        self.writes.set(self.writes.get() + pairs.len() as u64);
        if let Some((set, ms)) = &self.lag {
            set.advance(*ms);
        }
        if let Some(kept) = self
            .part
            .filter(|_| pairs.iter().any(|p| p.0.starts_with("pet:")))
        {
            let part = pairs.iter().filter(|p| p.0.starts_with(kept)).cloned();
            self.inner.set_many(&part.collect::<Vec<_>>())?;
            return Err(StoreError("applied in part".into()));
        }
        self.inner.set_many(pairs)
    }
    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        self.inner.increment(key, delta)
    }
    fn cas_begin(&self, key: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError> {
        self.inner.cas_begin(key)
    }
    fn cas_swap(&self, cas: Self::Cas, value: &[u8]) -> Result<SwapReport, StoreError> {
        self.inner.cas_swap(cas, value)
    }
    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        self.calls.set(self.calls.get() + 1);
        let keys = self.inner.list_keys()?;
        let bytes = keys.iter().map(|k| k.len() as u64).sum();
        self.listed.set((keys.len() as u64, bytes));
        Ok(keys)
    }
}

impl Edge {
    /// A request, and what it asked of the store: one row of the cost table.
    fn counted(
        &self,
        method: Method,
        target: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let store = Counting::new(self.set.serve(0));
        let status = self
            .send(&store, method, target, headers, body)
            .status
            .as_u16();
        let (keys, bytes) = store.listed.get();
        let listed = match keys {
            0 => "none".to_string(),
            _ => format!(
                "{} keys, {} KB",
                thousands(keys),
                thousands(bytes.div_ceil(1000))
            ),
        };
        let calls = store.calls.get();
        (
            status,
            format!("{calls} | {} | {listed}", store.writes.get()),
        )
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// BENCHMARKS.md's table of the edge build's costs ("The edge build"),
/// row for row: what each operation asks of the store at 1,000, 10,000 and
/// 100,000 pets (one in three of a status), counted here.
#[test]
fn the_edge_builds_cost_table_in_benchmarks_md_is_what_it_does() {
    let body = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;
    let mut rows = Vec::new();
    for n in [1_000u64, 10_000, 100_000] {
        let edge = Edge::new(Replicated::new(1, 0..=0, 5), 0);
        for i in 0..n {
            let status = ["available", "pending", "sold"][i as usize % 3];
            let (code, _) = edge.create(0, status, None);
            assert_eq!(code, 201);
            if i % 10 == 0 {
                edge.set.advance(1);
            }
        }
        edge.set.advance(1_001);
        let mut row = |what: &str, (status, cost): (u16, String)| {
            assert!((200..300).contains(&status), "{what}: {status}");
            rows.push(format!("| {} | {what} | {cost} |", thousands(n)));
        };
        // As the 2.0.0 edge build left it: entries, no pieces.
        let first = "/v1/pets";
        row(
            "first page of 20, pieces made",
            edge.counted(Method::GET, first, &[], ""),
        );
        row(
            "first page of 20",
            edge.counted(Method::GET, first, &[], ""),
        );
        let some = edge.walk_first(0);
        row(
            "createPet",
            edge.counted(Method::POST, "/v1/pets", &[], body),
        );
        row(
            "keyed createPet",
            edge.counted(Method::POST, "/v1/pets", &[("idempotency-key", "k")], body),
        );
        row(
            "getPet",
            edge.counted(Method::GET, &format!("/v1/pets/{some}"), &[], ""),
        );
        // A walk made every piece; a page from half way through it.
        let mut mid = "/v1/pets?limit=100".to_string();
        edge.walk_counted(0, &mid);
        let end = edge.last.borrow().clone();
        for _ in 0..n / 200 {
            mid = edge.page(0, &mid).1.unwrap();
        }
        row(
            "mid-walk page of 100",
            edge.counted(Method::GET, &mid, &[], ""),
        );
        row("list-end page", edge.counted(Method::GET, &end, &[], ""));
        edge.set.advance(1);
        row(
            "list-end page, B passed",
            edge.counted(Method::GET, &end, &[], ""),
        );
        let sold = "/v1/pets?limit=100&status=sold";
        row(
            "status page of 100, pieces made",
            edge.counted(Method::GET, sold, &[], ""),
        );
        row(
            "status page of 100",
            edge.counted(Method::GET, sold, &[], ""),
        );
    }
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/BENCHMARKS.md")).unwrap();
    let table: Vec<&str> = doc
        .split("<!-- edge-costs: begin -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- edge-costs: end -->").next())
        .expect("BENCHMARKS.md has the edge build's cost table")
        .lines()
        .filter(|l| l.starts_with("| 1"))
        .collect();
    assert_eq!(
        table,
        rows,
        "BENCHMARKS.md's edge-costs table, as counted:\n{}",
        rows.join("\n")
    );
}

/// `replication_ms`, `clock_skew_ms` and `piece_interval_ms`: 0 to one
/// hour each, an unusable one a misconfiguration naming it (health says so).
#[test]
fn the_stores_delays_are_read_from_their_variables_and_checked() {
    struct Delays(&'static str, &'static str, &'static str);
    impl Platform for Delays {
        fn variable(&self, name: &str) -> Result<String, String> {
            match name {
                "replication_ms" => Ok(self.0.into()),
                "clock_skew_ms" => Ok(self.1.into()),
                "piece_interval_ms" => Ok(self.2.into()),
                _ => Err(format!("no variable {name}")),
            }
        }
        fn now_ms(&self) -> u64 {
            0
        }
        fn random(&self) -> [u8; 16] {
            [0; 16]
        }
        fn sleep_ms(&self, _: u64) {}
    }
    use petstore::config::Config;
    assert_eq!(Config::new(&Delays("0", "0", "0")).settle_ms(), Ok((0, 0)));
    assert_eq!(
        Config::new(&Delays(" 10000", "3600000", "60000")).settle_ms(),
        Ok((3_610_000, 60_000))
    );
    for (replication, skew, interval, named) in [
        ("soon", "0", "0", "replication_ms"),
        ("0", "3600001", "0", "clock_skew_ms"),
        ("-1", "0", "0", "replication_ms"),
        ("0", "0", "1 minute", "piece_interval_ms"),
        ("0", "0", "3600001", "piece_interval_ms"),
    ] {
        let wrong = Config::new(&Delays(replication, skew, interval))
            .settle_ms()
            .unwrap_err();
        assert_eq!(wrong.variable, named);
    }
}

/// A store slower than the create's window (its write lands 1.5 s after
/// the create read the clock): a 503 that names the stored pet; getPet
/// finds it, a retry with its key answers it, and a walk begun once it
/// settled lists it. Walks already past its place would not: the 503 says
/// so (docs/decisions.md).
#[test]
fn a_create_whose_write_lands_past_its_window_answers_503_naming_its_pet() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 3), 0);
    let store = Counting {
        lag: Some((edge.set.clone(), 1_500)),
        ..Counting::new(edge.set.serve(0))
    };
    let body = r#"{"name":"Late","categoryId":1,"status":"sold"}"#;
    let key = [("idempotency-key", "late-1")];
    let r = edge.send(&store, Method::POST, "/v1/pets", &key, body);
    let error = json(&r);
    assert_eq!(
        (
            r.status.as_u16(),
            error["code"].as_str(),
            r.header("retry-after")
        ),
        (503, Some("store_unavailable"), Some("1"))
    );
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("took 1500 ms to store pet "), "{message}");
    assert!(message.contains("will not list it"), "{message}");
    let id = petstore_testkit::model::landed_late_pet(message).unwrap();
    let found = edge.request(0, Method::GET, &format!("/v1/pets/{id}"), &[], "");
    assert_eq!(found.status.as_u16(), 200);
    assert_eq!(json(&found)["name"], "Late");
    let retry = edge.request(0, Method::POST, "/v1/pets", &key, body);
    assert_eq!(
        (retry.status.as_u16(), json(&retry)["id"].as_i64()),
        (201, Some(id))
    );
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    edge.set.advance(SETTLE_MS);
    assert_eq!(edge.walk(0, "/v1/pets"), [id]);
}

/// The edge build's document says what it does: ids at random, lists by
/// creation time once settled, keyed creates within a replica's reach
/// (openapi/edge-overlay.txt over openapi/petstore-v1.json); the rest is
/// the default build's, and the document is still JSON.
#[test]
fn the_edge_builds_document_describes_its_ids_order_and_keyed_creates() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 3), 0);
    let r = edge.request(0, Method::GET, "/v1/openapi.json", &[], "");
    assert_eq!(r.status.as_u16(), 200);
    let document = json(&r);
    let info = document["info"]["description"].as_str().unwrap();
    assert!(info.contains("ids are drawn at random"), "{info}");
    assert!(info.contains("Lists are by creation time"), "{info}");
    assert!(!info.contains("1, 2, 3, ..."), "{info}");
    assert!(!info.contains("ascending `id`"), "{info}");
    let create = document["paths"]["/pets"]["post"]["description"]
        .as_str()
        .unwrap();
    assert!(create.contains("no lease, no 409"), "{create}");
    let id = &document["components"]["schemas"]["Pet"]["properties"]["id"]["description"];
    assert_eq!(
        id,
        "Assigned by the service: drawn at random in 1 ... 2^53 - 1."
    );
    let default: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/openapi/petstore-v1.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        document["paths"].as_object().unwrap().len(),
        default["paths"].as_object().unwrap().len()
    );
    assert_eq!(
        document["components"]["schemas"]["Pet"]["required"],
        default["components"]["schemas"]["Pet"]["required"]
    );
}

/// Ids in the lists' order: creation time, then id (`fill` creates 3 a
/// ms; the test store's clock is the order of creation).
fn in_list_order(edge: &Edge, ids: &[i64]) -> Vec<i64> {
    let wanted: BTreeSet<i64> = ids.iter().copied().collect();
    let mut order: Vec<(u64, i64)> = Vec::new();
    let keys = edge.set.serve(0).list_keys().unwrap();
    for key in keys.iter().filter(|k| k.starts_with("ixr:")) {
        let mut parts = key.split(':').skip(1);
        let t: u64 = parts.next().unwrap().parse().unwrap();
        let id: i64 = parts.next().unwrap().parse().unwrap();
        if wanted.contains(&id) {
            order.push((t, id));
        }
    }
    order.sort();
    order.into_iter().map(|(_, id)| id).collect()
}

/// The index pieces (`ixp:`): the first page of a store without them makes
/// them with one `list-keys` (at most 10 written); every other page of the
/// walk reads pieces only, the list's end too until B has passed; pets
/// created since are listed once B has passed, by one `list-keys`.
#[test]
fn pages_read_index_pieces_and_list_keys_only_to_make_them() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 11), 0);
    edge.interval_ms.set(60_000);
    let made = edge.fill(1_000);
    edge.set.advance(1_001);
    let (walk, costs) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(
        walk,
        in_list_order(&edge, &made),
        "every pet once, in order"
    );
    let end = edge.last.borrow().clone();
    // 1,000 pets: pieces of 200, then an empty open one.
    assert!(costs[0].0 > 2_000 && costs[0].1 == 6, "{:?}", costs[0]);
    assert!(costs[1..].iter().all(|c| *c == (0, 0)), "{costs:?}");
    let piece = edge.set.peek(0, "ixp:all:1").unwrap();
    let piece = String::from_utf8(piece).unwrap();
    assert!(piece.starts_with("petstore-replicated-piece 1 "), "{piece}");
    assert_eq!(piece.lines().count(), 201);
    // A status's own pieces, made by its first page.
    let (sold, costs) = edge.walk_counted(0, "/v1/pets?status=sold&limit=100");
    assert_eq!(sold.len(), 333);
    assert_eq!(costs.iter().filter(|c| c.0 > 0).count(), 1, "{costs:?}");
    // Five more: settled, but the open piece serves until B has passed.
    let more = edge.fill(5);
    edge.set.advance(1_001);
    let (walk, costs) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(walk.len(), 1_000, "not yet: B has not passed");
    assert!(costs.iter().all(|c| *c == (0, 0)), "{costs:?}");
    edge.set.advance(60_000);
    let (follow, costs) = edge.walk_counted(0, &end);
    assert_eq!(follow, in_list_order(&edge, &more), "a follower: the five");
    assert!(
        costs[0].0 > 0 && costs[0].1 == 1,
        "the open piece made again"
    );
    let (walk, costs) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(walk.len(), 1_005);
    assert!(costs.iter().all(|c| *c == (0, 0)), "made: {costs:?}");
}

/// A piece missing or unreadable: the walk is exact (a page where pieces
/// do not follow on is made from the entries), and a walk from the list's
/// start makes the piece again.
#[test]
fn a_missing_or_unreadable_piece_is_made_again_and_walks_stay_exact() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 12), 0);
    let made = edge.fill(900);
    edge.set.advance(1_001);
    let order = in_list_order(&edge, &made);
    let (walk, _) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(walk, order);
    let (mut mid, mut shown) = ("/v1/pets?limit=50".to_string(), 0);
    while shown < 250 {
        let (page, next, ..) = edge.page(0, &mid);
        (mid, shown) = (next.unwrap(), shown + page.len());
    }
    assert!(mid.contains("_p1"), "{mid}");
    let kept = edge.set.peek(0, "ixp:all:1").unwrap();
    let store = edge.set.serve(0);
    store
        .set("ixp:all:1", b"petstore-replicated-piece 1 0 0 x")
        .unwrap();
    store.delete("ixp:all:2").unwrap();
    // From the middle: pieces that do not serve, a page from the entries.
    let (rest, costs) = edge.walk_counted(0, &mid);
    assert_eq!(rest, order[250..]);
    assert!(costs[0].0 > 0, "{costs:?}");
    // From the start: made again, as they were.
    let (walk, costs) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(walk, order);
    assert_eq!(edge.set.peek(0, "ixp:all:1"), Some(kept));
    assert!(edge.set.peek(0, "ixp:all:2").is_some());
    assert_eq!(costs.iter().filter(|c| c.0 > 0).count(), 1, "{costs:?}");
    // Piece 0 missing where a walk's second page looks for it: made again
    // from the list's start, so first pages read pieces again after it.
    let (_, second, ..) = edge.page(0, "/v1/pets?limit=50");
    let second = second.unwrap();
    assert!(second.ends_with("_p0"), "{second}");
    let first = edge.set.peek(0, "ixp:all:0").unwrap();
    edge.set.serve(0).delete("ixp:all:0").unwrap();
    let (page, ..) = edge.page(0, &second);
    assert_eq!(page, order[50..100]);
    assert_eq!(edge.set.peek(0, "ixp:all:0"), Some(first.clone()));
    for _ in 0..2 {
        let (walk, costs) = edge.walk_counted(0, "/v1/pets?limit=100");
        assert_eq!(walk, order);
        assert!(costs.iter().all(|c| c.0 == 0), "{costs:?}");
    }
    // A piece whose lines are out of order is no piece: made again too.
    let text = String::from_utf8(first).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(1, 2);
    store.set("ixp:all:0", lines.join("\n").as_bytes()).unwrap();
    let (walk, _) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(walk, order);
    assert_eq!(
        edge.set.peek(0, "ixp:all:0").map(String::from_utf8),
        Some(Ok(text))
    );
}

/// A store the 2.0.0 edge build filled (entries, no pieces): its pieces
/// are made at most 10 a page, and a 2.0.0 cursor (no piece named) pages
/// on exactly; the cursor after it names its piece.
#[test]
fn a_store_without_pieces_gets_them_a_few_a_page_and_old_cursors_page_on() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 13), 0);
    let made = edge.fill(3_000);
    edge.set.advance(1_001);
    let order = in_list_order(&edge, &made);
    let (_, old, ..) = edge.page(0, "/v1/pets?limit=50");
    let old = old.unwrap();
    let (start, _) = old.split_once("_p").unwrap();
    let (page, next, listed, written) = edge.page(0, start);
    assert_eq!(page, order[50..100]);
    assert!(listed > 0 && written == 0, "a page from the entries");
    assert!(next.unwrap().ends_with("_p0"));
    for store in ["ixp:all:0", "ixp:all:9"] {
        assert!(edge.set.peek(0, store).is_some(), "{store}");
    }
    assert!(
        edge.set.peek(0, "ixp:all:10").is_none(),
        "10 a page at most"
    );
    let (walk, costs) = edge.walk_counted(0, "/v1/pets?limit=100");
    assert_eq!(walk, order);
    assert!(costs.iter().all(|c| c.1 <= 10), "{costs:?}");
    assert_eq!(costs.iter().filter(|c| c.0 > 0).count(), 1, "{costs:?}");
    assert!(edge.set.peek(0, "ixp:all:15").is_some());
}

/// A create whose `set-many` the platform applied in part (a 503) leaves a
/// pet without its entry, or an entry without its pet. Once it has settled,
/// the first page that makes pieces writes the other half as the create
/// wrote it: the pet is listed once, and found. More than 10 halves are
/// mended 10 a page, and no piece is made past one left for later. A lone
/// pet that 2.0.0 wrote names no time: it is left as it is.
#[test]
fn a_create_applied_in_part_is_mended_by_the_page_that_makes_pieces() {
    let edge = Edge::new(Replicated::new(3, 0..=REPLICATION_MS, 7), REPLICATION_MS);
    let mut listed = edge.fill(3);
    let keys = |replica: usize| -> BTreeSet<String> {
        let keys = KvStore::list_keys(&edge.set.serve(replica)).unwrap();
        keys.into_iter().collect()
    };
    let mut halves = Vec::new();
    for i in 0..13 {
        // Twelve pets without their entries, then an entry without its pet.
        let kept = if i < 12 { "pet:" } else { "ixr:" };
        let store = Counting {
            part: Some(kept),
            ..Counting::new(edge.set.serve(1))
        };
        edge.set.settle();
        let before = keys(1);
        let body = format!(r#"{{"name":"half {i}","categoryId":1,"status":"sold"}}"#);
        let r = edge.send(&store, Method::POST, "/v1/pets", &[], &body);
        assert_eq!(r.status.as_u16(), 503);
        let new: Vec<String> = keys(1).difference(&before).cloned().collect();
        assert!(new.len() == 1 && new[0].starts_with(kept), "{new:?}");
        let id: i64 = new[0]
            .split(':')
            .nth(if i < 12 { 1 } else { 2 })
            .unwrap()
            .parse()
            .unwrap();
        halves.push((id, new[0].clone()));
        listed.push(id);
        listed.extend(edge.fill(1));
        edge.set.advance(1);
    }
    // Before: getPet finds a lone pet and not the lone entry's.
    let get = |replica: usize, id: i64| {
        let r = edge.request(replica, Method::GET, &format!("/v1/pets/{id}"), &[], "");
        r.status.as_u16()
    };
    assert_eq!((get(1, halves[0].0), get(1, halves[12].0)), (200, 404));
    let old = 77_000_000_000_001i64;
    let old_json = format!(r#"{{"id":{old},"name":"old","categoryId":1,"status":"sold"}}"#);
    let old_record = format!("petstore-pet 1 00000000000000aa\n{old_json}");
    KvStore::set(
        &edge.set.serve(0),
        &format!("pet:{old}"),
        old_record.as_bytes(),
    )
    .unwrap();
    edge.set.advance(SETTLE_MS + 1_000);
    edge.set.settle();
    let walked = edge.walk(2, "/v1/pets");
    assert_eq!(walked.len(), listed.len(), "each pet once: {walked:?}");
    assert_eq!(
        walked.iter().collect::<BTreeSet<_>>(),
        listed.iter().collect::<BTreeSet<_>>()
    );
    edge.set.settle();
    // What is stored is what a whole create writes.
    for (id, key) in &halves {
        let peek = |key: &str| edge.set.peek(0, key).unwrap();
        let entry = keys(0)
            .into_iter()
            .find(|k| k.starts_with("ixr:") && k.contains(&format!(":{id:016}:")));
        let entry = entry.expect("an entry");
        let t = &entry[4..17];
        let record = peek(&format!("pet:{id}"));
        assert_eq!(
            record,
            [format!("petstore-pet 1 +{t}\n").as_bytes(), &peek(&entry)].concat(),
            "{key}"
        );
        assert_eq!(get(0, *id), 200);
    }
    assert_eq!(get(0, old), 200);
    assert!(
        !keys(0).iter().any(|k| k.contains(&format!(":{old:016}:"))),
        "2.0.0's lone pet left"
    );
    assert!(!edge.walk(0, "/v1/pets").contains(&old));
}

/// A keyed create whose `set-many` stored its key's record alone (a 503)
/// made no pet: a retry with the key answers 503, not a pet nothing finds,
/// and writes nothing. With its entry too, the retry answers 503 until a
/// page mends the pet, then replays it; a whole keyed create as before.
#[test]
fn a_keyed_record_without_its_pet_is_replayed_only_once_the_pet_is_found() {
    let edge = Edge::new(Replicated::new(1, 0..=0, 7), 0);
    let store = Counting {
        part: Some("idem:"),
        ..Counting::new(edge.set.serve(0))
    };
    let body = r#"{"name":"lone","categoryId":1,"status":"sold"}"#;
    let key = [("idempotency-key", "lone-key")];
    let r = edge.send(&store, Method::POST, "/v1/pets", &key, body);
    assert_eq!(r.status.as_u16(), 503);
    let stored = KvStore::list_keys(&edge.set.serve(0)).unwrap();
    let record = stored.iter().find(|k| k.starts_with("idem:"));
    let id: i64 = edge.set.peek(0, record.expect("the record alone")).unwrap()[26..]
        .split(|b| *b == b'\n')
        .next()
        .and_then(|id| std::str::from_utf8(id).ok()?.parse().ok())
        .expect("its id");
    assert_eq!(stored.len(), 1, "{stored:?}");
    for _ in 0..2 {
        let retry = edge.request(0, Method::POST, "/v1/pets", &key, body);
        assert_eq!(
            (retry.status.as_u16(), json(&retry)["code"].as_str()),
            (503, Some("store_unavailable"))
        );
        let message = json(&retry)["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            message.contains("is not found yet: retry later"),
            "{message}"
        );
        let get = edge.request(0, Method::GET, &format!("/v1/pets/{id}"), &[], "");
        assert_eq!(get.status.as_u16(), 404);
        assert_eq!(KvStore::list_keys(&edge.set.serve(0)).unwrap(), stored);
    }
    // Its record and entry stored, not its pet: a 503 until the page that
    // makes pieces mends the pet from its entry; then the replay.
    let store = Counting {
        part: Some("i"),
        ..Counting::new(edge.set.serve(0))
    };
    let key = [("idempotency-key", "half-key")];
    let r = edge.send(&store, Method::POST, "/v1/pets", &key, body);
    assert_eq!(r.status.as_u16(), 503);
    let retry = edge.request(0, Method::POST, "/v1/pets", &key, body);
    assert_eq!(retry.status.as_u16(), 503);
    edge.set.advance(SETTLE_MS + 1_000);
    let walked = edge.walk(0, "/v1/pets");
    let retry = edge.request(0, Method::POST, "/v1/pets", &key, body);
    assert_eq!(
        (retry.status.as_u16(), retry.header("idempotent-replayed")),
        (201, Some("true"))
    );
    assert_eq!(walked, [json(&retry)["id"].as_i64().unwrap()]);
    let (status, id) = edge.create(0, "sold", Some("whole-key"));
    assert_eq!(
        (status, edge.create(0, "sold", Some("whole-key"))),
        (201, (201, id))
    );
}
