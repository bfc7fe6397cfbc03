//! `petstore-bench`: the release component in the test host on Spin's real
//! key-value engines (a SQLite file, a `redis-server`), each operation beside
//! a key-value floor on the same backend in the same run.
//!
//! Per backend and catalogue size: preload N pets; per operation, count the
//! exact key-value calls, new keys and bytes of `--counted` requests (the
//! host's counters), then measure latency with `wrk` (1 and 4 keep-alive
//! connections) for ours and for the floor component (`bench/floor`) doing
//! the same number of plain `get`s with the same body size — or, for
//! createPet, the minimal create (1 `increment` + 1 new-key `set`).
//!
//! ```text
//! cargo run --profile bench-host -p petstore-bench -- --backends sqlite,redis --pets 1000,10000,100000
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use petstore_host::kv::{Backend, KvStore, Stats};
use petstore_host::preload::{one_sold_among, preload};
use petstore_host::server::{self, Host, Loaded, Output};
use sha2::{Digest, Sha256};

const KEY: &str = "bench-key";
const CREATE_BODY: &str = r#"{"name":"Bench","categoryId":3,"status":"pending"}"#;
/// The one key of the replay benchmark.
const REPLAYED_KEY: &str = "bench-replayed";

struct Options {
    backends: Vec<Backend>,
    pets: Vec<usize>,
    seconds: u64,
    connections: Vec<usize>,
    /// Requests per operation for the exact key-value counts.
    counted: u64,
    threads: usize,
    /// Only operations whose name contains one of these (default: all).
    only: Vec<String>,
    /// How the `api_key` variable holds the key: `plain`, or `digest`
    /// (`sha256:<hex>`, as operators may keep it at rest).
    key_form: String,
}

fn list<T: std::str::FromStr>(value: &str) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    value
        .split(',')
        .map(|v| {
            v.trim()
                .replace('_', "")
                .parse()
                .map_err(|e| anyhow::anyhow!("{v}: {e}"))
        })
        .collect()
}

fn options() -> Result<Options> {
    let mut o = Options {
        backends: vec![Backend::Sqlite, Backend::Redis],
        pets: vec![1_000, 10_000, 100_000],
        seconds: 3,
        connections: vec![1, 4],
        counted: 200,
        threads: 2,
        only: Vec::new(),
        key_form: "plain".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--backends" => o.backends = list(&value)?,
            "--pets" => o.pets = list(&value)?,
            "--seconds" => o.seconds = value.parse()?,
            "--connections" => o.connections = list(&value)?,
            "--counted" => o.counted = value.parse()?,
            "--threads" => o.threads = value.parse()?,
            "--only" => o.only = list(&value)?,
            "--key-form" if ["plain", "digest"].contains(&value.as_str()) => o.key_form = value,
            other => bail!(
                "unknown argument {other} (--backends B,B --pets N,N --seconds S \
                 --connections C,C --counted N --threads T --only NAME,NAME --key-form plain|digest)"
            ),
        }
    }
    Ok(o)
}

struct Operation {
    name: &'static str,
    path: String,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Create,
    /// A create with a new `Idempotency-Key` on every request.
    KeyedCreate,
    /// The same `Idempotency-Key` and body every time: replays.
    Replay,
}

impl Kind {
    fn creates(self) -> bool {
        self != Kind::Read
    }
}

fn operations(pets: usize) -> Vec<Operation> {
    let get = |name, path: String| Operation {
        name,
        path,
        kind: Kind::Read,
    };
    vec![
        get("listPets?limit=100", "/v1/pets?limit=100".into()),
        get(
            "listPets?limit=100&status=sold (1 sold)",
            "/v1/pets?limit=100&status=sold".into(),
        ),
        get(
            "listPets?limit=100, deep cursor",
            format!(
                "/v1/pets?limit=100&cursor=c{}",
                pets.saturating_sub(150).max(1)
            ),
        ),
        get("getPet", format!("/v1/pets/{}", pets / 2 + 1)),
        // Last: they grow the catalogue.
        Operation {
            name: "createPet",
            path: "/v1/pets".into(),
            kind: Kind::Create,
        },
        Operation {
            name: "createPet, new Idempotency-Key",
            path: "/v1/pets".into(),
            kind: Kind::KeyedCreate,
        },
        Operation {
            name: "createPet, replayed",
            path: "/v1/pets".into(),
            kind: Kind::Replay,
        },
    ]
}

/// Exact cost of one request, averaged over the counted requests.
struct Cost {
    stats: Stats,
    new_keys: f64,
    body_bytes: usize,
    n: u64,
}

