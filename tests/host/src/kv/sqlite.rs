//! Spin's default key-value backend (`key-value-spin`, Spin 4.0.2), rebuilt
//! on a real SQLite file: the same table, the same statement and transaction
//! per call, one connection behind a mutex, the library's default durability
//! (rollback journal, `synchronous=FULL`). Its quirks come from the SQL:
//! - a counter is stored as 8 bytes little-endian (and `increment` on a value
//!   of another length panics in Spin: here, a trap);
//! - `swap` after `current` saw a value is `UPDATE … WHERE value = <seen>`
//!   (values are compared, not versions); after `current` saw nothing it is an
//!   unconditional upsert, so of two concurrent first writers one is lost.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, Result};
use rusqlite::{named_params, params, Connection, OptionalExtension};

use super::{Engine, EngineCas, KeyValue, KvError, KvResult};

/// Spin names the row's store after the key-value store label.
const STORE: &str = "default";

const SELECT: &str = "SELECT value FROM spin_key_value WHERE store=$1 AND key=$2";
const UPSERT: &str = "INSERT INTO spin_key_value (store, key, value) VALUES ($1, $2, $3)
                     ON CONFLICT(store, key) DO UPDATE SET value=$3";

pub struct SqliteEngine {
    connection: Arc<Mutex<Connection>>,
    path: PathBuf,
    /// A temporary file of ours, removed when the engine is dropped.
    temporary: bool,
}

impl SqliteEngine {
    /// Opens (creating if needed) `path`, or a new temporary file on the
    /// disk-backed temporary directory.
    pub fn open(path: Option<PathBuf>) -> Result<SqliteEngine> {
        let temporary = path.is_none();
        let path = match path {
            Some(p) => p,
            None => temporary_file()?,
        };
        let connection = Connection::open(&path)
            .with_context(|| format!("opening SQLite database {}", path.display()))?;
        connection.execute(
            "CREATE TABLE IF NOT EXISTS spin_key_value (
                store TEXT NOT NULL,
                key   TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (store, key)
            )",
            [],
        )?;
        Ok(SqliteEngine {
            connection: Arc::new(Mutex::new(connection)),
            path,
            temporary,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        lock(&self.connection)
    }
}

/// SQLite keeps its own state consistent; a panic while the lock was held
/// leaves at worst an open transaction, which rusqlite rolls back on drop.
fn lock(connection: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    connection.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for SqliteEngine {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.path);
            let _ = std::fs::remove_file(self.path.with_extension("db-journal"));
        }
    }
}

/// `$TMPDIR/petstore-host-kv/<pid>-<n>.db`; files of processes that are gone
/// (a test run whose stores were never dropped) are swept first.
fn temporary_file() -> Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join("petstore-host-kv");
    std::fs::create_dir_all(&dir)?;
    if NEXT.load(Ordering::Relaxed) == 0 {
        for entry in std::fs::read_dir(&dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.split('-').next().unwrap_or_default();
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Ok(dir.join(format!("{}-{n}.db", std::process::id())))
}

fn store_error(e: rusqlite::Error) -> KvError {
    KvError::Store(e.to_string())
}
fn select(connection: &Connection, key: &str) -> KvResult<Option<Vec<u8>>> {
    connection
        .prepare_cached(SELECT)
        .map_err(store_error)?
        .query_row(params![STORE, key], |row| row.get::<_, Vec<u8>>(0))
        .optional()
        .map_err(store_error)
}

impl Engine for SqliteEngine {
    fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        select(&self.lock(), key)
    }

    fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        self.lock()
            .prepare_cached(UPSERT)
            .map_err(store_error)?
            .execute(params![STORE, key, value])
            .map_err(store_error)
            .map(drop)
    }

    fn delete(&self, key: &str) -> KvResult<()> {
        self.lock()
            .prepare_cached("DELETE FROM spin_key_value WHERE store=$1 AND key=$2")
            .map_err(store_error)?
            .execute(params![STORE, key])
            .map_err(store_error)
            .map(drop)
    }

    fn exists(&self, key: &str) -> KvResult<bool> {
        self.lock()
            .prepare_cached("SELECT 1 FROM spin_key_value WHERE store=$1 AND key=$2 LIMIT 1")
            .map_err(store_error)?
            .exists(params![STORE, key])
            .map_err(store_error)
    }

    fn list_keys(&self) -> KvResult<Vec<String>> {
        let connection = self.lock();
        let mut statement = connection
            .prepare_cached("SELECT key FROM spin_key_value WHERE store=$1")
            .map_err(store_error)?;
        let keys = statement
            .query_map(params![STORE], |row| row.get::<_, String>(0))
            .map_err(store_error)?;
        keys.collect::<Result<_, _>>().map_err(store_error)
    }

    /// One transaction: SELECT, decode 8 bytes little-endian, upsert.
    fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        let mut connection = self.lock();
        let tx = connection.transaction().map_err(store_error)?;
        let current = match select(&tx, key)? {
            None => 0,
            Some(bytes) => {
                let bytes: [u8; 8] = bytes.as_slice().try_into().map_err(|_| {
                    // Spin: `expect("incorrect length")`, a panic of the host.
                    KvError::Trap(format!("increment of '{key}': value is not 8 bytes"))
                })?;
                i64::from_le_bytes(bytes)
            }
        };
        let next = current + delta;
        tx.prepare_cached(UPSERT)
            .map_err(store_error)?
            .execute(params![STORE, key, next.to_le_bytes()])
            .map_err(store_error)?;
        tx.commit().map_err(store_error)?;
        Ok(next)
    }

    fn cas_new(&self, key: &str) -> KvResult<Box<dyn EngineCas>> {
        Ok(Box::new(SqliteCas {
            connection: self.connection.clone(),
            key: key.to_string(),
            seen: None,
        }))
    }

    fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>> {
        // Spin selects `key IN rarray(...)`: only the keys that exist come back.
        let connection = self.lock();
        let mut found = Vec::new();
        for key in keys {
            if let Some(value) = select(&connection, key)? {
                found.push((key.clone(), Some(value)));
            }
        }
        Ok(found)
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()> {
        let mut connection = self.lock();
        let tx = connection.transaction().map_err(store_error)?;
        for (key, value) in pairs {
            tx.prepare_cached(UPSERT)
                .map_err(store_error)?
                .execute(params![STORE, key, value])
                .map_err(store_error)?;
        }
        tx.commit().map_err(store_error)
    }

    fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        let mut connection = self.lock();
        let tx = connection.transaction().map_err(store_error)?;
        for key in keys {
            tx.prepare_cached("DELETE FROM spin_key_value WHERE store=$1 AND key=$2")
                .map_err(store_error)?
                .execute(params![STORE, key])
                .map_err(store_error)?;
        }
        tx.commit().map_err(store_error)
    }

    fn peek(&self, key: &str) -> Option<Vec<u8>> {
        select(&self.lock(), key).ok().flatten()
    }

    fn largest_value(&self) -> usize {
        self.lock()
            .query_row(
                "SELECT COALESCE(MAX(LENGTH(value)), 0) FROM spin_key_value WHERE store=$1",
                params![STORE],
                |row| row.get::<_, i64>(0),
            )
            .map_or(0, |n| n as usize)
    }

    fn key_count(&self) -> usize {
        self.lock()
            .query_row(
                "SELECT COUNT(*) FROM spin_key_value WHERE store=$1",
                params![STORE],
                |row| row.get::<_, i64>(0),
            )
            .map_or(0, |n| n as usize)
    }

    fn load(&self, values: &[(String, Vec<u8>)]) -> Result<()> {
        self.set_many(values).map_err(|e| anyhow::anyhow!("{e}"))
    }
}

