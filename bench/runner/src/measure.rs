//! Measuring one operation on a deployment: the key-value calls and new keys
//! of `counted` requests (from Spin's access log and the store itself), then
//! latency with ours and the floor's requests alternating (`load`).

use std::time::Duration;

use anyhow::{bail, Result};
use petstore_e2e::client::KEY;

use crate::load;
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

/// Ours beside the floor at `connections` (see `load`).
pub struct Comparison {
    pub ours_p50: f64,
    pub ours_p99: f64,
    pub ours_rate: f64,
    pub floor_p50: f64,
}

impl Comparison {
    pub fn ratio(&self) -> f64 {
        self.ours_p50 / self.floor_p50
    }
}

pub fn compare(
    d: &Deployment,
    op: &Operation,
    cost: &Cost,
    connections: usize,
    seconds: f64,
) -> Result<Comparison> {
    let addr = d.address();
    let ours = ours_request(op);
    let floor = load::Request {
        fixed: load::raw(
            "GET",
            &floor_path(op, cost.calls, cost.body_bytes, d.store.backend),
            &[],
            "",
        ),
        fresh: None,
        expect: if op.kind.creates() && op.kind != Kind::Replay {
            201
        } else {
            200
        },
    };
    let (a, b) = load::alternate([&addr, &addr], &ours, &floor, connections, seconds)?;
    Ok(Comparison {
        ours_p50: a.percentile(0.5),
        ours_p99: a.percentile(0.99),
        ours_rate: a.rate(connections),
        floor_p50: b.percentile(0.5),
    })
}

/// Our request for `op`, as the load sends it.
pub fn ours_request(op: &Operation) -> load::Request {
    let auth = format!("Bearer {KEY}");
    let json = ("content-type", "application/json");
    match op.kind {
        Kind::Read => load::Request {
            fixed: load::raw("GET", &op.path, &[("authorization", &auth)], ""),
            fresh: None,
            expect: 200,
        },
        Kind::Create => load::Request {
            fixed: load::raw(
                "POST",
                &op.path,
                &[("authorization", &auth), json],
                CREATE_BODY,
            ),
            fresh: None,
            expect: 201,
        },
        Kind::Replay => load::Request {
            fixed: load::raw(
                "POST",
                &op.path,
                &[
                    ("authorization", &auth),
                    json,
                    ("idempotency-key", REPLAYED_KEY),
                ],
                CREATE_BODY,
            ),
            fresh: None,
            expect: 201,
        },
        Kind::KeyedCreate => {
            let (path, run) = (op.path.clone(), unique_prefix());
            let auth = auth.clone();
            load::Request {
                fixed: Vec::new(),
                fresh: Some(Box::new(move |n| {
                    let key = format!("{run}-{n}");
                    let headers = [
                        ("authorization", auth.as_str()),
                        ("content-type", "application/json"),
                        ("idempotency-key", key.as_str()),
                    ];
                    load::raw("POST", &path, &headers, CREATE_BODY)
                })),
                expect: 201,
            }
        }
    }
}
