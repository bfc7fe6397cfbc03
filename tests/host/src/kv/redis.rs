//! Spin's Redis key-value backend (`key-value-redis`, Spin 4.0.2), rebuilt on
//! a real `redis-server` with Spin's commands per call:
//! `get` GET, `set` SET, `increment` INCRBY (decimal text), `set-many` MSET,
//! `delete` DEL, `exists` EXISTS, `list-keys` KEYS *; a compare-and-swap opens
//! a connection of its own, `current` is WATCH + GET, `swap` is MULTI/SET/EXEC
//! followed by `UNWATCH <key>`, which Redis rejects, so every swap reports
//! `cas-failed`, also when it wrote; `get-many` sends KEYS instead of MGET and
//! the request fails (Spin panics decoding the reply).
//!
//! Plain calls share a small pool of connections, as Spin's requests share
//! one multiplexed connection: one round trip per call.

use std::net::TcpListener;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use redis::{Client, Connection, Value};

use super::{Engine, EngineCas, KeyValue, KvError, KvResult};
use crate::helpers::silent_and_bound;

pub struct RedisEngine {
    client: Client,
    pool: Mutex<Vec<Connection>>,
    /// The server we started, if we did (stopped when the engine is dropped).
    _server: Option<RedisServer>,
}

impl RedisEngine {
    /// Connects to `url`, or starts a `redis-server` of its own on a free
    /// loopback port.
    pub fn open(url: Option<&str>) -> Result<RedisEngine> {
        let (url, server) = match url {
            Some(url) => (url.to_string(), None),
            None => {
                let server = RedisServer::start()?;
                (server.url(), Some(server))
            }
        };
        let client = Client::open(url.as_str()).with_context(|| format!("Redis URL {url}"))?;
        let mut probe = client
            .get_connection()
            .with_context(|| format!("connecting to Redis at {url}"))?;
        redis::cmd("PING").query::<String>(&mut probe)?;
        Ok(RedisEngine {
            client,
            pool: Mutex::new(vec![probe]),
            _server: server,
        })
    }

    fn pool(&self) -> MutexGuard<'_, Vec<Connection>> {
        // A Vec of idle connections: nothing a panic could leave half-done.
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on a pooled connection; a connection that failed is dropped.
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> redis::RedisResult<T>) -> KvResult<T> {
        let pooled = self.pool().pop();
        let mut connection = match pooled {
            Some(c) => c,
            None => self.client.get_connection().map_err(store_error)?,
        };
        let result = f(&mut connection);
        if result.is_ok() {
            self.pool().push(connection);
        }
        result.map_err(store_error)
    }
}

fn store_error(e: redis::RedisError) -> KvError {
    KvError::Store(e.to_string())
}

impl Engine for RedisEngine {
    fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        self.with(|c| redis::cmd("GET").arg(key).query(c))
    }

    fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        self.with(|c| redis::cmd("SET").arg(key).arg(value).query(c))
    }

    fn delete(&self, key: &str) -> KvResult<()> {
        self.with(|c| redis::cmd("DEL").arg(key).query(c))
    }

    fn exists(&self, key: &str) -> KvResult<bool> {
        self.with(|c| redis::cmd("EXISTS").arg(key).query(c))
    }

    fn list_keys(&self) -> KvResult<Vec<String>> {
        self.with(|c| redis::cmd("KEYS").arg("*").query(c))
    }

    fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        self.with(|c| redis::cmd("INCRBY").arg(key).arg(delta).query(c))
    }

    /// Spin opens a new connection for every compare-and-swap.
    fn cas_new(&self, key: &str) -> KvResult<Box<dyn EngineCas>> {
        let connection = self.client.get_connection().map_err(store_error)?;
        Ok(Box::new(RedisCas {
            connection,
            key: key.to_string(),
        }))
    }

    /// Spin sends `KEYS <keys…>` (not MGET) and decodes the reply as
    /// key/value pairs; what Redis answers never decodes, and Spin panics.
    fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>> {
        let reply = self.with(|c| Ok(redis::cmd("KEYS").arg(keys).query::<Value>(c)));
        let reply = match reply {
            Ok(Ok(value)) => format!("{value:?}"),
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        };
        Err(KvError::Trap(format!(
            "get-many sent KEYS instead of MGET; the reply ({reply}) does not decode"
        )))
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()> {
        if pairs.is_empty() {
            return Ok(());
        }
        self.with(|c| {
            let mut mset = redis::cmd("MSET");
            for (k, v) in pairs {
                mset.arg(k).arg(v);
            }
            mset.query(c)
        })
    }

    fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        self.with(|c| redis::cmd("DEL").arg(keys).query(c))
    }

    fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.get(key).ok().flatten()
    }

    fn largest_value(&self) -> usize {
        let keys: Vec<String> = self.list_keys().unwrap_or_default();
        keys.chunks(1000)
            .filter_map(|chunk| {
                self.with(|c| {
                    let mut pipe = redis::pipe();
                    for k in chunk {
                        pipe.cmd("STRLEN").arg(k);
                    }
                    pipe.query::<Vec<usize>>(c)
                })
                .ok()
            })
            .flatten()
            .max()
            .unwrap_or(0)
    }

    fn key_count(&self) -> usize {
        self.with(|c| redis::cmd("DBSIZE").query(c)).unwrap_or(0)
    }

    fn load(&self, values: &[(String, Vec<u8>)]) -> Result<()> {
        for chunk in values.chunks(1000) {
            self.set_many(chunk).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(())
    }
}

