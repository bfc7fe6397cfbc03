//! One run of the explorer: a store on one layout in one state, the
//! requests sent to it (each through the component's own router, on its own
//! platform), the history they make, and the walks they follow.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use http::Method;
use petstore::request::{Body, Request};
use petstore::routes;
use petstore_testkit::explore::{ExplorePlatform, Fault, Shared};
use petstore_testkit::model::{self, Answer, Call, Event, History, Promise};
use petstore_testkit::replicated::Replicated;
use petstore_testkit::{next_of, Backend, Data};

use crate::invariants;
use serde_json::{json, Value};

/// The most a live request may wait between retries in a run: the
/// explorer's clock passes waits without waiting, so a request that keeps
/// retrying (a livelock) would make a run long instead of slow; it fails
/// it. (A crashed instance's calls all fail: its retries are left to the
/// policy, as they change nothing.)
pub const MAX_WAITS: u64 = 16;

/// The lease of keyed creates in the explorer (ms), and the clock's start.
pub const LEASE_MS: u64 = 10_000;
pub const START_MS: u64 = 1_800_000_000_000;
/// How far [`World::settle`] moves the clock, with `replication_ms` and
/// twice `clock_skew_ms` (a create on the fastest clock, a page on the
/// slowest): past the replicated layout's window for a create's write to
/// land (1 s, its `LANDS_WITHIN_MS`).
pub const SETTLE_MS: u64 = 1_001;
/// On replicas, the most a write takes to reach another (each write's
/// delay is drawn up to it; the explorer may deliver it earlier): the
/// instances' `replication_ms`.
pub const REPLICATION_MS: u64 = 1_000;
/// The windows the code keeps (ms), as `src/catalogue/record.rs` and
/// `replicated/create.rs` state them: a counters or lanes create's commit
/// window, how long a reader waits before it gives a position up, and the
/// replicated layout's window for a create's write to land.
pub const COMMIT_WITHIN_MS: u64 = 20_000;
pub const SEAL_AFTER_MS: u64 = 60_000;
pub const LANDS_WITHIN_MS: u64 = 1_000;
const KEY: &str = "explore-key";

/// A layout on a backend, as its instances are configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub name: &'static str,
    pub backend: Backend,
    /// `key_value_backend`.
    pub declared: &'static str,
    /// `catalogue_layout` of its instances.
    pub layout: &'static str,
    pub promise: Promise,
    /// Replicas of the store (the edge build's platform); 1: one store.
    pub replicas: usize,
    /// The edge build's `clock_skew_ms`: instance 1's clock is this far
    /// ahead of instance 0's, instance 2's half as far (0: one clock).
    pub skew_ms: u64,
    /// The edge build's `piece_interval_ms`.
    pub interval_ms: u64,
}

/// A walk of the `next` links, begun by some request.
#[derive(Debug, Clone)]
pub struct Walk {
    pub status: Option<&'static str>,
    pub limit: usize,
    /// What the walk requests next: its last page again once it ended.
    pub target: String,
    pub ended: bool,
}

/// One run: its store, its clock, its history, its walks.
pub struct World {
    pub layout: Layout,
    pub shared: Arc<Shared>,
    pub history: Mutex<History>,
    pub walks: Mutex<Vec<Walk>>,
    /// The pets' data is corrupt on purpose: 500s are allowed.
    pub corrupt: bool,
    /// The state was made by a store that failed (a record stored without
    /// its pet): 503s are answers.
    pub scarred: bool,
    /// The walk the state began, which a page with a cursor goes on.
    pub begun: Option<u64>,
    /// The events of the history that made the state.
    pub made: usize,
    /// What the finish of a run found the store breaking (`finish`).
    pub broken: Mutex<Vec<String>>,
    /// A fault was injected, or the clock moved past a window while a
    /// request ran, since the state was made: the store failed or was slow.
    pub faulted: AtomicBool,
}

impl World {
    pub fn new(layout: Layout) -> World {
        let shared = match layout.replicas {
            1 => Shared::new(Data::new(layout.backend), START_MS),
            n => Shared::replicated(Replicated::new(n, 0..=REPLICATION_MS, 7), START_MS),
        };
        for (instance, offset) in [0, layout.skew_ms, layout.skew_ms / 2]
            .into_iter()
            .enumerate()
        {
            shared.set_offset(instance, offset);
        }
        World {
            layout,
            shared,
            history: Mutex::new(History::default()),
            walks: Mutex::new(Vec::new()),
            corrupt: false,
            scarred: false,
            begun: None,
            made: 0,
            broken: Mutex::new(Vec::new()),
            faulted: AtomicBool::new(false),
        }
    }

    /// A run from where this one stands: the same data, history and walks.
    pub fn fork(&self) -> World {
        World {
            layout: self.layout,
            shared: self.shared.fork(),
            history: Mutex::new(self.history().clone()),
            walks: Mutex::new(self.walks.lock().unwrap().clone()),
            corrupt: self.corrupt,
            scarred: self.scarred,
            begun: self.begun,
            made: self.made,
            broken: Mutex::new(Vec::new()),
            faulted: AtomicBool::new(false),
        }
    }

