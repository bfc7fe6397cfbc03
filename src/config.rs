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
use crate::catalogue::{Deployment, KvBackend, LayoutName, CATALOGUE_LAYOUT};
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
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| (1..=MAX_LEASE_MS).contains(ms))
        .ok_or_else(|| format!("'{text}' is not a number of milliseconds from 1 to {MAX_LEASE_MS}"))
}

/// The edge build's replicated store (docs/decisions.md, "The replicated
/// layout"): how long a write may take to reach every replica, and how far
/// the instances' clocks may differ, in ms (0 to one hour each).
#[cfg(feature = "edge")]
pub const REPLICATION_MS: &str = "replication_ms";
#[cfg(feature = "edge")]
pub const CLOCK_SKEW_MS: &str = "clock_skew_ms";

/// A delay of the replicated store: milliseconds, 0 to one hour.
#[cfg(feature = "edge")]
pub fn parse_delay_ms(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= MAX_LEASE_MS)
        .ok_or_else(|| format!("'{text}' is not a number of milliseconds from 0 to {MAX_LEASE_MS}"))
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
    #[cfg(feature = "edge")]
    replication_ms: Parsed<u64>,
    #[cfg(feature = "edge")]
    clock_skew_ms: Parsed<u64>,
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
            #[cfg(feature = "edge")]
            replication_ms: OnceCell::new(),
            #[cfg(feature = "edge")]
            clock_skew_ms: OnceCell::new(),
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
                    "'{}' needs the {} backend, not '{}': set it to 'counters'",
                    layout.name(),
                    layout.backends(),
                    backend.name()
                ),
            }),
        }
    }

    /// `catalogue_layout` as named, whatever the backend.
    pub fn layout_named(&self) -> Result<LayoutName, Misconfiguration> {
        self.read(&self.catalogue_layout, CATALOGUE_LAYOUT, LayoutName::parse)
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
        #[cfg(feature = "edge")]
        self.settle_ms()?;
        Ok(())
    }

    /// `replication_ms` + `clock_skew_ms` (the edge build's).
    #[cfg(feature = "edge")]
    pub fn settle_ms(&self) -> Result<u64, Misconfiguration> {
        let replication = self.read(&self.replication_ms, REPLICATION_MS, parse_delay_ms)?;
        let skew = self.read(&self.clock_skew_ms, CLOCK_SKEW_MS, parse_delay_ms)?;
        Ok(replication + skew)
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

    #[cfg(feature = "edge")]
    fn settle_ms(&self) -> Result<u64, ApiError> {
        Ok(Config::settle_ms(self)?)
    }
}

// The default build's layouts only.
#[cfg(test)]
#[cfg(not(feature = "edge"))]
mod tests {
    use std::cell::RefCell;

    use super::*;

    /// Variables from a list; remembers which were read.
    struct Fixed {
        values: Vec<(&'static str, Result<&'static str, &'static str>)>,
        reads: RefCell<Vec<String>>,
    }

    impl Platform for Fixed {
        fn variable(&self, name: &str) -> Result<String, String> {
            self.reads.borrow_mut().push(name.to_string());
            let (_, value) = self.values.iter().find(|(n, _)| *n == name).expect(name);
            value.map(str::to_string).map_err(str::to_string)
        }
        fn now_ms(&self) -> u64 {
            0
        }
        fn random(&self) -> [u8; 16] {
            [0; 16]
        }
        fn sleep_ms(&self, _: u64) {}
    }

    fn fixed(values: Vec<(&'static str, Result<&'static str, &'static str>)>) -> Fixed {
        Fixed {
            values,
            reads: RefCell::new(Vec::new()),
        }
    }

    #[test]
    fn the_lease_default_is_spin_tomls() {
        let manifest = include_str!("../spin.toml");
        let declared = format!(r#"idempotency_lease_ms = {{ default = "{DEFAULT_LEASE_MS}" }}"#);
        assert!(manifest.contains(&declared), "{declared}");
        assert_eq!(
            parse_lease_ms(&DEFAULT_LEASE_MS.to_string()),
            Ok(DEFAULT_LEASE_MS)
        );
    }

    #[test]
    fn each_variable_is_read_when_first_needed_and_once() {
        let platform = fixed(vec![
            (API_KEY, Ok("k")),
            (CORS_ORIGINS, Ok("")),
            (IDEMPOTENCY_LEASE_MS, Ok("250")),
            (KEY_VALUE_BACKEND, Ok(" aws_dynamo ")),
            (CATALOGUE_LAYOUT, Ok("lanes")),
        ]);
        let config = Config::new(&platform);
        assert!(platform.reads.borrow().is_empty(), "nothing read up front");
        config.api_keys().unwrap();
        config.api_keys().unwrap();
        assert_eq!(*platform.reads.borrow(), [API_KEY]);
        assert_eq!(config.idempotency_lease_ms(), Ok(250));
        assert!(config.cors_origins().unwrap().is_empty());
        config.check_all().unwrap();
        assert_eq!(config.key_value_backend(), Ok(KvBackend::AwsDynamo));
        assert_eq!(config.catalogue_layout(), Ok(LayoutName::Lanes));
        assert_eq!(
            *platform.reads.borrow(),
            [
                API_KEY,
                IDEMPOTENCY_LEASE_MS,
                CORS_ORIGINS,
                KEY_VALUE_BACKEND,
                CATALOGUE_LAYOUT
            ]
        );
    }

    #[test]
    fn an_unusable_variable_is_one_misconfiguration_naming_it() {
        let platform = fixed(vec![
            (API_KEY, Ok("key, with blanks")),
            (CORS_ORIGINS, Err("the provider is down")),
            (IDEMPOTENCY_LEASE_MS, Ok("soon")),
            (KEY_VALUE_BACKEND, Ok("dynamo")),
            (CATALOGUE_LAYOUT, Ok("lanes")),
        ]);
        let config = Config::new(&platform);
        let keys = config.api_keys().unwrap_err();
        assert_eq!(keys.variable, API_KEY);
        assert!(keys.to_string().starts_with("variable api_key: entry 2"));
        assert!(!keys.to_string().contains("with blanks"), "no key quoted");
        assert_eq!(
            config.cors_origins().unwrap_err().to_string(),
            "variable cors_origins: the provider is down"
        );
        assert_eq!(
            config.idempotency_lease_ms().unwrap_err().variable,
            IDEMPOTENCY_LEASE_MS
        );
        assert_eq!(config.check_all().unwrap_err().variable, API_KEY);
        let backend = config.key_value_backend().unwrap_err();
        assert!(backend.why.contains("spin, redis, aws_dynamo"), "{backend}");
    }

    #[test]
    fn lanes_need_the_aws_dynamo_backend() {
        for (backend, ok) in [
            ("spin", false),
            ("redis", false),
            ("azure_cosmos", false),
            ("aws_dynamo", true),
        ] {
            let platform = fixed(vec![
                (KEY_VALUE_BACKEND, Ok(backend)),
                (CATALOGUE_LAYOUT, Ok("lanes")),
            ]);
            let layout = Config::new(&platform).catalogue_layout();
            assert_eq!(layout.is_ok(), ok, "{backend}: {layout:?}");
        }
        let platform = fixed(vec![
            (KEY_VALUE_BACKEND, Ok("spin")),
            (CATALOGUE_LAYOUT, Ok("Lanes")),
        ]);
        let wrong = Config::new(&platform).catalogue_layout().unwrap_err();
        assert!(wrong.why.contains("counters, lanes"), "{wrong}");
    }
}
