//! Setting up a measurement: both components built for release, a store on
//! one of Spin's backends preloaded with a catalogue (and the floor's keys),
//! and `spin up` serving `bench/spin.toml` — ours and the floor in one
//! process, on that store.

use std::sync::Arc;
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

impl Serving {
    /// The delay line's round trip, which `mode` needs.
    pub fn rtt(&self, mode: &str) -> anyhow::Result<f64> {
        if self.dynamo_rtt_ms <= 0.0 {
            anyhow::bail!("--mode {mode} needs --dynamo-rtt-ms above 0");
        }
        Ok(self.dynamo_rtt_ms)
    }

    /// The same deployments straight to the store: no delay line.
    pub fn straight(&self) -> Serving {
        Serving {
            api_key: self.api_key.clone(),
            dynamo_rtt_ms: 0.0,
        }
    }
}

/// A catalogue served by real Spin, ours beside the floor.
pub struct Deployment {
    /// Shared by the deployments [`Deployment::beside`] makes.
    pub store: Arc<Store>,
    pub spin: SpinUp,
}

impl Deployment {
    pub fn new(backend: Backend, pets: usize, serving: &Serving) -> Deployment {
        let store = Store::new(backend);
        store.preload(pets, one_sold_among(pets));
        Deployment::serve(store, serving)
    }

    /// `spin up` of `bench/spin.toml` on a store already filled (the
    /// floor's keys are added), through the delay line if `serving` has one.
    pub fn serve(store: Store, serving: &Serving) -> Deployment {
        let backend = store.backend;
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
            launch = launch.env(
                "AWS_ENDPOINT_URL",
                delay_line(serving.dynamo_rtt_ms).endpoint(),
            );
        }
        let spin = launch.start();
        Deployment {
            store: Arc::new(store),
            spin,
        }
    }

    /// Another `spin up` on this deployment's store, through the delay
    /// line if `serving` has one: a client near its store, or far from it.
    pub fn beside(&self, serving: &Serving) -> Deployment {
        let mut launch = self
            .store
            .launch()
            .manifest(&workspace().join("bench/spin.toml"))
            .variable("api_key", &serving.api_key);
        if self.store.backend == Backend::Dynamo && serving.dynamo_rtt_ms > 0.0 {
            launch = launch.env(
                "AWS_ENDPOINT_URL",
                delay_line(serving.dynamo_rtt_ms).endpoint(),
            );
        }
        Deployment {
            store: self.store.clone(),
            spin: launch.start(),
        }
    }

    /// `spin up` of the edge build (`spin-edge.toml`) on `store`, through
    /// the delay line if `serving` has one: one store, so no replication
    /// and no skew (`replication_ms`, `clock_skew_ms` 0); B = 0
    /// (`piece_interval_ms`).
    pub fn edge_build(store: Arc<Store>, serving: &Serving) -> Deployment {
        petstore_e2e::spin::build_edge();
        let mut launch = store
            .launch_release(&workspace().join("spin-edge.toml"))
            .variable("api_key", &serving.api_key)
            .variable("replication_ms", "0")
            .variable("clock_skew_ms", "0")
            .variable("piece_interval_ms", "0");
        if store.backend == Backend::Dynamo && serving.dynamo_rtt_ms > 0.0 {
            launch = launch.env(
                "AWS_ENDPOINT_URL",
                delay_line(serving.dynamo_rtt_ms).endpoint(),
            );
        }
        Deployment {
            store,
            spin: launch.start(),
        }
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

/// A line in front of DynamoDB Local adding `rtt_ms` to every call (its
/// threads carry on for the rest of the run).
fn delay_line(rtt_ms: f64) -> Line {
    let local = petstore_e2e::dynamo::local().endpoint.clone();
    let one_way = Duration::from_secs_f64(rtt_ms / 2000.0);
    Line::start(local.trim_start_matches("http://"), one_way).expect("the delay line")
}