impl Cost {
    fn per(&self, v: u64) -> f64 {
        v as f64 / self.n as f64
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

fn count(kv: &KvStore, addr: SocketAddr, op: &Operation, n: u64) -> Result<Cost> {
    let agent = agent();
    let url = format!("http://{addr}{}", op.path);
    // Requests still in flight when the last wrk run stopped finish first.
    std::thread::sleep(Duration::from_millis(500));
    let keys_before = kv.key_count();
    kv.reset_stats();
    let mut body_bytes = 0;
    let run = unique_prefix();
    for i in 0..n {
        let request = if op.kind.creates() {
            let mut post = agent
                .post(&url)
                .header("authorization", &format!("Bearer {KEY}"))
                .header("content-type", "application/json");
            match op.kind {
                Kind::KeyedCreate => post = post.header("idempotency-key", &format!("{run}-{i}")),
                Kind::Replay => post = post.header("idempotency-key", REPLAYED_KEY),
                _ => {}
            }
            post.send(CREATE_BODY)
        } else {
            agent
                .get(&url)
                .header("authorization", &format!("Bearer {KEY}"))
                .call()
        };
        let mut response = request?;
        let expected = if op.kind.creates() { 201 } else { 200 };
        if response.status().as_u16() != expected {
            bail!("{}: status {}", op.name, response.status());
        }
        body_bytes = response.body_mut().read_to_vec()?.len();
    }
    let stats = kv.stats();
    let new_keys = (kv.key_count() as f64 - keys_before as f64) / n as f64;
    Ok(Cost {
        stats,
        new_keys,
        body_bytes,
        n,
    })
}

/// One `wrk` run.
struct Load {
    p50_ms: f64,
    p99_ms: f64,
    rps: f64,
}

/// A prefix no earlier run used, for unique `Idempotency-Key`s.
fn unique_prefix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("bench-{}-{nanos}", std::process::id())
}

fn wrk(url: &str, kind: Kind, connections: usize, seconds: u64) -> Result<Load> {
    let mut cmd = Command::new("wrk");
    cmd.args(["-t1", "-c", &connections.to_string()])
        .args(["-d", &format!("{seconds}s"), "--latency"])
        .args(["-H", &format!("Authorization: Bearer {KEY}")]);
    let script = std::env::temp_dir().join(format!("petstore-bench-{}.lua", std::process::id()));
    if kind.creates() {
        let mut lua = format!(
            "wrk.method = \"POST\"\nwrk.body = '{CREATE_BODY}'\n\
             wrk.headers[\"Content-Type\"] = \"application/json\"\n"
        );
        match kind {
            Kind::Replay => lua.push_str(&format!(
                "wrk.headers[\"Idempotency-Key\"] = \"{REPLAYED_KEY}\"\n"
            )),
            Kind::KeyedCreate => lua.push_str(&format!(
                "local n = 0\n\
                 request = function()\n\
                   n = n + 1\n\
                   wrk.headers[\"Idempotency-Key\"] = \"{}-\" .. n\n\
                   return wrk.format()\n\
                 end\n",
                unique_prefix()
            )),
            _ => {}
        }
        std::fs::write(&script, lua)?;
        cmd.arg("-s").arg(&script);
    }
    cmd.arg(url);
    let out = cmd
        .output()
        .context("running wrk (install it: apt-get install wrk)")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!("wrk failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    if let Some(line) = text.lines().find(|l| l.contains("Non-2xx")) {
        bail!("{url}: {}", line.trim());
    }
    let percentile = |p: &str| -> Result<f64> {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(p))
            .with_context(|| format!("wrk output has no {p} line:\n{text}"))?;
        let value = line.split_whitespace().nth(1).unwrap_or_default();
        duration_ms(value).with_context(|| format!("wrk latency '{value}'"))
    };
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN);
    Ok(Load {
        p50_ms: percentile("50%")?,
        p99_ms: percentile("99%")?,
        rps,
    })
}

/// wrk prints `812.00us`, `1.23ms` or `1.01s`.
fn duration_ms(value: &str) -> Option<f64> {
    let (number, scale) = if let Some(v) = value.strip_suffix("us") {
        (v, 0.001)
    } else if let Some(v) = value.strip_suffix("ms") {
        (v, 1.0)
    } else if let Some(v) = value.strip_suffix('s') {
        (v, 1000.0)
    } else {
        return None;
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

fn serve(loaded: Arc<Loaded>, kv: KvStore, threads: usize) -> Result<SocketAddr> {
    let host = Host::new(loaded, kv, Output::Discard);
    server::spawn(host, "127.0.0.1:0".parse()?, threads)
}

/// The filesystem type of the mount holding `path` (from /proc/mounts).
fn filesystem_of(path: &Path) -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    mounts
        .lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            (fields.len() > 2).then(|| {
                (
                    fields[1].to_string(),
                    format!("{} on {}", fields[2], fields[0]),
                )
            })
        })
        .filter(|(mount, _)| path.starts_with(mount))
        .max_by_key(|(mount, _)| mount.len())
        .map_or_else(|| "unknown".into(), |(_, fs)| fs)
}

