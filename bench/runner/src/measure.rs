//! Measuring one operation on a deployment: the key-value calls and new keys
//! of `counted` requests (from Spin's access log and the store itself), then
//! latency under wrk, ours and the floor's alternately, `runs` times each.

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use petstore_e2e::client::KEY;

use crate::operations::{floor_path, Kind, Operation, CREATE_BODY, REPLAYED_KEY};
use crate::setup::Deployment;

/// What one request costs, averaged over the counted requests.
pub struct Cost {
    /// Key-value calls per request, from the access log's `kv_calls`.
    pub calls: f64,
    /// Keys added to the store per request.
    pub new_keys: f64,
    pub body_bytes: usize,
}

/// A prefix no earlier run used, for unique `Idempotency-Key`s.
fn unique_prefix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("bench-{}-{nanos}", std::process::id())
}

pub fn count(d: &Deployment, op: &Operation, n: usize) -> Result<Cost> {
    let api = &d.spin.api;
    // Requests still in flight when the last wrk run stopped finish first.
    std::thread::sleep(Duration::from_millis(500));
    if op.kind == Kind::Replay {
        let first = api.post_keyed(REPLAYED_KEY, CREATE_BODY);
        if first.status != 201 {
            bail!("{}: the replayed create answered {}", op.name, first.status);
        }
    }
    let keys_before = d.store.direct().key_count();
    let run = unique_prefix();
    let mut body_bytes = 0;
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let id = format!("{run}-{i}");
        let id_header = ("x-request-id", id.as_str());
        let reply = match op.kind {
            Kind::Read => api.get_with(&op.path, &[id_header]),
            Kind::Create => api.post_with(CREATE_BODY, &[id_header]),
            Kind::KeyedCreate => api.post_with(CREATE_BODY, &[id_header, ("idempotency-key", &id)]),
            Kind::Replay => {
                api.post_with(CREATE_BODY, &[id_header, ("idempotency-key", REPLAYED_KEY)])
            }
        };
        let expected = if op.kind.creates() { 201 } else { 200 };
        if reply.status != expected {
            bail!("{}: status {}: {}", op.name, reply.status, reply.body);
        }
        body_bytes = reply.body.len();
        ids.push(id);
    }
    let new_keys = (d.store.direct().key_count() as f64 - keys_before as f64) / n as f64;
    Ok(Cost {
        calls: logged_calls(d, &run, n)? as f64 / n as f64,
        new_keys,
        body_bytes,
    })
}

/// The `kv_calls` of the `n` access-log lines whose request id starts with
/// `run`, summed (Spin writes each line after its response: wait for all).
fn logged_calls(d: &Deployment, run: &str, n: usize) -> Result<u64> {
    for _ in 0..200 {
        let lines: Vec<_> = d
            .spin
            .log_lines()
            .into_iter()
            .filter(|l| {
                l["request_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(run))
            })
            .collect();
        if lines.len() >= n {
            return Ok(lines.iter().filter_map(|l| l["kv_calls"].as_u64()).sum());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("the access log lacks lines of the counted requests")
}

/// One wrk run.
#[derive(Clone, Copy)]
pub struct Load {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub rps: f64,
}

/// Ours and the floor's at `connections`, each the median of `runs` wrk
/// runs taken alternately (so drift on the machine touches both).
pub struct Comparison {
    pub ours: Load,
    pub floor: Load,
}

impl Comparison {
    pub fn ratio(&self) -> f64 {
        self.ours.p50_ms / self.floor.p50_ms
    }
}

pub fn compare(
    d: &Deployment,
    op: &Operation,
    cost: &Cost,
    connections: usize,
    seconds: u64,
    runs: usize,
) -> Result<Comparison> {
    let base = &d.spin.api.base;
    let ours_url = format!("{base}{}", op.path);
    let floor_url = format!("{base}{}", floor_path(op.kind, cost.calls, cost.body_bytes));
    let mut ours = Vec::new();
    let mut floor = Vec::new();
    for _ in 0..runs {
        ours.push(wrk(&ours_url, op.kind, connections, seconds)?);
        floor.push(wrk(&floor_url, Kind::Read, connections, seconds)?);
    }
    Ok(Comparison {
        ours: median(ours),
        floor: median(floor),
    })
}

/// The run with the median p50 (its p99 and throughput with it).
fn median(mut loads: Vec<Load>) -> Load {
    loads.sort_by(|a, b| a.p50_ms.total_cmp(&b.p50_ms));
    loads[loads.len() / 2]
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
