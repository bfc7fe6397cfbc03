//! What the catalogue asks of the deployment (the layouts by name), and what
//! a request asks of the catalogue and what it answers, whatever the layout.

use super::{backend::KvBackend, keys::record_key, listed::Listed};
use crate::errors::ApiError;
use crate::model::{Cursor, IdempotencyKey, NewPet, Pet};

/// The catalogue's results: its errors are the API's.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

/// The store's calls did not land: nothing was changed.
pub fn failed(why: &str) -> ApiError {
    ApiError::StoreUnavailable(crate::store::StoreError(why.into()))
}

/// The variable that says which layout a store should hold.
pub const CATALOGUE_LAYOUT: &str = "catalogue_layout";

/// The layouts: this build's are `layout.rs`'s `BUILT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutName {
    /// One id counter, a counter and slots per status: SQLite, Redis.
    Counters,
    /// Lanes of ids, each claimed by compare-and-swap: DynamoDB.
    Lanes,
    /// Random ids, each create's own keys, pages of what has replicated.
    Replicated,
}

/// Each layout's name and the backends it runs on, in the order declared
/// (lanes need an atomic put-if-absent; the replicated pages' `get-many`
/// fails on Redis).
#[rustfmt::skip]
const LAYOUTS: [(&str, &[KvBackend]); 3] = [
    ("counters", &KvBackend::ALL),
    ("lanes", &[KvBackend::AwsDynamo]),
    ("replicated", &[KvBackend::Spin, KvBackend::AwsDynamo, KvBackend::AzureCosmos]),
];

impl LayoutName {
    pub fn name(self) -> &'static str {
        LAYOUTS[self as usize].0
    }

    /// A layout of `built` (this build's), by name.
    pub fn parse(text: &str, built: &[LayoutName]) -> Result<LayoutName, String> {
        let text = text.trim();
        let this = format!("this build has {}", names(built.iter().map(|l| l.name())));
        match built.iter().find(|l| l.name() == text) {
            Some(layout) => Ok(*layout),
            None if LAYOUTS.iter().any(|l| l.0 == text) => {
                Err(format!("'{text}' is a layout of the other build: {this}"))
            }
            None => Err(format!("'{text}' is no layout: {this}")),
        }
    }

    /// A layout of `built` that may be set on `backend`, if any.
    pub fn instead(backend: KvBackend, built: &[LayoutName]) -> Option<LayoutName> {
        built.iter().copied().find(|l| l.runs_on(backend))
    }

    pub fn runs_on(self, backend: KvBackend) -> bool {
        LAYOUTS[self as usize].1.contains(&backend)
    }

    pub fn backends(self) -> String {
        names(LAYOUTS[self as usize].1.iter().map(|b| b.name()))
    }
}

/// `a, b, c` (a fold: `join` costs a kilobyte of module).
fn names(names: impl Iterator<Item = &'static str>) -> String {
    names.fold(String::new(), |all, name| match all.is_empty() {
        true => name.into(),
        false => all + ", " + name,
    })
}

/// What the catalogue asks of the deployment, read only when a request
/// needs it: on Spin each is a host call.
pub trait Deployment {
    /// `key_value_backend`.
    fn backend(&self) -> Result<KvBackend>;
    /// `catalogue_layout`: the layout a new store gets.
    fn wanted(&self) -> Result<LayoutName>;
    /// How long an unfinished keyed create keeps its key (ms).
    fn lease_ms(&self) -> Result<u64>;
    /// The replicated layout's delays: `replication_ms` + `clock_skew_ms`,
    /// and `piece_interval_ms` (how often its open index piece is made).
    fn settle_ms(&self) -> Result<(u64, u64)>;
}

/// Now, and the lease (read only for a keyed create's pending record).
pub struct Clock<'a> {
    pub now_ms: u64,
    pub lease_ms: &'a dyn Fn() -> Result<u64>,
}

/// A page of a list, and where its walk goes on (`None`: it ends).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    /// What the page did to the index, for the log.
    pub notes: Vec<String>,
}

impl Page {
    pub fn new(pets: Vec<Listed>, next: Option<Cursor>, notes: Vec<String>) -> Page {
        Page { pets, next, notes }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub now_ms: u64,
    pub lease_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    Pet(Pet),
    /// The key's pet existed: its stored JSON, byte for byte.
    Replayed {
        id: i64,
        body: Vec<u8>,
    },
}

/// How following a key bound to a pet ended.
pub enum Followed {
    Done(Created),
    /// Its create can no longer commit: the key may be claimed anew.
    Abandoned(i64),
}

/// A create under an `Idempotency-Key`: its key's record (`idem:`, the
/// key's digest), the pet asked for, its lease.
pub struct Keyed {
    record_key: String,
    new: NewPet,
    lease: Lease,
}

impl Keyed {
    pub fn new(key: &IdempotencyKey, new: NewPet, lease: Lease) -> Keyed {
        Keyed {
            record_key: record_key(key),
            new,
            lease,
        }
    }

    pub fn record_key(&self) -> &str {
        &self.record_key
    }

    /// The pet asked for.
    pub fn asked(&self) -> &NewPet {
        &self.new
    }

    pub fn lease(&self) -> Lease {
        self.lease
    }

    pub fn pet(&self, id: i64) -> Pet {
        self.new.clone().into_pet(id)
    }

    /// A store failure, which a retry with the same key survives.
    pub fn unavailable(error: ApiError) -> ApiError {
        match error {
            ApiError::StoreUnavailable(e) | ApiError::CreateOutcomeUnknown(e) => {
                ApiError::KeyedCreateUnavailable(e)
            }
            other => other,
        }
    }

    /// 409 while a create that began at `started_ms` may still be at work.
    pub fn within_lease(&self, started_ms: u64) -> Result<()> {
        let ends = started_ms.saturating_add(self.lease.lease_ms);
        match self.lease.now_ms < ends {
            true => Err(self.in_use_until(ends)),
            false => Ok(()),
        }
    }

    /// The key's 409, its `Retry-After` until `ends_ms`.
    pub fn in_use_until(&self, ends_ms: u64) -> ApiError {
        let seconds = ends_ms.saturating_sub(self.lease.now_ms).div_ceil(1000);
        ApiError::IdempotencyKeyInUse {
            retry_after_seconds: seconds.max(1),
        }
    }
}