/// A compare-and-swap on a connection of its own, exactly as Spin issues it.
struct RedisCas {
    connection: Connection,
    key: String,
}

impl EngineCas for RedisCas {
    fn current(&mut self) -> KvResult<Option<Vec<u8>>> {
        redis::cmd("WATCH")
            .arg(&self.key)
            .query::<()>(&mut self.connection)
            .map_err(store_error)?;
        redis::cmd("GET")
            .arg(&self.key)
            .query(&mut self.connection)
            .map_err(store_error)
    }

    fn swap(&mut self, value: &[u8]) -> KvResult<bool> {
        let transaction = redis::pipe()
            .atomic()
            .set(&self.key, value)
            .query::<Value>(&mut self.connection);
        // Spin then sends `UNWATCH <key>`; Redis accepts no argument, and the
        // error is reported as `cas-failed` whatever the transaction did.
        let unwatch = redis::cmd("UNWATCH")
            .arg(&self.key)
            .query::<()>(&mut self.connection);
        Ok(unwatch.is_ok() && matches!(transaction, Ok(Value::Array(_))))
    }
}

/// A `redis-server` on a free loopback port, without persistence, stopped
/// when dropped (and killed by the kernel if the thread that started it dies).
pub struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    pub fn start() -> Result<RedisServer> {
        let mut last_error = None;
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
            match RedisServer::start_on(port) {
                Ok(server) => return Ok(server),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| anyhow::anyhow!("redis-server did not start")))
    }

    /// A server on `port`, ready to answer.
    fn start_on(port: u16) -> Result<RedisServer> {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let mut command = Command::new(&binary);
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"]);
        silent_and_bound(&mut command);
        let child = command.spawn().with_context(|| {
            format!("starting {binary} (install it: apt-get install redis-server)")
        })?;
        let mut server = RedisServer { child, port };
        server.wait_ready()?;
        Ok(server)
    }

    /// Kills the server: an outage (its data, kept in memory only, is gone).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port (after [`RedisServer::stop`]).
    pub fn restart(&mut self) -> Result<()> {
        self.stop();
        *self = RedisServer::start_on(self.port)?;
        Ok(())
    }

    fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let client = Client::open(self.url().as_str())?;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("redis-server exited: {status}");
            }
            if let Ok(mut c) = client.get_connection() {
                if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                bail!("redis-server on port {} did not answer", self.port);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_writes_and_then_reports_cas_failed() {
        let r = RedisEngine::open(None).unwrap();
        r.set("k", b"old").unwrap();
        let mut cas = r.cas_new("k").unwrap();
        assert_eq!(cas.current().unwrap().unwrap(), b"old");
        assert!(!cas.swap(b"new").unwrap(), "reported as cas-failed");
        assert_eq!(r.peek("k").unwrap(), b"new", "but written");
    }

    #[test]
    fn a_watched_key_that_changed_is_not_written() {
        let r = RedisEngine::open(None).unwrap();
        r.set("k", b"old").unwrap();
        let mut cas = r.cas_new("k").unwrap();
        cas.current().unwrap();
        r.set("k", b"other").unwrap();
        assert!(!cas.swap(b"new").unwrap());
        assert_eq!(r.peek("k").unwrap(), b"other");
    }

    #[test]
    fn counters_are_decimal_text_and_get_many_fails_the_request() {
        let r = RedisEngine::open(None).unwrap();
        assert_eq!(r.increment("n", 42).unwrap(), 42);
        assert_eq!(r.peek("n").unwrap(), b"42");
        let keys = ["n".to_string(), "m".to_string()];
        assert!(matches!(r.get_many(&keys), Err(KvError::Trap(_))));
        assert!(matches!(r.get_many(&keys[..1]), Err(KvError::Trap(_))));
    }
}
