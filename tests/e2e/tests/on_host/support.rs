//! The test host serving the real release component on 127.0.0.1, for the
//! suites that need what Spin cannot give: faults armed at the N-th
//! key-value call, lost replies, and the host's exact counters.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use petstore_e2e::client::{Api, KEY, ROTATED_KEY};
use petstore_e2e::workspace;
use petstore_host::building::build_wasm;
use petstore_host::component::{self, Loaded};
use petstore_host::kv::{Backend, KvStore};
use petstore_host::serve::{self, Host, Output};

/// The lease of keyed creates in these suites, shortened from 10 s so that
/// retries after an abandoned create are quick.
pub const LEASE_MS: u64 = 300;
/// The ideal store, then Spin's two backends rebuilt on their real engines.
pub const BACKENDS: [Backend; 3] = Backend::LOCAL;

/// `cargo build --target wasm32-wasip1 --release`, once, then compiled once.
pub fn loaded() -> Arc<Loaded> {
    static LOADED: OnceLock<Arc<Loaded>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            build_wasm(&workspace(), &["petstore"]).expect("build the component");
            let variables = HashMap::from([
                ("api_key".to_string(), format!("{KEY}, {ROTATED_KEY}")),
                ("idempotency_lease_ms".to_string(), LEASE_MS.to_string()),
            ]);
            component::load_app(&workspace().join("spin.toml"), &variables)
                .expect("load the component")
        })
        .clone()
}

/// The benchmarks' floor component (`bench/floor`), built and compiled once.
pub fn floor() -> Arc<Loaded> {
    static FLOOR: OnceLock<Arc<Loaded>> = OnceLock::new();
    FLOOR
        .get_or_init(|| petstore_host::floor::load(&workspace(), KEY).expect("load the floor"))
        .clone()
}

/// An application served by the test host: its API, the host (its store's
/// faults and counters), and the component's stdout lines.
pub struct Server {
    pub api: Api,
    pub host: Arc<Host>,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn kv(&self) -> &KvStore {
        self.host.kv()
    }
}

/// The petstore on a fresh store on `backend` (an empty SQLite file, or a
/// `redis-server` of its own), served on a free loopback port by a 2-thread
/// runtime (requests run truly in parallel, as on Spin).
pub fn serve(backend: Backend) -> Server {
    // Declared as operators must: a Redis store's counters are text, which
    // a store declared `spin` (SQLite's 8 bytes) refuses.
    match backend {
        Backend::Redis => serve_app(
            loaded().with_variables(&[("key_value_backend", "redis")]),
            backend,
        ),
        _ => serve_app(loaded(), backend),
    }
}

/// Any application on a fresh store on `backend`.
pub fn serve_app(app: Arc<Loaded>, backend: Backend) -> Server {
    let log = Arc::new(Mutex::new(Vec::new()));
    let kv = KvStore::new(backend).expect("open the key-value backend");
    let host = Host::new(app, kv, Output::Capture(log.clone()));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let bound = serve::spawn(host.clone(), addr, 2).expect("serve");
    Server {
        api: Api::new(format!("http://{bound}")),
        host,
        log,
    }
}
