//! Writes pets straight into a host store through the component's own
//! catalogue code (`petstore::catalogue`), so a preloaded store holds exactly
//! the keys and values the component writes. The pets are created in memory,
//! then copied in bulk (one SQLite transaction, Redis `MSET`s), counters
//! through the engine's own `increment` so each is in its backend's
//! encoding — fast enough for 100,000 pets on any backend.

use std::cell::Cell;

use petstore::catalogue::{Catalogue, Clock, Created, Deployment, KvBackend, LayoutName};
use petstore::errors::ApiError;
use petstore::model::{ListName, ListQuery, NewPet, PetStatus};
use petstore::platform::Platform;
use petstore::store::{KvStore as CoreKv, StoreError, SwapReport};

use anyhow::{ensure, Result};

use crate::kv::memory::MemoryEngine;
use crate::kv::{Cas, KvStore};

/// The host store seen through the core's key-value trait.
pub struct CoreView<'a>(pub &'a KvStore);

impl CoreKv for CoreView<'_> {
    type Cas = Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key).map_err(core_error)
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let found = self.0.get_many(keys).map_err(core_error)?;
        Ok(found
            .into_iter()
            .filter_map(|(key, value)| value.map(|v| (key, v)))
            .collect())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0.set(key, value).map_err(core_error)
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        self.0.set_many(pairs).map_err(core_error)
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        self.0.increment(key, delta).map_err(core_error)
    }

    fn cas_begin(&self, key: &str) -> Result<(Cas, Option<Vec<u8>>), StoreError> {
        let mut cas = self.0.cas_new(key).map_err(core_error)?;
        let current = self.0.cas_current(&mut cas).map_err(core_error)?;
        Ok((cas, current))
    }

    fn cas_swap(&self, mut cas: Cas, value: &[u8]) -> Result<SwapReport, StoreError> {
        match self.0.swap(&mut cas, value) {
            Ok(true) => Ok(SwapReport::Swapped),
            Ok(false) => Ok(SwapReport::Conflict),
            Err(e) => Err(core_error(e)),
        }
    }
    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        self.0.list_keys().map_err(core_error)
    }
}

fn core_error(e: crate::kv::KvError) -> StoreError {
    StoreError(e.to_string())
}

/// A platform for preloading: no variables, a fixed clock, distinct random
/// bits for every draw (each create's nonce), no waits.
struct Preloading {
    draws: Cell<u64>,
}

