//! `petstore-bench`: serves the release component through the test host on
//! 127.0.0.1, preloads N pets, and measures each operation two ways:
//! key-value calls and bytes per request (counted by the host, exact), and
//! latency/throughput under load from `oha` (bounded in time). A hello-world
//! component served by the same host is measured beside it as the floor.
//!
//! ```text
//! cargo run --profile bench-host -p petstore-bench -- --pets 1000,10000,100000
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use petstore_host::kv::{KvStore, Profile, Stats};
use petstore_host::manifest::App;
use petstore_host::preload::{one_sold_among, preload};
use petstore_host::server::{self, Host, Loaded, Output};
use serde_json::Value;

const KEY: &str = "bench-key";

struct Options {
    pets: Vec<usize>,
    seconds: u64,
    concurrency: usize,
    /// Requests per operation for the exact key-value counts.
    counted: u64,
    threads: usize,
}

fn options() -> Result<Options> {
    let mut o = Options {
        pets: vec![1_000, 10_000, 100_000],
        seconds: 5,
        concurrency: 4,
        counted: 200,
        threads: 2,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--pets" => o.pets = value.split(',').map(|v| v.trim().replace('_', "").parse()).collect::<Result<_, _>>()?,
            "--seconds" => o.seconds = value.parse()?,
            "--concurrency" => o.concurrency = value.parse()?,
            "--counted" => o.counted = value.parse()?,
            "--threads" => o.threads = value.parse()?,
            other => bail!("unknown argument {other} (--pets N,N --seconds S --concurrency C --counted N --threads T)"),
        }
    }
    Ok(o)
}

/// One load-generator run.
struct Load {
    p50_ms: f64,
    p99_ms: f64,
    rps: f64,
}

struct Operation {
    name: &'static str,
    method: &'static str,
    path: String,
    body: Option<&'static str>,
}

fn operations(pets: usize) -> Vec<Operation> {
    let get = |name, path: String| Operation {
        name,
        method: "GET",
        path,
        body: None,
    };
    vec![
        get("listPets?limit=100", "/v1/pets?limit=100".into()),
        get(
            "listPets?limit=100&status=sold (1 sold)",
            "/v1/pets?limit=100&status=sold".into(),
        ),
        get(
            "listPets deep cursor",
            format!(
                "/v1/pets?limit=100&cursor=c{}",
                pets.saturating_sub(150).max(1)
            ),
        ),
        get("getPet", format!("/v1/pets/{}", pets / 2 + 1)),
        // Last: it grows the catalogue.
        Operation {
            name: "createPet",
            method: "POST",
            path: "/v1/pets".into(),
            body: Some(r#"{"name":"Bench","categoryId":3,"status":"pending"}"#),
        },
    ]
}

fn oha(addr: SocketAddr, op: &Operation, limit: Limit, concurrency: usize) -> Result<Load> {
    let mut cmd = Command::new("oha");
    cmd.args([
        "--no-tui",
        "--output-format",
        "json",
        "-c",
        &concurrency.to_string(),
    ]);
    match limit {
        Limit::Seconds(s) => cmd.args(["-z", &format!("{s}s")]),
        Limit::Requests(n) => cmd.args(["-n", &n.to_string()]),
    };
    cmd.args([
        "-m",
        op.method,
        "-H",
        &format!("Authorization: Bearer {KEY}"),
    ]);
    if let Some(body) = op.body {
        cmd.args(["-T", "application/json", "-d", body]);
    }
    cmd.arg(format!("http://{addr}{}", op.path));
    let out = cmd
        .output()
        .context("running oha (install it: cargo install oha --locked)")?;
    if !out.status.success() {
        bail!("oha failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let report: Value = serde_json::from_slice(&out.stdout).context("oha JSON")?;
    let codes = &report["statusCodeDistribution"];
    let expected = if op.method == "POST" { "201" } else { "200" };
    if let Some(map) = codes.as_object() {
        if map.keys().any(|k| k != expected) {
            bail!("{}: unexpected status codes {codes}", op.name);
        }
    }
    let ms = |v: &Value| v.as_f64().unwrap_or(f64::NAN) * 1000.0;
    Ok(Load {
        p50_ms: ms(&report["latencyPercentiles"]["p50"]),
        p99_ms: ms(&report["latencyPercentiles"]["p99"]),
        rps: report["summary"]["requestsPerSec"]
            .as_f64()
            .unwrap_or(f64::NAN),
    })
}

#[derive(Clone, Copy)]
enum Limit {
    Seconds(u64),
    Requests(u64),
}

fn serve(loaded: Arc<Loaded>, kv: KvStore, threads: usize) -> Result<SocketAddr> {
    let host = Host::new(loaded, kv, Output::Discard);
    server::spawn(host, "127.0.0.1:0".parse()?, threads)
}

fn main() -> Result<()> {
    let o = options()?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    server::build_wasm(&root, &["petstore", "petstore-floor"])?;
    let variables = HashMap::from([("api_key".to_string(), KEY.to_string())]);
    let petstore = server::load_app(&root.join("spin.toml"), &variables)?;
    let floor_wasm = root.join("target/wasm32-wasip1/release/petstore_floor.wasm");
    let floor_app = App {
        component_id: "floor".into(),
        source: floor_wasm.clone(),
        route_prefix: "/v1".into(),
        key_value_stores: vec![],
        variables: HashMap::new(),
    };
    let floor = Arc::new(Loaded::load(floor_app)?);
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    println!("## Sizes\n");
    println!("| component | core module (.wasm) | as component |");
    println!("|---|---:|---:|");
    println!(
        "| petstore | {} B | {} B |",
        size(&petstore.app.source),
        petstore.component_size
    );
    println!(
        "| floor (hello world) | {} B | {} B |\n",
        size(&floor_wasm),
        floor.component_size
    );

    let floor_addr = serve(floor.clone(), KvStore::new(Profile::Clean), o.threads)?;
    let hello = Operation {
        name: "floor: hello world",
        method: "GET",
        path: "/v1/hello".into(),
        body: None,
    };
    let floor_load = oha(floor_addr, &hello, Limit::Seconds(o.seconds), o.concurrency)?;

    println!(
        "## Per request, concurrency {}, {} s per row\n",
        o.concurrency, o.seconds
    );
    println!(
        "| pets | operation | KV calls | KV bytes | p50 ms | p99 ms | req/s | p50 / floor p50 |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "| – | {} | 0 | 0 | {:.3} | {:.3} | {:.0} | 1.00 |",
        hello.name, floor_load.p50_ms, floor_load.p99_ms, floor_load.rps
    );
    for &pets in &o.pets {
        let kv = KvStore::new(Profile::Clean);
        preload(&kv, pets, one_sold_among(pets))?;
        let largest = kv.largest_value();
        let addr = serve(petstore.clone(), kv.clone(), o.threads)?;
        for op in operations(pets) {
            kv.reset_stats();
            oha(addr, &op, Limit::Requests(o.counted), 1)?;
            let Stats { calls, bytes } = kv.stats();
            let per = |v: u64| v as f64 / o.counted as f64;
            let load = oha(addr, &op, Limit::Seconds(o.seconds), o.concurrency)?;
            println!(
                "| {pets} | {} | {:.2} | {:.0} | {:.3} | {:.3} | {:.0} | {:.2} |",
                op.name,
                per(calls),
                per(bytes),
                load.p50_ms,
                load.p99_ms,
                load.rps,
                load.p50_ms / floor_load.p50_ms
            );
        }
        println!("| {pets} | largest stored value after preload | | {largest} B | | | | |");
    }
    Ok(())
}
