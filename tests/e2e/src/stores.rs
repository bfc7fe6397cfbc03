//! A fresh key-value store on one of Spin's backends, for `spin up`
//! processes to share: Spin's default SQLite file in a state directory of its
//! own, or a `redis-server` of its own named by a runtime-config file. The
//! test can also reach the same data directly (to preload a catalogue, or to
//! look at what was stored) through the test host's engines, which read and
//! write exactly as Spin's backends do.

use std::path::PathBuf;

use petstore::model::PetStatus;
use petstore_host::kv::redis::RedisServer;
use petstore_host::kv::{self, KvStore, Location};

use crate::scratch::ScratchDir;
use crate::spin::{Launch, SpinUp};

/// Spin's key-value backends that the suites run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `spin up`'s default: a SQLite file in the state directory.
    Sqlite,
    /// Spin's `redis` backend, through a runtime-config file.
    Redis,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Sqlite, Backend::Redis];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Redis => "redis",
        }
    }
}

/// One store, empty when made, removed when dropped.
pub struct Store {
    pub backend: Backend,
    dir: ScratchDir,
    redis: Option<RedisServer>,
}

impl Store {
    pub fn new(backend: Backend) -> Store {
        let dir = ScratchDir::new("store");
        let redis = match backend {
            Backend::Sqlite => None,
            Backend::Redis => {
                let server = RedisServer::start().expect("start redis-server");
                let config = format!(
                    "[key_value_store.default]\ntype = \"redis\"\nurl = \"{}\"\n",
                    server.url()
                );
                std::fs::write(dir.path().join("runtime-config.toml"), config)
                    .expect("write the runtime config");
                Some(server)
            }
        };
        Store {
            backend,
            dir,
            redis,
        }
    }

    /// `--state-dir` of every `spin up` on this store (Spin's SQLite file
    /// lives there: `sqlite_key_value.db`).
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `--runtime-config-file`, for the backends that need one.
    pub fn runtime_config(&self) -> Option<PathBuf> {
        self.redis
            .as_ref()
            .map(|_| self.dir.path().join("runtime-config.toml"))
    }

    /// How to start the petstore on this store (add variables, then start).
    pub fn launch(&self) -> Launch {
        Launch::petstore(&self.state_dir(), self.runtime_config().as_deref())
    }

    /// The petstore on this store, serving.
    pub fn start(&self) -> SpinUp {
        self.launch().start()
    }

    /// The same data, reached directly (uncounted by Spin): to preload or
    /// seed it before `spin up` starts, or to read what it stored.
    pub fn direct(&self) -> KvStore {
        let location = match &self.redis {
            Some(server) => Location {
                redis_url: Some(server.url()),
                ..Location::default()
            },
            None => {
                std::fs::create_dir_all(self.state_dir()).expect("the state directory");
                Location {
                    sqlite_file: Some(self.state_dir().join("sqlite_key_value.db")),
                    ..Location::default()
                }
            }
        };
        let backend = match self.backend {
            Backend::Sqlite => kv::Backend::Sqlite,
            Backend::Redis => kv::Backend::Redis,
        };
        KvStore::open(backend, &location).expect("open the store directly")
    }

    /// Writes `pets` pets with the component's own catalogue code, their
    /// index built, as a running service would have them.
    pub fn preload(&self, pets: usize, status: impl Fn(usize) -> PetStatus) {
        petstore_host::preload::preload(&self.direct(), pets, status).expect("preload");
    }

    /// The Redis server (outage tests stop and restart it).
    pub fn redis(&mut self) -> &mut RedisServer {
        self.redis.as_mut().expect("a Redis store")
    }
}
