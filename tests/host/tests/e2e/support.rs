//! Builds the component once per test run, serves it from the test host on
//! 127.0.0.1, and talks to it with a real HTTP client (ureq).

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use petstore_host::kv::{Backend, KvStore};
use petstore_host::server::{self, Host, Loaded, Output};
use serde_json::Value;

pub const KEY: &str = "e2e-key";
pub const ROTATED_KEY: &str = "rotated-key";
/// The lease of keyed creates in these tests, shortened from 10 s so that
/// retries after an abandoned create are quick.
pub const LEASE_MS: u64 = 300;
/// The ideal store, then Spin's two backends on their real engines.
pub const BACKENDS: [Backend; 3] = Backend::ALL;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `cargo build --target wasm32-wasip1 --release`, once, then compiled once.
pub fn loaded() -> Arc<Loaded> {
    static LOADED: OnceLock<Arc<Loaded>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            server::build_wasm(&workspace(), &["petstore"]).expect("build the component");
            let variables = HashMap::from([
                ("api_key".to_string(), format!("{KEY}, {ROTATED_KEY}")),
                ("idempotency_lease_ms".to_string(), LEASE_MS.to_string()),
            ]);
            server::load_app(&workspace().join("spin.toml"), &variables)
                .expect("load the component")
        })
        .clone()
}

pub struct Server {
    pub base: String,
    pub host: Arc<Host>,
    pub log: Arc<Mutex<Vec<String>>>,
}

/// A fresh store on `backend` (an empty SQLite file, or a `redis-server` of
/// its own), served on a free loopback port by a 2-thread runtime (requests
/// run truly in parallel, as on Spin).
pub fn serve(backend: Backend) -> Server {
    serve_app(loaded(), backend)
}

/// The benchmarks' floor component (`bench/floor`), built and compiled once.
pub fn floor() -> Arc<Loaded> {
    static FLOOR: OnceLock<Arc<Loaded>> = OnceLock::new();
    FLOOR
        .get_or_init(|| petstore_host::floor::load(&workspace(), KEY).expect("load the floor"))
        .clone()
}

/// Any application on a fresh store on `backend`.
pub fn serve_app(app: Arc<Loaded>, backend: Backend) -> Server {
    let log = Arc::new(Mutex::new(Vec::new()));
    let kv = KvStore::new(backend).expect("open the key-value backend");
    let host = Host::new(app, kv, Output::Capture(log.clone()));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let bound = server::spawn(host.clone(), addr, 2).expect("serve");
    Server {
        base: format!("http://{bound}"),
        host,
        log,
    }
}

pub struct Reply {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// Asserts an Error body of this status and code.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body = self.json();
        assert_eq!(body["code"], code, "{body}");
        assert_eq!(body["status"], status);
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(body.as_object().unwrap().len(), 3);
    }

    pub fn ids(&self) -> Vec<i64> {
        self.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_i64().unwrap())
            .collect()
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

impl Server {
    /// Sends any request; `auth` is the bearer key (None: no header).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        auth: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Reply {
        let mut builder = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(key) = auth {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        for (n, v) in headers {
            builder = builder.header(*n, *v);
        }
        let request = builder
            .body(body.map(<[u8]>::to_vec).unwrap_or_default())
            .unwrap();
        let mut response = agent()
            .run(request)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        Reply {
            status: response.status().as_u16(),
            headers,
            body: response.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, Some(KEY), &[], None)
    }

    pub fn post(&self, body: &str) -> Reply {
        self.send(
            "POST",
            "/v1/pets",
            Some(KEY),
            &[("content-type", "application/json")],
            Some(body.as_bytes()),
        )
    }

    /// `POST /v1/pets` with an `Idempotency-Key`.
    pub fn post_keyed(&self, key: &str, body: &str) -> Reply {
        self.send(
            "POST",
            "/v1/pets",
            Some(KEY),
            &[
                ("content-type", "application/json"),
                ("idempotency-key", key),
            ],
            Some(body.as_bytes()),
        )
    }

    pub fn create(&self, name: &str, status: &str) -> i64 {
        let r = self.post(&format!(
            r#"{{"name":"{name}","categoryId":2,"status":"{status}"}}"#
        ));
        assert_eq!(r.status, 201, "{}", r.body);
        r.json()["id"].as_i64().unwrap()
    }

    /// Follows `Link: rel="next"` from `path`; the ids in walk order.
    pub fn walk(&self, path: &str) -> Vec<i64> {
        let mut ids = Vec::new();
        let mut next = Some(path.to_string());
        while let Some(p) = next {
            let r = self.get(&p);
            assert_eq!(r.status, 200, "{p}: {}", r.body);
            ids.extend(r.ids());
            next = r.header("link").map(|l| {
                assert!(l.ends_with(r#">; rel="next""#), "{l}");
                l.trim_start_matches('<')
                    .split('>')
                    .next()
                    .unwrap()
                    .to_string()
            });
            assert!(ids.len() < 1_000_000, "walk does not end");
        }
        ids
    }

    /// Every pet in `expected` is listed exactly once, in the unfiltered walk
    /// and in the walk of its status, and nothing else is; those from id
    /// `fetch_from` on are also fetched one by one.
    pub fn assert_consistent(&self, expected: &BTreeSet<i64>, fetch_from: i64) {
        let all = self.walk("/v1/pets?limit=100");
        assert_eq!(
            all.len(),
            expected.len(),
            "unfiltered walk has duplicates or misses"
        );
        assert_eq!(all.iter().copied().collect::<BTreeSet<_>>(), *expected);
        assert!(all.windows(2).all(|w| w[0] < w[1]), "ascending id");
        let mut seen = BTreeSet::new();
        for status in ["available", "pending", "sold"] {
            for id in self.walk(&format!("/v1/pets?limit=100&status={status}")) {
                assert!(seen.insert(id), "{id} listed twice");
            }
        }
        assert_eq!(seen, *expected, "status walks");
        for id in expected.range(fetch_from..) {
            assert_eq!(
                self.get(&format!("/v1/pets/{id}")).status,
                200,
                "pet {id} not fetchable"
            );
        }
    }
}
