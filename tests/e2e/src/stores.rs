//! A fresh key-value store on one of Spin's backends, for `spin up`
//! processes to share: Spin's default SQLite file in a state directory of its
//! own, a `redis-server` of its own, or a table of its own in DynamoDB Local,
//! the last two named by a runtime-config file. The test can also reach the
//! same data directly (to preload a catalogue, or to look at what was stored)
//! through the test host's engines, which read and write exactly as Spin's
//! backends do.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use petstore::model::PetStatus;
use petstore_host::kv::redis::RedisServer;
use petstore_host::kv::{self, KvStore, Location};

use crate::dynamo;
use crate::scratch::ScratchDir;
use crate::spin::{Launch, SpinUp};

/// The tests' one vocabulary for a backend; the suites here run on
/// [`Backend::SPIN`]: `spin up`'s default SQLite file in the state
/// directory, Spin's `redis` backend and its `aws_dynamo` backend over
/// DynamoDB Local (`consistent_read = true`), through a runtime-config file.
pub use petstore_testkit::Backend;

/// A backend, and whether operators declared it (`key_value_backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    Declared(Backend),
    Undeclared(Backend),
}

/// What the contract suites run on: each backend as operators declare it,
/// and DynamoDB left undeclared, which must behave all the same.
pub const SETUPS: [Setup; 4] = [
    Setup::Declared(Backend::Sqlite),
    Setup::Declared(Backend::Redis),
    Setup::Declared(Backend::Dynamo),
    Setup::Undeclared(Backend::Dynamo),
];

/// One store, empty when made, removed when dropped (a DynamoDB Local
/// table is left to the server, which keeps it in memory until it stops).
pub struct Store {
    pub backend: Backend,
    /// Whether `spin up` gets `key_value_backend` naming the backend, as
    /// operators are told to declare it (else spin.toml's default, `spin`).
    pub declared: bool,
    /// `catalogue_layout`: `lanes` on a DynamoDB store declared so (what
    /// operators are told to set there), else `counters`.
    pub layout: &'static str,
    dir: ScratchDir,
    redis: Option<RedisServer>,
    /// The DynamoDB Local table.
    table: Option<String>,
}