impl Platform for Preloading {
    fn variable(&self, name: &str) -> Result<String, String> {
        Err(format!("no variable {name} while preloading"))
    }
    fn now_ms(&self) -> u64 {
        1_800_000_000_000
    }
    fn random(&self) -> [u8; 16] {
        let n = self.draws.get() + 1;
        self.draws.set(n);
        let mut bits = [0u8; 16];
        bits[..8].copy_from_slice(&n.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
        bits[8..].copy_from_slice(&n.to_le_bytes());
        bits
    }
    fn sleep_ms(&self, _: u64) {}
}

/// What a preload is: a backend, the layout its creates write.
struct Filling {
    backend: KvBackend,
    layout: LayoutName,
}

impl Deployment for Filling {
    fn backend(&self) -> Result<KvBackend, ApiError> {
        Ok(self.backend)
    }
    fn wanted(&self) -> Result<LayoutName, ApiError> {
        Ok(self.layout)
    }
    fn lease_ms(&self) -> Result<u64, ApiError> {
        Ok(10_000)
    }
    /// Preloads write the default build's layouts, which never ask.
    fn settle_ms(&self) -> Result<(u64, u64), ApiError> {
        Ok((0, 0))
    }
}

/// Creates `count` pets named `pet-<n>` (category 1) in the empty store
/// `kv`, one at a time, in the counters layout (ids 1 … `count`); `status(n)`
/// picks the status of the n-th (from 1). Counters are reset afterwards.
pub fn preload(kv: &KvStore, count: usize, status: impl Fn(usize) -> PetStatus) -> Result<()> {
    fill(kv, count, status, LayoutName::Counters, KvBackend::Spin)
}

/// As [`preload`], in the lanes layout, as an instance configured `lanes`
/// writes a new DynamoDB store: created one at a time, so ids 1 … `count`
/// (the lanes in turn), every list's pieces built by walks that read as
/// DynamoDB does.
pub fn preload_lanes(
    kv: &KvStore,
    count: usize,
    status: impl Fn(usize) -> PetStatus,
) -> Result<()> {
    fill(kv, count, status, LayoutName::Lanes, KvBackend::AwsDynamo)
}

fn fill(
    kv: &KvStore,
    count: usize,
    status: impl Fn(usize) -> PetStatus,
    layout: LayoutName,
    backend: KvBackend,
) -> Result<()> {
    ensure!(kv.key_count() == 0, "preload needs an empty store");
    let scratch = KvStore::new(crate::kv::Backend::Memory)?;
    let view = CoreView(&scratch);
    let platform = Preloading {
        draws: Cell::new(0),
    };
    let filling = Filling { backend, layout };
    let catalogue = Catalogue::new(&view, &filling);
    for n in 1..=count {
        let created = catalogue
            .create(&platform, nth_pet(n, status(n))?, None)
            .map_err(|e| anyhow::anyhow!("preload: {e:?}"))?;
        ensure!(
            matches!(created, Created::Pet(ref pet) if pet.id == n as i64),
            "ids one at a time are 1, 2, 3, …: {created:?}"
        );
    }
    // Readers build the index (creates never touch it): walk every list
    // twice, so the store is in the steady state a running service reaches
    // (on lanes a page writes back at most 25 pieces, and a status page
    // over 32 lanes touches 32: the second walk fills what the first left).
    let lists = [ListName::All]
        .into_iter()
        .chain(PetStatus::ALL.map(ListName::Status));
    for list in lists {
        walk(&catalogue, list)?;
        walk(&catalogue, list)?;
    }
    copy_into(kv, &scratch)
}

/// The `n`th preloaded pet: `pet-<n>`, category 1.
fn nth_pet(n: usize, status: PetStatus) -> Result<NewPet> {
    let body = format!(
        r#"{{"name":"pet-{n}","categoryId":1,"status":"{}"}}"#,
        status.as_str()
    );
    NewPet::from_json(body.as_bytes()).map_err(|e| anyhow::anyhow!("{e:?}"))
}

/// Walks `list` to its end in pages of 100: readers build its index pieces,
/// as a running service's do.
fn walk(catalogue: &Catalogue<'_, CoreView<'_>>, list: ListName) -> Result<()> {
    let lease = || Ok(10_000);
    let clock = Clock {
        now_ms: 1_800_000_000_000,
        lease_ms: &lease,
    };
    let mut cursor = None;
    loop {
        let query = ListQuery {
            limit: 100,
            status: list.status(),
            cursor: cursor.take(),
            limit_given: true,
        };
        let page = catalogue
            .page(&clock, &query)
            .map_err(|e| anyhow::anyhow!("preload: {e:?}"))?;
        if page.pets.is_empty() {
            return Ok(());
        }
        cursor = page.next;
    }
}

/// Copies the scratch store into `kv` in bulk, counters through the
/// engine's own `increment` (each in its backend's encoding); resets `kv`'s
/// call counts.
fn copy_into(kv: &KvStore, scratch: &KvStore) -> Result<()> {
    let dump = scratch_engine(scratch)?.dump();
    kv.engine().load(&dump.values)?;
    for (key, value) in &dump.counters {
        kv.engine()
            .increment(key, *value)
            .map_err(|e| anyhow::anyhow!("preload counter {key}: {e}"))?;
    }
    kv.reset_stats();
    Ok(())
}

fn scratch_engine(kv: &KvStore) -> Result<MemoryEngine> {
    kv.memory_engine()
        .ok_or_else(|| anyhow::anyhow!("the scratch store is in memory"))
}

/// The benchmarks' catalogue: one `sold` pet (the middle one) among
/// `count`, the others alternating `available` and `pending`.
pub fn one_sold_among(count: usize) -> impl Fn(usize) -> PetStatus {
    move |n| match n {
        n if n == count / 2 => PetStatus::Sold,
        n if n % 2 == 0 => PetStatus::Available,
        _ => PetStatus::Pending,
    }
}
