//! Round trips per operation on a store a network away: two deployments on
//! DynamoDB Local, one straight to it and one through the delay line
//! (`--dynamo-rtt-ms`), the same catalogue in each; one client alternates
//! each operation between them, request by request. Round trips =
//! (p50 through the line − p50 straight) ÷ the line's round trip: the
//! latency a client far from its store pays per operation.
//!
//! Then cold pages: after a burst of creates on both, the first page of 100
//! over the new pets (pieces not built yet), timed once each, several times.

use std::time::Instant;

use anyhow::{bail, Result};
use petstore_e2e::stores::Backend;

use crate::load;
use crate::measure::{self, ours_request};
use crate::operations::{self, Kind, CREATE_BODY};
use crate::options::Options;
use crate::setup::{Deployment, Serving};

/// Bursts measured for the cold pages, and creates in each.
const BURSTS: usize = 5;
const BURST: usize = 100;

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    let rtt = serving.dynamo_rtt_ms;
    if rtt <= 0.0 {
        bail!("--mode edge needs --dynamo-rtt-ms above 0");
    }
    let straight = Serving {
        api_key: serving.api_key.clone(),
        dynamo_rtt_ms: 0.0,
    };
    for &pets in &o.pets {
        let near = Deployment::new(Backend::Dynamo, pets, &straight);
        let far = Deployment::new(Backend::Dynamo, pets, serving);
        println!("\n## Round trips, DynamoDB Local, {pets} pets, +{rtt} ms a call\n");
        println!(
            "| operation | KV calls | p50 straight ms | p50 through the line ms | round trips |"
        );
        println!("|---|---:|---:|---:|---:|");
        for op in operations::all(pets) {
            if !o.only.is_empty() && !o.only.iter().any(|n| op.name.contains(n)) {
                continue;
            }
            let cost = measure::count(&far, &op, o.counted)?;
            if op.kind == Kind::Replay {
                // The replayed key must exist on the other deployment too.
                measure::count(&near, &op, 1)?;
            }
            let request = ours_request(&op);
            let (a, b) = load::alternate(
                [&near.address(), &far.address()],
                &request,
                &request,
                1,
                o.seconds,
            )?;
            let (p_near, p_far) = (a.percentile(0.5), b.percentile(0.5));
            println!(
                "| {} | {:.2} | {p_near:.2} | {p_far:.2} | {:.2} |",
                op.name,
                cost.calls,
                (p_far - p_near) / rtt
            );
        }
        cold_pages(&near, &far, rtt)?;
    }
    Ok(())
}

/// The first page of 100 over `BURST` new pets, on both deployments.
fn cold_pages(near: &Deployment, far: &Deployment, rtt: f64) -> Result<()> {
    println!("\nCold pages (the first `listPets?limit=100` over {BURST} pets just created, no piece built), {BURSTS} bursts:\n");
    println!("| burst | KV calls | ms straight | ms through the line | round trips |");
    println!("|---:|---:|---:|---:|---:|");
    for burst in 0..BURSTS {
        let [(near_ms, _), (far_ms, calls)] =
            [near, far].map(|d| burst_then_page(d, burst).unwrap_or((f64::NAN, 0)));
        println!(
            "| {burst} | {calls} | {near_ms:.1} | {far_ms:.1} | {:.2} |",
            (far_ms - near_ms) / rtt
        );
    }
    Ok(())
}

/// Creates `BURST` pets from 8 clients, then times the first page over them;
/// its latency (ms) and key-value calls (from the access log).
fn burst_then_page(d: &Deployment, burst: usize) -> Result<(f64, u64)> {
    let api = &d.spin.api;
    let first = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    (0..BURST / 8 + 1)
                        .map(|_| api.post(CREATE_BODY))
                        .filter(|r| r.status == 201)
                        .map(|r| r.created_id())
                        .min()
                })
            })
            .collect();
        clients
            .into_iter()
            .filter_map(|c| c.join().ok().flatten())
            .min()
    });
    let Some(first) = first else {
        bail!("the burst created nothing");
    };
    let id = format!("cold-{burst}-{}", std::process::id());
    let sent = Instant::now();
    let r = api.get_with(
        &format!("/v1/pets?limit=100&cursor=c{first}"),
        &[("x-request-id", &id)],
    );
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    if r.status != 200 {
        bail!("cold page: {} {}", r.status, r.body);
    }
    Ok((ms, page_calls(d, &id)?))
}

/// The `kv_calls` of the request `id` in the access log (written after the
/// response: wait for it).
fn page_calls(d: &Deployment, id: &str) -> Result<u64> {
    for _ in 0..200 {
        let line = d
            .spin
            .log_lines()
            .into_iter()
            .find(|l| l["request_id"].as_str() == Some(id));
        if let Some(calls) = line.and_then(|l| l["kv_calls"].as_u64()) {
            return Ok(calls);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    bail!("no access-log line for {id}")
}