/// Spin's SQLite compare-and-swap: `current` remembers what it read, `swap`
/// compares against that value (or upserts blindly when it saw nothing).
struct SqliteCas {
    connection: Arc<Mutex<Connection>>,
    key: String,
    seen: Option<Vec<u8>>,
}

impl EngineCas for SqliteCas {
    fn current(&mut self) -> KvResult<Option<Vec<u8>>> {
        let value = select(&lock(&self.connection), &self.key)?;
        self.seen.clone_from(&value);
        Ok(value)
    }

    fn swap(&mut self, value: &[u8]) -> KvResult<bool> {
        let mut connection = lock(&self.connection);
        let changed = match &self.seen {
            Some(old) => connection
                .prepare_cached(
                    "UPDATE spin_key_value SET value=:new_value
                     WHERE store=:name AND key=:key AND value=:old_value",
                )
                .map_err(store_error)?
                .execute(named_params! {
                    ":name": STORE,
                    ":key": self.key,
                    ":old_value": old,
                    ":new_value": value,
                })
                .map_err(store_error)?,
            None => {
                let tx = connection.transaction().map_err(store_error)?;
                let rows = tx
                    .prepare_cached(UPSERT)
                    .map_err(store_error)?
                    .execute(params![STORE, self.key, value])
                    .map_err(store_error)?;
                tx.commit().map_err(store_error)?;
                rows
            }
        };
        Ok(changed == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_8_bytes_little_endian_and_a_text_value_traps_increment() {
        let db = SqliteEngine::open(None).unwrap();
        assert_eq!(db.increment("n", 5).unwrap(), 5);
        assert_eq!(db.peek("n").unwrap(), 5i64.to_le_bytes());
        db.set("t", b"5").unwrap();
        assert!(matches!(db.increment("t", 1), Err(KvError::Trap(_))));
    }

    #[test]
    fn absent_key_cas_upserts_over_a_concurrent_first_writer() {
        let db = SqliteEngine::open(None).unwrap();
        let mut a = db.cas_new("k").unwrap();
        let mut b = db.cas_new("k").unwrap();
        assert_eq!(a.current().unwrap(), None);
        assert_eq!(b.current().unwrap(), None);
        // Both first writers are told they won; A's write is lost.
        assert!(a.swap(b"A").unwrap() && b.swap(b"B").unwrap());
        assert_eq!(db.peek("k").unwrap(), b"B");
    }

    #[test]
    fn cas_compares_values_so_a_rewrite_of_the_same_value_passes() {
        let db = SqliteEngine::open(None).unwrap();
        db.set("k", b"x").unwrap();
        let mut a = db.cas_new("k").unwrap();
        assert_eq!(a.current().unwrap().unwrap(), b"x");
        db.set("k", b"y").unwrap();
        assert!(!a.swap(b"A").unwrap(), "changed value: cas-failed");
        let mut b = db.cas_new("k").unwrap();
        b.current().unwrap();
        db.set("k", b"y").unwrap();
        assert!(b.swap(b"B").unwrap(), "same value rewritten: not a change");
        assert_eq!(db.peek("k").unwrap(), b"B");
    }

    #[test]
    fn a_temporary_file_is_on_disk_and_removed_on_drop() {
        let db = SqliteEngine::open(None).unwrap();
        db.set("k", b"v").unwrap();
        let path = db.path().to_path_buf();
        assert!(path.exists());
        drop(db);
        assert!(!path.exists());
    }
}
