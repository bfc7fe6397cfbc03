//! The deployment's configuration (`src/config.rs`): each variable read
//! when a request first needs it, and once; an unusable one a
//! misconfiguration that names it; the lease's default as spin.toml's.
// The default build's variables (the edge build reads two more).
#![cfg(not(feature = "edge"))]

use std::cell::RefCell;

use petstore::catalogue::{KvBackend, LayoutName, CATALOGUE_LAYOUT};
use petstore::config::*;
use petstore::platform::Platform;

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
        // The cause offers a layout of this build that runs there.
        if let Err(wrong) = layout {
            assert!(wrong.why.ends_with("set it to 'counters'"), "{wrong}");
        }
    }
    let platform = fixed(vec![
        (KEY_VALUE_BACKEND, Ok("spin")),
        (CATALOGUE_LAYOUT, Ok("Lanes")),
    ]);
    let wrong = Config::new(&platform).catalogue_layout().unwrap_err();
    assert!(wrong.why.contains("counters, lanes"), "{wrong}");
}