    pub fn history(&self) -> History {
        self.history.lock().unwrap().clone()
    }

    /// Strikes a call of a request (the store fails there).
    pub fn inject(&mut self, fault: Fault) {
        self.shared.inject(fault);
        self.faulted.store(true, Ordering::SeqCst);
    }

    /// Moves every clock on (on replicas, delivering the writes due).
    pub fn advance_ms(&self, ms: u64) {
        self.shared.advance_ms(ms);
    }

    /// Moves every clock on while requests run (a call that took that
    /// long): a 503 is an answer from here on.
    pub fn stall_ms(&self, ms: u64) {
        self.faulted.store(true, Ordering::SeqCst);
        self.advance_ms(ms);
    }

    /// The instances' `replication_ms`: 0 on one store.
    fn replication_ms(&self) -> u64 {
        match self.layout.replicas {
            1 => 0,
            _ => REPLICATION_MS,
        }
    }

    /// On the replicated layout (the edge build), moves the clock past the
    /// horizon (its create's 1 s commit window and the replication delay,
    /// which delivers every write on its way), so that every pet committed
    /// so far is listable, and says so in the history; elsewhere nothing.
    pub fn settle(&self) {
        if !self.layout.promise.settles {
            return;
        }
        let skew = 2 * self.layout.skew_ms;
        self.advance_ms(SETTLE_MS + self.replication_ms() + skew);
        let at = self.shared.tick();
        self.history.lock().unwrap().push(Event {
            client: usize::MAX,
            replica: None,
            start: at,
            end: at,
            call: Call::Settle,
            answer: Answer::Lost,
        });
    }

    /// Sends one request as request number `request`, through an instance
    /// configured for `layout`; records and returns its event.
    pub fn send(
        &self,
        request: usize,
        layout: &str,
        call: Call,
        http: Http,
    ) -> (Event, Option<String>) {
        let variables = vec![
            ("api_key", KEY.to_string()),
            ("idempotency_lease_ms", LEASE_MS.to_string()),
            ("cors_origins", String::new()),
            ("key_value_backend", self.layout.declared.to_string()),
            ("catalogue_layout", layout.to_string()),
            // The edge build's store: one, or replicas.
            ("replication_ms", self.replication_ms().to_string()),
            ("clock_skew_ms", self.layout.skew_ms.to_string()),
            ("piece_interval_ms", self.layout.interval_ms.to_string()),
        ];
        let seed = (request as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D);
        let clocks = (self.shared.clock(), self.shared.offset(request));
        let platform = ExplorePlatform::new(variables, clocks, seed);
        let start = self.shared.tick();
        let handled = routes::handle(&http.request(), &platform, &self.shared.handle(request));
        let end = self.shared.tick();
        let waits = platform.waits.load(std::sync::atomic::Ordering::SeqCst);
        let live = !self.shared.crashed(request);
        assert!(
            !live || waits <= MAX_WAITS,
            "request {request} waited {waits} times: {call:?}"
        );
        let response = handled.response;
        let link = response.header("link").and_then(next_of);
        let answer = if self.shared.crashed(request) {
            Answer::Lost
        } else {
            let replayed = response.header("idempotent-replayed").is_some();
            Answer::of(
                &call,
                response.status.as_u16(),
                &response.body,
                link.is_some(),
                replayed,
            )
        };
        let event = Event {
            client: request,
            replica: self.shared.replica_of(request),
            start,
            end,
            call,
            answer,
        };
        self.history.lock().unwrap().push(event.clone());
        (event, link)
    }

    /// A create of `body`, with an `Idempotency-Key`, through an instance
    /// configured for `layout`.
    pub fn create(&self, request: usize, layout: &str, body: Value, key: Option<&str>) -> Event {
        let call = Call::Create {
            body: body.clone(),
            key: key.map(str::to_string),
        };
        let mut headers = vec![("content-type", "application/json".to_string())];
        if let Some(key) = key {
            headers.push(("idempotency-key", key.to_string()));
        }
        let http = Http::new(Method::POST, "/v1/pets", headers, body.to_string());
        self.send(request, layout, call, http).0
    }

    /// A plain create of a pet named `name`.
    pub fn create_named(&self, request: usize, name: &str, status: &str) -> Event {
        self.create(request, self.layout.layout, pet_body(name, status), None)
    }

    pub fn get_pet(&self, request: usize, id: i64) -> Event {
        let http = Http::new(
            Method::GET,
            &format!("/v1/pets/{id}"),
            vec![],
            String::new(),
        );
        self.send(request, self.layout.layout, Call::GetPet { id }, http)
            .0
    }

    pub fn health(&self, request: usize) -> Event {
        let http = Http::public(Method::GET, "/v1/health");
        self.send(request, self.layout.layout, Call::Health, http).0
    }

