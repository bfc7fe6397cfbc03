//! What the move to lanes costs: a DynamoDB Local table of the counters
//! layout (what 1.0.0–1.2.0 wrote), preloaded with `--pets` pets, served by
//! an instance configured `catalogue_layout = lanes` through the delay line
//! (`--dynamo-rtt-ms`). Its first create moves the store; its calls (from
//! Spin's log) and time, against the creates that follow on the moved
//! store, and what `/v1/health` says before and after.

use std::time::Instant;

use anyhow::{ensure, Result};
use petstore_e2e::client::pet_body;
use petstore_e2e::stores::{Backend, Store};
use petstore_host::preload::one_sold_among;

use crate::options::Options;
use crate::setup::{Deployment, Serving};

/// Creates timed after the move.
const AFTER: usize = 20;

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    let rtt = serving.rtt("move")?;
    println!("\n## The move to lanes, DynamoDB Local, +{rtt} ms a call\n");
    println!("| pets before | create | KV calls | ms | round trips (ms ÷ {rtt}) |");
    println!("|---:|---|---:|---:|---:|");
    for &pets in &o.pets {
        let mut store = Store::with_layout(Backend::Dynamo, "counters");
        let started = Instant::now();
        store.preload(pets, one_sold_among(pets));
        eprintln!(
            "{pets} pets preloaded (counters) in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        store.layout = "lanes";
        let far = Deployment::serve(store, serving);
        let api = &far.spin.api;
        let before = api.send("GET", "/v1/health", None, &[], None).json();
        ensure!(before["layout"] == "counters", "before the move: {before}");
        let mut timed = Vec::new();
        for n in 0..=AFTER {
            let started = Instant::now();
            let reply = api.post(&pet_body(&format!("m{n}"), "available"));
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            ensure!(reply.status == 201, "create {n}: {}", reply.status);
            timed.push((reply.created_id(), ms));
        }
        let calls: Vec<u64> = far
            .spin
            .log_lines()
            .iter()
            .filter(|l| l["method"] == "POST")
            .map(|l| l["kv_calls"].as_u64().unwrap_or(0))
            .collect();
        ensure!(calls.len() == AFTER + 1, "{} creates logged", calls.len());
        let after = api.send("GET", "/v1/health", None, &[], None).json();
        ensure!(
            after["layout"] == "lanes" && after["move"]["ids_before"] == pets as i64,
            "after the move: {after}"
        );
        let (first_id, first_ms) = timed[0];
        ensure!(
            first_id > pets as i64,
            "the first id after the move: {first_id}"
        );
        println!(
            "| {pets} | the first, which moves the store | {} | {first_ms:.1} | {:.1} |",
            calls[0],
            first_ms / rtt
        );
        let mut ms: Vec<f64> = timed[1..].iter().map(|(_, ms)| *ms).collect();
        ms.sort_by(f64::total_cmp);
        let median = ms[ms.len() / 2];
        let mut rest: Vec<u64> = calls[1..].to_vec();
        rest.sort();
        println!(
            "| {pets} | the next {AFTER}, median | {} | {median:.1} | {:.1} |",
            rest[rest.len() / 2],
            median / rtt
        );
    }
    Ok(())
}
