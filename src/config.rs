//! The deployment's configuration: each Spin variable read and parsed into
//! its type the first time a request needs it, at most once per request, an
//! unusable one turned into a [`Misconfiguration`] here and nowhere else.
//!
//! A request reads only what it uses, because on Spin 4.0.2 a variable that
//! comes from its default or from the environment costs about 12 µs to read
//! (BENCHMARKS.md): `api_key` to authenticate, `cors_origins` when the
//! request comes from a browser (it carries `Origin`), `idempotency_lease_ms`
//! for a keyed create or a page that meets one's pending record,
//! `key_value_backend` for a create or a page, `catalogue_layout` for a
//! create. `GET /v1/health` reads them all, so that any unusable variable
//! fails the deployment's probes.

use std::cell::OnceCell;

use crate::auth::ApiKeys;
use crate::catalogue::{Deployment, KvBackend, LayoutName, BUILT, CATALOGUE_LAYOUT};
use crate::cors::CorsOrigins;
use crate::errors::{ApiError, Misconfiguration};
use crate::platform::Platform;

pub const API_KEY: &str = "api_key";
pub const CORS_ORIGINS: &str = "cors_origins";
pub const IDEMPOTENCY_LEASE_MS: &str = "idempotency_lease_ms";
pub const KEY_VALUE_BACKEND: &str = "key_value_backend";

/// Default of the Spin variable `idempotency_lease_ms` (spin.toml).
pub const DEFAULT_LEASE_MS: u64 = 10_000;
/// The longest lease an operator may set: one hour.
pub const MAX_LEASE_MS: u64 = 3_600_000;

/// `idempotency_lease_ms`: milliseconds, 1 to one hour.
pub fn parse_lease_ms(text: &str) -> Result<u64, String> {
    milliseconds(text, 1)
}

/// A delay of the replicated layout's: 0 to one hour.
fn delay(text: &str) -> Result<u64, String> {
    milliseconds(text, 0)
}

fn milliseconds(text: &str, least: u64) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| (least..=MAX_LEASE_MS).contains(ms))
        .ok_or_else(|| {
            format!("'{text}' is not a number of milliseconds from {least} to {MAX_LEASE_MS}")
        })
}

type Parsed<T> = OnceCell<Result<T, Misconfiguration>>;

/// One request's view of the configuration.
pub struct Config<'p> {
    platform: &'p dyn Platform,
    api_keys: Parsed<ApiKeys>,
    cors_origins: Parsed<CorsOrigins>,
    idempotency_lease_ms: Parsed<u64>,
    key_value_backend: Parsed<KvBackend>,
    catalogue_layout: Parsed<LayoutName>,
    replication_ms: Parsed<u64>,
    clock_skew_ms: Parsed<u64>,
    piece_interval_ms: Parsed<u64>,
}

