//! Setting up a measurement: both components built for release, a store on
//! one of Spin's backends preloaded with a catalogue (and the floor's keys),
//! and `spin up` serving `bench/spin.toml` — ours and the floor in one
//! process, on that store.

use std::time::Duration;

use anyhow::Result;
use petstore_e2e::client::KEY;
use petstore_e2e::line::Line;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};
use petstore_e2e::workspace;
use petstore_host::preload::one_sold_among;
use sha2::{Digest, Sha256};

/// Builds the component and the floor (`cargo build --target wasm32-wasip1
/// --release`); their core modules' sizes.
pub fn build() -> Result<[(&'static str, u64); 2]> {
    petstore_host::building::build_wasm(&workspace(), &["petstore", "petstore-floor"])?;
    let release = workspace().join("target/wasm32-wasip1/release");
    let size = |file: &str| std::fs::metadata(release.join(file)).map_or(0, |m| m.len());
    Ok([
        ("petstore", size("petstore.wasm")),
        ("floor", size("petstore_floor.wasm")),
    ])
}

/// The `api_key` variable: the key itself, or its digest.
pub fn api_key(form: &str) -> String {
    match form {
        "digest" => format!("sha256:{:x}", Sha256::digest(KEY.as_bytes())),
        _ => KEY.to_string(),
    }
}

/// How every deployment of a run is served.
pub struct Serving {
    /// The `api_key` variable.
    pub api_key: String,
    /// A round trip (ms) added to every call to DynamoDB Local (a
    /// `petstore_e2e::line::Line`).
    pub dynamo_rtt_ms: f64,
}

/// A catalogue served by real Spin, ours beside the floor.
pub struct Deployment {
    pub store: Store,
    pub spin: SpinUp,
}

impl Deployment {
    pub fn new(backend: Backend, pets: usize, serving: &Serving) -> Deployment {
        let store = Store::new(backend);
        store.preload(pets, one_sold_among(pets));
        let mut floor_values: Vec<(String, Vec<u8>)> = (0..16)
            .map(|i| (format!("floor:{i}"), vec![b'f'; 1024]))
            .collect();
        for size in crate::operations::VALUE_SIZES {
            floor_values.extend((0..16).map(|i| (format!("floor:{size}:{i}"), vec![b'f'; size])));
        }
        store
            .direct()
            .engine()
            .load(&floor_values)
            .expect("seed the floor's keys");
        let mut launch = store
            .launch()
            .manifest(&workspace().join("bench/spin.toml"))
            .variable("api_key", &serving.api_key);
        if backend == Backend::Dynamo && serving.dynamo_rtt_ms > 0.0 {
            let local = petstore_e2e::dynamo::local().endpoint.clone();
            let one_way = Duration::from_secs_f64(serving.dynamo_rtt_ms / 2000.0);
            let line =
                Line::start(local.trim_start_matches("http://"), one_way).expect("the delay line");
            // Its threads carry on for the rest of the run.
            launch = launch.env("AWS_ENDPOINT_URL", line.endpoint());
        }
        let spin = launch.start();
        Deployment { store, spin }
    }

    /// `127.0.0.1:port` of the `spin up` serving it.
    pub fn address(&self) -> String {
        self.spin.api.base.trim_start_matches("http://").to_string()
    }

    /// The largest value in the store (a full index piece).
    pub fn largest_value(&self) -> usize {
        self.store.direct().largest_value()
    }
}