/// The floor's query for the same work as `cost`: the same number of plain
/// `get`s and the same body size, or the minimal create.
fn floor_query(op: &Operation, cost: &Cost) -> String {
    match op.kind {
        Kind::Create | Kind::KeyedCreate => {
            format!("/v1/floor?create=1&bytes={}", cost.body_bytes)
        }
        // A replay reads the key's word and the pet: two calls.
        Kind::Replay => {
            let calls = cost.per(cost.stats.calls).round() as u64;
            format!("/v1/floor?gets={calls}&bytes={}", cost.body_bytes)
        }
        Kind::Read => {
            let gets = cost.per(cost.stats.gets).round() as u64;
            format!("/v1/floor?gets={gets}&bytes={}", cost.body_bytes)
        }
    }
}

fn main() -> Result<()> {
    let o = options()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    server::build_wasm(&root, &["petstore"])?;
    let api_key = match o.key_form.as_str() {
        "digest" => format!("sha256:{:x}", Sha256::digest(KEY.as_bytes())),
        _ => KEY.to_string(),
    };
    println!(
        "`api_key` holds the key as: {} (`{}`)\n",
        o.key_form, api_key
    );
    let variables = HashMap::from([("api_key".to_string(), api_key)]);
    let petstore = server::load_app(&root.join("spin.toml"), &variables)?;
    let floor = petstore_host::floor::load(&root, KEY)?;
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    println!("## Sizes\n");
    println!("| component | core module (.wasm) | as component |");
    println!("|---|---:|---:|");
    for loaded in [&petstore, &floor] {
        println!(
            "| {} | {} B | {} B |",
            loaded.app.component_id,
            size(&loaded.app.source),
            loaded.component_size
        );
    }
    let temp = std::env::temp_dir();
    println!(
        "\nSQLite files in {} ({}); Redis: redis-server on 127.0.0.1, no persistence.",
        temp.display(),
        filesystem_of(&temp)
    );

    for &backend in &o.backends {
        println!("\n## Backend: {}\n", backend.name());
        print!(
            "| pets | operation | KV calls (get/write/incr/cas) | new keys | KV bytes | body B |"
        );
        for c in &o.connections {
            print!(" c={c} p50 ms | floor p50 | ours ÷ floor | p99 ms | req/s |");
        }
        println!();
        print!("|---:|---|---|---:|---:|---:|");
        for _ in &o.connections {
            print!("---:|---:|---:|---:|---:|");
        }
        println!();
        for &pets in &o.pets {
            let kv = KvStore::new(backend)?;
            preload(&kv, pets, one_sold_among(pets))?;
            let floor_values: Vec<(String, Vec<u8>)> = (0..16)
                .map(|i| (format!("floor:{i}"), vec![b'f'; 1024]))
                .collect();
            kv.engine().load(&floor_values)?;
            let largest = kv.largest_value();
            let ours = serve(petstore.clone(), kv.clone(), o.threads)?;
            let theirs = serve(floor.clone(), kv.clone(), o.threads)?;
            let chosen = operations(pets)
                .into_iter()
                .filter(|op| o.only.is_empty() || o.only.iter().any(|n| op.name.contains(n)));
            for op in chosen {
                let cost = count(&kv, ours, &op, o.counted)?;
                let s = cost.stats;
                print!(
                    "| {pets} | {} | {:.2} ({:.2}/{:.2}/{:.2}/{:.2}) | {:.2} | {:.0} | {} |",
                    op.name,
                    cost.per(s.calls),
                    cost.per(s.gets),
                    cost.per(s.writes),
                    cost.per(s.increments),
                    cost.per(s.cas),
                    cost.new_keys,
                    cost.per(s.bytes),
                    cost.body_bytes
                );
                let floor_url = format!("http://{theirs}{}", floor_query(&op, &cost));
                for &c in &o.connections {
                    let load = wrk(&format!("http://{ours}{}", op.path), op.kind, c, o.seconds)?;
                    let base = wrk(&floor_url, Kind::Read, c, o.seconds)?;
                    print!(
                        " {:.3} | {:.3} | {:.2} | {:.3} | {:.0} |",
                        load.p50_ms,
                        base.p50_ms,
                        load.p50_ms / base.p50_ms,
                        load.p99_ms,
                        load.rps
                    );
                }
                println!();
            }
            println!("| {pets} | largest stored value after preload: {largest} B | | | | |");
        }
        println!(
            "\nFloor queries: reads `/v1/floor?gets=G&bytes=B` (G = our gets), \
             createPet (with or without a key) `/v1/floor?create=1&bytes=B`, \
             a replay `/v1/floor?gets=2&bytes=B`."
        );
    }
    Ok(())
}