    /// Begins a walk of `status` (or every pet) in pages of `limit`;
    /// returns its number.
    pub fn begin_walk(&self, status: Option<&'static str>, limit: usize) -> u64 {
        let mut walks = self.walks.lock().unwrap();
        let id = walks.len() as u64;
        let target = match status {
            Some(status) => format!("/v1/pets?limit={limit}&status={status}"),
            None => format!("/v1/pets?limit={limit}"),
        };
        walks.push(Walk {
            status,
            limit,
            target,
            ended: false,
        });
        id
    }

    /// A walk that shares walk `walk`'s pages so far (a client that goes
    /// on from the same cursor as another): its number.
    pub fn fork_walk(&self, walk: u64) -> u64 {
        let mut walks = self.walks.lock().unwrap();
        let id = walks.len() as u64;
        let copy = walks[walk as usize].clone();
        walks.push(copy);
        let mut history = self.history.lock().unwrap();
        let copies: Vec<Event> = history
            .events
            .iter()
            .filter(|e| matches!(e.call, Call::Page { walk: w, .. } if w == walk))
            .map(|e| {
                let mut copy = e.clone();
                if let Call::Page { walk, .. } = &mut copy.call {
                    *walk = id;
                }
                copy
            })
            .collect();
        history.events.extend(copies);
        id
    }

    /// The next page of walk `walk` (its last again, once it ended).
    pub fn page(&self, request: usize, walk: u64) -> Event {
        let (target, status, limit, first) = {
            let walks = self.walks.lock().unwrap();
            let w = &walks[walk as usize];
            (
                w.target.clone(),
                w.status,
                w.limit,
                !w.target.contains("cursor="),
            )
        };
        let call = Call::Page {
            walk,
            status: status.map(str::to_string),
            limit,
            first,
        };
        let http = Http::new(Method::GET, &target, vec![], String::new());
        let (event, link) = self.send(request, self.layout.layout, call, http);
        if let Answer::Page { .. } = event.answer {
            let mut walks = self.walks.lock().unwrap();
            let w = &mut walks[walk as usize];
            match link {
                Some(next) => w.target = next,
                None => w.ended = true,
            }
        }
        event
    }

    /// Follows walk `walk` to its end (a page without a `next` link), at
    /// most `pages` pages.
    pub fn walk_to_end(&self, request: usize, walk: u64, pages: usize) {
        for _ in 0..pages {
            self.page(request, walk);
            if self.walks.lock().unwrap()[walk as usize].ended {
                return;
            }
        }
    }

    /// The ids the history's answers showed.
    pub fn shown_ids(&self) -> Vec<i64> {
        self.shown_ids_in(0..usize::MAX)
    }

    /// The ids the answers of events `events` showed.
    pub fn shown_ids_in(&self, events: std::ops::Range<usize>) -> Vec<i64> {
        self.shown_in(events).into_keys().collect()
    }

    /// The pets the answers of events `events` showed: id, and status.
    pub fn shown_in(&self, events: std::ops::Range<usize>) -> BTreeMap<i64, String> {
        let history = self.history.lock().unwrap();
        let end = events.end.min(history.events.len());
        let pets = history.events[events.start.min(end)..end]
            .iter()
            .flat_map(|e| e.answer.pets());
        let status = |p: &Value| p["status"].as_str().unwrap_or_default().to_string();
        pets.filter_map(|p| Some((p["id"].as_i64()?, status(p))))
            .collect()
    }

    /// What the model says of the run, and what the store's invariants
    /// say of what it holds after it (`invariants.rs`).
    pub fn check(&self) -> Vec<String> {
        let promise = Promise {
            corrupt: self.corrupt || self.layout.promise.corrupt,
            faults: self.faulted.load(Ordering::SeqCst)
                || self.scarred
                || self.layout.promise.faults,
            ..self.layout.promise
        };
        let model = model::check(&self.history(), &promise);
        let mut found: Vec<String> = model.iter().map(ToString::to_string).collect();
        found.extend(
            self.broken
                .lock()
                .unwrap()
                .iter()
                .map(|v| format!("store invariant: {v}")),
        );
        found.extend(
            invariants::check(self)
                .into_iter()
                .map(|v| format!("store invariant: {v}")),
        );
        found
    }
}

/// A pet's body for a create.
pub fn pet_body(name: &str, status: &str) -> Value {
    json!({"name": name, "categoryId": 1, "status": status})
}

/// A request as the Spin layer hands it to the router.
pub struct Http {
    method: Method,
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    body: String,
}

impl Http {
    /// An authenticated request.
    pub fn new(method: Method, target: &str, headers: Vec<(&str, String)>, body: String) -> Http {
        let mut http = Http::public(method, target);
        http.headers
            .push(("authorization".into(), format!("Bearer {KEY}").into_bytes()));
        http.headers.extend(
            headers
                .into_iter()
                .map(|(n, v)| (n.to_string(), v.into_bytes())),
        );
        http.body = body;
        http
    }

    pub fn public(method: Method, target: &str) -> Http {
        Http {
            method,
            target: target.to_string(),
            headers: Vec::new(),
            body: String::new(),
        }
    }

    fn request(&self) -> Request {
        Request::new(
            self.method.clone(),
            &self.target,
            self.headers.clone(),
            Body::Complete(self.body.clone().into_bytes()),
        )
    }
}