impl Store {
    pub fn new(backend: Backend) -> Store {
        let dir = ScratchDir::new("store");
        let (mut redis, mut table) = (None, None);
        let config = match backend {
            Backend::Memory => {
                panic!("real spin up has no in-memory store: use one of Backend::SPIN")
            }
            Backend::Sqlite => None,
            Backend::Redis => {
                let server = RedisServer::start().expect("start redis-server");
                let url = server.url();
                redis = Some(server);
                Some(format!("type = \"redis\"\nurl = \"{url}\"\n"))
            }
            Backend::Dynamo => {
                static NEXT: AtomicU64 = AtomicU64::new(0);
                let name = format!(
                    "petstore-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                );
                dynamo::local().create_table(&name);
                let config = format!(
                    "type = \"aws_dynamo\"\nregion = \"{}\"\ntable = \"{name}\"\nconsistent_read = true\n",
                    dynamo::REGION
                );
                table = Some(name);
                Some(config)
            }
        };
        if let Some(config) = config {
            let text = format!("[key_value_store.default]\n{config}");
            std::fs::write(dir.path().join("runtime-config.toml"), text)
                .expect("write the runtime config");
        }
        Store {
            backend,
            declared: true,
            layout: if backend == Backend::Dynamo {
                "lanes"
            } else {
                "counters"
            },
            dir,
            redis,
            table,
        }
    }

    /// A store whose instances are configured for this layout.
    pub fn with_layout(backend: Backend, layout: &'static str) -> Store {
        Store {
            layout,
            ..Store::new(backend)
        }
    }

    /// The same store, its instances from now on configured for `layout`
    /// (an operator's rolling restart with `catalogue_layout` changed).
    pub fn relaid(self, layout: &'static str) -> Store {
        Store { layout, ..self }
    }

    /// A store whose `spin up` is not told which backend it is: the
    /// variable left at spin.toml's default.
    pub fn undeclared(backend: Backend) -> Store {
        Store {
            declared: false,
            layout: "counters",
            ..Store::new(backend)
        }
    }

    /// The store of one of [`SETUPS`].
    pub fn setup(setup: Setup) -> Store {
        match setup {
            Setup::Declared(backend) => Store::new(backend),
            Setup::Undeclared(backend) => Store::undeclared(backend),
        }
    }

    /// `--state-dir` of every `spin up` on this store (Spin's SQLite file
    /// lives there: `sqlite_key_value.db`).
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `--runtime-config-file`, for the backends that need one.
    pub fn runtime_config(&self) -> Option<PathBuf> {
        (self.backend != Backend::Sqlite).then(|| self.dir.path().join("runtime-config.toml"))
    }

    /// How to start the petstore on this store (add variables, then
    /// start): `key_value_backend` says which backend it is, as operators
    /// declare it.
    pub fn launch(&self) -> Launch {
        let mut launch = Launch::petstore(&self.state_dir(), self.runtime_config().as_deref());
        match self.backend {
            Backend::Memory | Backend::Sqlite => {}
            Backend::Redis if self.declared => {
                launch = launch.variable("key_value_backend", "redis")
            }
            Backend::Redis => {}
            Backend::Dynamo => {
                if self.declared {
                    launch = launch
                        .variable("key_value_backend", "aws_dynamo")
                        .variable("catalogue_layout", self.layout);
                }
                for (name, value) in dynamo::local().environment() {
                    launch = launch.env(name, &value);
                }
            }
        }
        launch
    }

    /// Another manifest (an earlier release's) on this store, with the
    /// variables every release has: the keys, and the backend declared.
    pub fn launch_release(&self, manifest: &std::path::Path) -> Launch {
        let mut launch = Launch::petstore(&self.state_dir(), self.runtime_config().as_deref())
            .manifest(manifest);
        if self.declared && self.backend != Backend::Sqlite {
            let declared = match self.backend {
                Backend::Dynamo => "aws_dynamo",
                _ => "redis",
            };
            launch = launch.variable("key_value_backend", declared);
        }
        if self.backend == Backend::Dynamo {
            for (name, value) in dynamo::local().environment() {
                launch = launch.env(name, &value);
            }
        }
        launch
    }

    /// The petstore on this store, serving.
    pub fn start(&self) -> SpinUp {
        self.launch().start()
    }

    /// The same data, reached directly (uncounted by Spin): to preload or
    /// seed it before `spin up` starts, or to read what it stored.
    pub fn direct(&self) -> KvStore {
        let (backend, location) = match self.backend {
            Backend::Memory => (kv::Backend::Memory, Location::default()),
            Backend::Sqlite => {
                std::fs::create_dir_all(self.state_dir()).expect("the state directory");
                let file = self.state_dir().join("sqlite_key_value.db");
                (
                    kv::Backend::Sqlite,
                    Location {
                        sqlite_file: Some(file),
                        ..Location::default()
                    },
                )
            }
            Backend::Redis => {
                let url = self.redis.as_ref().map(RedisServer::url);
                (
                    kv::Backend::Redis,
                    Location {
                        redis_url: url,
                        ..Location::default()
                    },
                )
            }
            Backend::Dynamo => {
                let endpoint = dynamo::local().endpoint.clone();
                let table = self.table.clone().expect("a table");
                let dynamo = Some((endpoint, table));
                (
                    kv::Backend::Dynamo,
                    Location {
                        dynamo,
                        ..Location::default()
                    },
                )
            }
        };
        KvStore::open(backend, &location).expect("open the store directly")
    }

    /// Every key and its value, read directly: what a test compares before
    /// and after requests that must write nothing.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        let direct = self.direct();
        let keys = direct.list_keys().expect("list the keys");
        keys.into_iter()
            .filter_map(|key| Some((key.clone(), direct.get(&key).expect("a read")?)))
            .collect()
    }

    /// Deletes every key directly, while `spin up` may serve the store (an
    /// operator emptying it). 25 a call: DynamoDB's `BatchWriteItem` limit.
    pub fn clear(&self) {
        let direct = self.direct();
        let keys = direct.list_keys().expect("list the keys");
        for chunk in keys.chunks(25) {
            direct.delete_many(chunk).expect("delete the keys");
        }
        assert_eq!(direct.key_count(), 0, "the store is empty");
    }

    /// The ids handed out so far, read straight from the store
    /// ([`petstore_testkit::handed_out_ids`]).
    pub fn handed_out_ids(&self) -> std::collections::BTreeSet<i64> {
        let direct = self.direct();
        petstore_testkit::handed_out_ids(|key| direct.get(key).expect("a read"))
    }

    /// Writes `pets` pets with the component's own catalogue code, their
    /// index built, as a running service would have them, in the layout
    /// the store's instances are configured for.
    pub fn preload(&self, pets: usize, status: impl Fn(usize) -> PetStatus) {
        let direct = self.direct();
        match (self.backend, self.declared, self.layout) {
            (Backend::Dynamo, true, "lanes") => {
                petstore_host::preload::preload_lanes(&direct, pets, status)
            }
            _ => petstore_host::preload::preload(&direct, pets, status),
        }
        .expect("preload");
    }

    /// The Redis server (outage tests stop and restart it).
    pub fn redis(&mut self) -> &mut RedisServer {
        self.redis.as_mut().expect("a Redis store")
    }
}
