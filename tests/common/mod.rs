//! A native test client: requests go through the core's `routes::handle`
//! exactly as the Spin layer sends them, over an in-memory store.
// Each test file includes this module and uses part of it; unused helpers
// would otherwise warn in every file that does not need them.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use http::Method;
use petstore::model::{NewPet, PetStatus};
use petstore::platform::Platform;
use petstore::request::{Body, Request, MAX_BODY_BYTES};
use petstore::response::Response;
use petstore::routes;
use petstore_testkit::{next_of, Backend, Fault, MemStore, Reader};
use serde_json::Value;

pub const KEY: &str = "test-key";
/// `Authorization` with [`KEY`].
pub const AUTH: &str = "Bearer test-key";
/// The lease of keyed creates in these tests, and the clock's start.
pub const LEASE_MS: u64 = 10_000;
pub const START_MS: u64 = 1_800_000_000_000;

pub struct Api {
    pub store: MemStore,
    /// The Spin variables: a value, or why the host cannot give one.
    pub variables: BTreeMap<&'static str, Result<String, String>>,
    /// The variables the core read, in order.
    pub reads: RefCell<Vec<String>>,
    /// The clock the core is given (Unix ms); tests move it by hand.
    pub now_ms: Cell<u64>,
    /// The random bits the core is given for a generated request id.
    pub random: Cell<[u8; 16]>,
    /// The waits the core asked for (ms), in order; none is waited.
    pub sleeps: RefCell<Vec<u64>>,
}

/// The test's own platform: its variables, clock and random bits.
impl Platform for Api {
    fn variable(&self, name: &str) -> Result<String, String> {
        self.reads.borrow_mut().push(name.to_string());
        self.variables
            .get(name)
            .cloned()
            .unwrap_or_else(|| Err(format!("no variable {name}")))
    }

    fn now_ms(&self) -> u64 {
        self.now_ms.get()
    }

    fn random(&self) -> [u8; 16] {
        self.random.get()
    }

    fn sleep_ms(&self, ms: u64) {
        self.sleeps.borrow_mut().push(ms);
    }
}

impl Api {
    pub fn new() -> Api {
        Api::on(MemStore::new(Backend::Memory))
    }

    /// An instance on `store`, its backend declared as operators must
    /// (a Redis store's `redis`; a DynamoDB one's left at `spin`, which
    /// `tests/undeclared_backend.rs` holds to).
    pub fn on(store: MemStore) -> Api {
        let declared = match store.backend() {
            Backend::Redis => "redis",
            _ => "spin",
        };
        Api {
            store,
            variables: BTreeMap::from([
                ("api_key", Ok(KEY.to_string())),
                ("idempotency_lease_ms", Ok(LEASE_MS.to_string())),
                ("cors_origins", Ok(String::new())),
                ("key_value_backend", Ok(declared.to_string())),
                ("catalogue_layout", Ok("counters".to_string())),
            ]),
            reads: RefCell::new(Vec::new()),
            now_ms: Cell::new(START_MS),
            random: Cell::new([7; 16]),
            sleeps: RefCell::new(Vec::new()),
        }
    }

    /// Another instance on the same store, with the same variables.
    pub fn twin(&self) -> Api {
        let mut twin = Api::on(self.store.clone());
        twin.variables = self.variables.clone();
        twin
    }

    /// Sets a Spin variable, as `--variable name=value` would.
    pub fn set_variable(&mut self, name: &'static str, value: &str) {
        self.variables.insert(name, Ok(value.to_string()));
    }

    /// The host cannot give this variable (a secrets provider is down).
    pub fn fail_variable(&mut self, name: &'static str, why: &str) {
        self.variables.insert(name, Err(why.to_string()));
    }

    pub fn request(
        &self,
        method: Method,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        let headers = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        let body = if body.len() > MAX_BODY_BYTES {
            Body::TooLarge
        } else {
            Body::Complete(body.to_vec())
        };
        self.handle(Request::new(method, target, headers, body))
            .response
    }

    /// The whole outcome, with the detail the access log gets.
    pub fn handle(&self, request: Request) -> routes::Handled {
        routes::handle(&request, self, &self.store)
    }

    /// An authenticated GET, with what the log gets (notes, detail).
    /// `GET /v1/health`, with what the log would say.
    pub fn handle_health(&self) -> routes::Handled {
        self.handle(Request::new(
            Method::GET,
            "/v1/health",
            vec![],
            Body::Complete(vec![]),
        ))
    }

    pub fn handle_get(&self, target: &str) -> routes::Handled {
        let auth = format!("Bearer {KEY}").into_bytes();
        let headers = vec![("authorization".to_string(), auth)];
        self.handle(Request::new(
            Method::GET,
            target,
            headers,
            Body::Complete(vec![]),
        ))
    }

    pub fn get(&self, target: &str) -> Response {
        let auth = format!("Bearer {KEY}");
        self.request(Method::GET, target, &[("Authorization", &auth)], b"")
    }

    pub fn post(&self, body: &str) -> Response {
        self.post_with(&[], body)
    }

    /// `POST /v1/pets` with an `Idempotency-Key` header.
    pub fn post_keyed(&self, key: &str, body: &str) -> Response {
        self.post_with(&[("Idempotency-Key", key)], body)
    }

    /// An authenticated JSON `POST /v1/pets` with more headers.
    fn post_with(&self, extra: &[(&str, &str)], body: &str) -> Response {
        let auth = format!("Bearer {KEY}");
        let mut headers = vec![
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ];
        headers.extend_from_slice(extra);
        self.request(Method::POST, "/v1/pets", &headers, body.as_bytes())
    }

