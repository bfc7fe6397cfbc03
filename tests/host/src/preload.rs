//! Writes pets straight into a host store through the component's own
//! catalogue code (`petstore::catalogue`), so a preloaded store holds exactly
//! the keys and values the component writes — fast enough for 100,000 pets.

use petstore::catalogue::Catalogue;
use petstore::model::{NewPet, PetStatus};
use petstore::store::{KvStore as CoreKv, StoreError, SwapReport};

use crate::kv::{Cas, KvStore};

/// The host store seen through the core's key-value trait.
pub struct CoreView<'a>(pub &'a KvStore);

impl CoreKv for CoreView<'_> {
    type Cas = Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key).map_err(StoreError)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0.set(key, value.to_vec()).map_err(StoreError)
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        self.0.increment(key, delta).map_err(StoreError)
    }

    fn cas_begin(&self, key: &str) -> Result<(Cas, Option<Vec<u8>>), StoreError> {
        let mut cas = self.0.cas_new(key).map_err(StoreError)?;
        let current = self.0.cas_current(&mut cas).map_err(StoreError)?;
        Ok((cas, current))
    }

    fn cas_swap(&self, cas: Cas, value: &[u8]) -> Result<SwapReport, StoreError> {
        match self.0.swap(cas, value.to_vec()) {
            Ok(true) => Ok(SwapReport::Swapped),
            Ok(false) => Ok(SwapReport::Conflict),
            Err(e) => Err(StoreError(e)),
        }
    }
}

/// Creates `count` pets named `pet-<n>` (category 1); `status(n)` picks the
/// status of the n-th (from 1). Counters are reset afterwards.
pub fn preload(
    kv: &KvStore,
    count: usize,
    status: impl Fn(usize) -> PetStatus,
) -> anyhow::Result<()> {
    let view = CoreView(kv);
    let catalogue = Catalogue::new(&view);
    for n in 1..=count {
        let body = format!(
            r#"{{"name":"pet-{n}","categoryId":1,"status":"{}"}}"#,
            status(n).as_str()
        );
        let pet = NewPet::from_json(body.as_bytes()).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        catalogue
            .create(pet)
            .map_err(|e| anyhow::anyhow!("preload: {e:?}"))?;
    }
    kv.reset_stats();
    Ok(())
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