impl<'p> Config<'p> {
    pub fn new(platform: &'p dyn Platform) -> Config<'p> {
        Config {
            platform,
            api_keys: OnceCell::new(),
            cors_origins: OnceCell::new(),
            idempotency_lease_ms: OnceCell::new(),
            key_value_backend: OnceCell::new(),
            catalogue_layout: OnceCell::new(),
            replication_ms: OnceCell::new(),
            clock_skew_ms: OnceCell::new(),
            piece_interval_ms: OnceCell::new(),
        }
    }

    /// The keys that grant access.
    pub fn api_keys(&self) -> Result<&ApiKeys, Misconfiguration> {
        self.read(&self.api_keys, API_KEY, ApiKeys::parse)
    }

    /// The web origins allowed to call the API from a browser.
    pub fn cors_origins(&self) -> Result<&CorsOrigins, Misconfiguration> {
        self.read(&self.cors_origins, CORS_ORIGINS, CorsOrigins::parse)
    }

    /// How long an unfinished keyed create keeps its key (ms).
    pub fn idempotency_lease_ms(&self) -> Result<u64, Misconfiguration> {
        self.read(
            &self.idempotency_lease_ms,
            IDEMPOTENCY_LEASE_MS,
            parse_lease_ms,
        )
        .copied()
    }

    /// Which backend holds the store.
    pub fn key_value_backend(&self) -> Result<KvBackend, Misconfiguration> {
        self.read(&self.key_value_backend, KEY_VALUE_BACKEND, KvBackend::parse)
            .copied()
    }

    /// The layout the store should hold, if it runs on the backend.
    pub fn catalogue_layout(&self) -> Result<LayoutName, Misconfiguration> {
        let layout = self.layout_named()?;
        let backend = self.key_value_backend()?;
        match layout.runs_on(backend) {
            true => Ok(layout),
            false => Err(Misconfiguration {
                variable: CATALOGUE_LAYOUT,
                why: format!(
                    "'{}' needs the {} backend, not '{}': {}",
                    layout.name(),
                    layout.backends(),
                    backend.name(),
                    match LayoutName::instead(backend, BUILT) {
                        Some(other) => format!("set it to '{}'", other.name()),
                        // The edge build's: counters runs on every backend.
                        None => "this build has no layout for it: spin.toml's has".into(),
                    }
                ),
            }),
        }
    }

    /// `catalogue_layout` as named, whatever the backend.
    pub fn layout_named(&self) -> Result<LayoutName, Misconfiguration> {
        self.read(&self.catalogue_layout, CATALOGUE_LAYOUT, |text| {
            LayoutName::parse(text, BUILT)
        })
        .copied()
    }

    /// Every variable, in the order of spin.toml: the first unusable one
    /// (whether the layout suits the backend is the probe's next question,
    /// once it knows the backend is the store's).
    pub fn check_all(&self) -> Result<(), Misconfiguration> {
        self.api_keys()?;
        self.idempotency_lease_ms()?;
        self.cors_origins()?;
        self.key_value_backend()?;
        self.layout_named()?;
        Ok(())
    }

    /// `replication_ms` + `clock_skew_ms`, 0 to one hour each: how long a
    /// write takes to reach every replica of the edge build's store, and how
    /// far the instances' clocks differ; and `piece_interval_ms` (B), how
    /// long its open index piece serves before a page at the list's end
    /// makes it again (docs/decisions.md, "The replicated layout"). Read
    /// only on that layout.
    pub fn settle_ms(&self) -> Result<(u64, u64), Misconfiguration> {
        let replication = self.read(&self.replication_ms, "replication_ms", delay)?;
        let skew = self.read(&self.clock_skew_ms, "clock_skew_ms", delay)?;
        let interval = self.read(&self.piece_interval_ms, "piece_interval_ms", delay)?;
        Ok((replication + skew, *interval))
    }

    fn read<'c, T>(
        &'c self,
        cell: &'c Parsed<T>,
        variable: &'static str,
        parse: fn(&str) -> Result<T, String>,
    ) -> Result<&'c T, Misconfiguration> {
        cell.get_or_init(|| {
            self.platform
                .variable(variable)
                .and_then(|value| parse(&value))
                .map_err(|why| Misconfiguration { variable, why })
        })
        .as_ref()
        .map_err(Clone::clone)
    }
}

/// The catalogue reads the deployment's variables through this: each
/// once, when a request first needs it.
impl Deployment for Config<'_> {
    fn backend(&self) -> Result<KvBackend, ApiError> {
        Ok(self.key_value_backend()?)
    }

    fn wanted(&self) -> Result<LayoutName, ApiError> {
        Ok(self.catalogue_layout()?)
    }

    fn lease_ms(&self) -> Result<u64, ApiError> {
        Ok(self.idempotency_lease_ms()?)
    }

    fn settle_ms(&self) -> Result<(u64, u64), ApiError> {
        Ok(Config::settle_ms(self)?)
    }
}
