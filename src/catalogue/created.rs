//! What the catalogue asks of the deployment ([`Deployment`], the
//! [`LayoutName`] it wants), what a request asks of the catalogue and what
//! it answers, whatever the layout: a page at a [`Clock`], a create.

use crate::errors::ApiError;
use crate::model::{Cursor, IdempotencyKey, NewPet, Pet};

use super::backend::KvBackend;
use super::keys::record_key;
use super::listed::Listed;

/// The variable that says which layout a store should hold.
pub const CATALOGUE_LAYOUT: &str = "catalogue_layout";

/// What the catalogue asks of the deployment, each only when a request
/// needs it (on Spin every answer is a host call).
pub trait Deployment {
    /// The backend that holds the store (`key_value_backend`).
    fn backend(&self) -> Result<KvBackend, ApiError>;
    /// The layout the operator wants the store to hold (`catalogue_layout`).
    fn wanted(&self) -> Result<LayoutName, ApiError>;
    /// How long an unfinished keyed create keeps its key (ms).
    fn lease_ms(&self) -> Result<u64, ApiError>;
    /// How long a write may take to reach every replica, the clocks' skew
    /// included (ms): the replicated layout's.
    fn settle_ms(&self) -> Result<u64, ApiError>;
}

/// A layout, as the operator names it (`catalogue_layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutName {
    /// One id counter, a counter and slots per status: SQLite, Redis.
    Counters,
    /// Lanes of ids, each claimed by compare-and-swap: DynamoDB.
    Lanes,
    /// Random ids, each create's own keys, pages of what has replicated.
    Replicated,
}

/// Each layout: its name, and the backends it may be set on (lanes need
/// an atomic put-if-absent; the replicated pages' `get-many` fails on Redis).
#[rustfmt::skip]
const LAYOUTS: [(LayoutName, &str, &[KvBackend]); 3] = [
    (LayoutName::Counters, "counters", &KvBackend::ALL),
    (LayoutName::Lanes, "lanes", &[KvBackend::AwsDynamo]),
    (LayoutName::Replicated, "replicated", &[KvBackend::Spin, KvBackend::AwsDynamo, KvBackend::AzureCosmos]),
];

impl LayoutName {
    pub fn name(self) -> &'static str {
        LAYOUTS[self as usize].1
    }

    /// A layout of `built` (this build's: `catalogue::BUILT`), by name.
    pub fn parse(text: &str, built: &[LayoutName]) -> Result<LayoutName, String> {
        let text = text.trim();
        let this: Vec<&str> = built.iter().map(|l| l.name()).collect();
        let this = format!("this build has {}", this.join(", "));
        match LAYOUTS.iter().find(|l| l.1 == text) {
            Some(l) if built.contains(&l.0) => Ok(l.0),
            Some(_) => Err(format!("'{text}' is a layout of the other build: {this}")),
            None => Err(format!("'{text}' is no layout: {this}")),
        }
    }

    /// A layout of `built` that may be set on `backend`, if any.
    pub fn instead(backend: KvBackend, built: &[LayoutName]) -> Option<LayoutName> {
        built.iter().copied().find(|l| l.runs_on(backend))
    }

    pub fn runs_on(self, backend: KvBackend) -> bool {
        LAYOUTS[self as usize].2.contains(&backend)
    }

    pub fn backends(self) -> String {
        let names: Vec<&str> = LAYOUTS[self as usize].2.iter().map(|b| b.name()).collect();
        names.join(", ")
    }
}

/// What a page needs of time: now, and the lease (read only if the page
/// meets a keyed create's pending record).
pub struct Clock<'a> {
    pub now_ms: u64,
    pub lease_ms: &'a dyn Fn() -> Result<u64, ApiError>,
}

/// One page of a list, and where its walk goes on (`None`: it ends here;
/// a client that follows the list requests this page again).
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

/// When a keyed create runs, and how long an unfinished one keeps its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub now_ms: u64,
    pub lease_ms: u64,
}

/// How a create ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// This request created the pet (or finished an earlier attempt's).
    Pet(Pet),
    /// The key's pet existed: its stored JSON, byte for byte.
    Replayed { id: i64, body: Vec<u8> },
}

/// How following a key bound to a pet ended.
pub enum Followed {
    Done(Created),
    /// Its create stopped and can no longer commit: the key may be bound
    /// to a new create, claimed from what the record holds.
    Abandoned(i64),
}

/// A create under an `Idempotency-Key`: its record's key, the pet, the lease.
pub struct Keyed {
    pub record_key: String,
    pub new: NewPet,
    pub lease: Lease,
}

impl Keyed {
    pub fn new(key: &IdempotencyKey, new: NewPet, lease: Lease) -> Keyed {
        let record_key = record_key(key);
        Keyed {
            record_key,
            new,
            lease,
        }
    }

    /// The pet of this request, as it would be stored with `id`.
    pub fn pet(&self, id: i64) -> Pet {
        self.new.clone().into_pet(id)
    }

    /// A store failure as its client reads it: a retry with the same key
    /// ends in one pet, whatever the store did.
    pub fn unavailable(error: ApiError) -> ApiError {
        match error {
            ApiError::StoreUnavailable(e) | ApiError::CreateOutcomeUnknown(e) => {
                ApiError::KeyedCreateUnavailable(e)
            }
            other => other,
        }
    }

    /// 409 while a create that began at `started_ms` may still be at work.
    pub fn within_lease(&self, started_ms: u64) -> Result<(), ApiError> {
        let ends = started_ms.saturating_add(self.lease.lease_ms);
        match self.lease.now_ms < ends {
            true => Err(ApiError::IdempotencyKeyInUse {
                retry_after_seconds: (ends - self.lease.now_ms).div_ceil(1000).max(1),
            }),
            false => Ok(()),
        }
    }
}