    /// Moves the core's clock on.
    pub fn advance_ms(&self, ms: u64) {
        self.now_ms.set(self.now_ms.get() + ms);
    }

    /// Creates a pet and returns its id; panics unless the answer is 201.
    pub fn create(&self, name: &str, status: &str) -> i64 {
        let r = self.post(&format!(
            r#"{{"name":"{name}","categoryId":1,"status":"{status}"}}"#
        ));
        assert_eq!(
            r.status.as_u16(),
            201,
            "{}",
            String::from_utf8_lossy(&r.body)
        );
        json(&r)["id"].as_i64().unwrap()
    }

    /// The whole catalogue as its walks show it, in small pages (7 a page,
    /// so that walks cross many pages): `petstore_testkit::assert_consistent`.
    pub fn assert_consistent(&self, expected: &BTreeSet<i64>, context: &str) {
        petstore_testkit::assert_consistent(self, expected, 7, 1, context);
    }

    /// Follows `next` links from `target`; returns the ids in walk order.
    pub fn walk(&self, target: &str) -> Vec<i64> {
        petstore_testkit::walk(self, target)
    }
}

impl Reader for Api {
    fn read(&self, target: &str) -> (u16, Value, Option<String>) {
        let r = self.get(target);
        let body = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        (r.status.as_u16(), body, r.header("link").and_then(next_of))
    }
}

/// How many attempts a create makes of a call that keeps failing, on the
/// declared backend (`spin`) with the test's random bits.
pub fn attempts() -> u64 {
    u64::from(petstore::retry::Policy::BRIEF.attempts_when_every_draw_is([7; 16]))
}

/// Faults for every attempt of the call numbered `n` (the store retries a
/// create's calls: attempt k of that call is call `n + k - 1`).
pub fn every_attempt(n: u64, fault: fn(u64) -> Fault) -> Vec<Fault> {
    (n..n + attempts()).map(fault).collect()
}

/// The ids of a page's pets, in the order listed.
pub fn page_ids(r: &Response) -> Vec<i64> {
    json(r)
        .as_array()
        .expect("a JSON array")
        .iter()
        .map(|p| p["id"].as_i64().expect("an id"))
        .collect()
}

pub fn json(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", r.body))
}

/// Asserts an Error body with this status and code, and returns its message.
pub fn assert_error(r: &Response, status: u16, code: &str) -> String {
    assert_eq!(
        r.status.as_u16(),
        status,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = json(r);
    assert_eq!(body["code"], code);
    assert_eq!(body["status"], status);
    assert_eq!(
        body.as_object().unwrap().len(),
        3,
        "only code, message, status: {body}"
    );
    body["message"].as_str().unwrap().to_string()
}

// Keyed creates (tests/idempotency*.rs), on each backend's quirks.

/// A store with a backend's quirks, the `key_value_backend` it is declared
/// as (which chooses how a keyed create claims its key), and the layout
/// its instances are configured for (`catalogue_layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    pub backend: Backend,
    pub declared: &'static str,
    pub layout: &'static str,
}

impl Setup {
    pub fn lanes(&self) -> bool {
        self.layout == "lanes"
    }
}

/// Every backend's quirks in the counters layout, and DynamoDB's in lanes.
pub const BACKENDS: [Setup; 5] = [
    Setup {
        backend: Backend::Memory,
        declared: "spin",
        layout: "counters",
    },
    Setup {
        backend: Backend::Sqlite,
        declared: "spin",
        layout: "counters",
    },
    Setup {
        backend: Backend::Redis,
        declared: "redis",
        layout: "counters",
    },
    Setup {
        backend: Backend::Dynamo,
        declared: "aws_dynamo",
        layout: "counters",
    },
    Setup {
        backend: Backend::Dynamo,
        declared: "aws_dynamo",
        layout: "lanes",
    },
];
pub const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

pub fn api(setup: Setup) -> Api {
    let mut api = Api::on(MemStore::new(setup.backend));
    api.set_variable("key_value_backend", setup.declared);
    api.set_variable("catalogue_layout", setup.layout);
    api
}

pub fn assert_created(r: &Response) -> i64 {
    assert_eq!(
        r.status.as_u16(),
        201,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let id = json(r)["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/v1/pets/{id}").as_str())
    );
    id
}

/// The pets named `name`: in the unfiltered walk, in the walk of `status`,
/// and fetchable one by one.
pub fn pets_named(api: &Api, name: &str, status: &str) -> (Vec<i64>, Vec<i64>) {
    let named = |target: &str| {
        api.walk(target)
            .into_iter()
            .filter(|id| json(&api.get(&format!("/v1/pets/{id}")))["name"] == name)
            .collect::<Vec<_>>()
    };
    (
        named("/v1/pets?limit=100"),
        named(&format!("/v1/pets?status={status}&limit=100")),
    )
}

/// The test kit's backends whose `set-many` is atomic, as the key-value
/// tests run them (declared `spin`).
pub const QUIRKS: [Backend; 3] = [Backend::Memory, Backend::Sqlite, Backend::Redis];

/// A new pet of this name and status, as the API would parse it.
pub fn new_pet(name: &str, status: PetStatus) -> NewPet {
    let body = format!(
        r#"{{"name":"{name}","categoryId":3,"status":"{}"}}"#,
        status.as_str()
    );
    NewPet::from_json(body.as_bytes()).unwrap()
}
