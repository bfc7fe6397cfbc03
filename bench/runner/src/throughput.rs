//! Create throughput: `clients` clients creating back to back on one
//! deployment, in phases that take turns between ours (createPet) and the
//! floor's least create on a contended store — only `increment floor:ctr`,
//! retried under the same policy as ours — so both meet the same machine.

use anyhow::Result;

use crate::load::{self, Run};
use crate::operations::create_request;
use crate::options::Options;
use crate::setup::{Deployment, Serving};

/// Measured phases per side.
const ROUNDS: usize = 3;

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    println!(
        "## Create throughput: {} clients, {ROUNDS} phases of {} s per side\n",
        o.clients, o.seconds
    );
    println!("| backend | pets | side | req/s | p50 ms | p99 ms | failures | ours ÷ floor req/s |");
    println!("|---|---:|---|---:|---:|---:|---:|---:|");
    let pets = o.pets.first().copied().unwrap_or(1_000);
    for &backend in &o.backends {
        let d = Deployment::new(backend, pets, serving);
        let addr = d.address();
        let ours = create_request();
        let floor = load::Request {
            fixed: load::raw("GET", "/floor/x?increment=1&retry=1", &[], ""),
            fresh: None,
            expect: 201,
        };
        // A phase of each first, unmeasured: DynamoDB Local is Java, and its
        // first seconds run before the JIT has compiled its hot paths.
        load::closed(&addr, &ours, o.clients, o.seconds)?;
        load::closed(&addr, &floor, o.clients, o.seconds)?;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            a.push(load::closed(&addr, &ours, o.clients, o.seconds)?);
            b.push(load::closed(&addr, &floor, o.clients, o.seconds)?);
        }
        let (a, b) = (Run::merge(a), Run::merge(b));
        let calls = create_calls(&d);
        for (side, run) in [("ours: createPet", &a), ("floor: increment, retried", &b)] {
            print!(
                "| {} | {pets} | {side} | {:.0} | {:.1} | {:.1} | {} |",
                backend.name(),
                run.throughput(),
                run.ok.percentile(0.5),
                run.ok.percentile(0.99),
                run.failed
            );
            if side.starts_with("ours") {
                println!(" {:.2} |", a.throughput() / b.throughput());
                println!(
                    "| {} | {pets} | ours: calls per create | mean {:.2} | p50 {:.0} | p99 {:.0} | max {:.0} | |",
                    backend.name(),
                    calls.iter().sum::<f64>() / calls.len().max(1) as f64,
                    percentile(&calls, 0.5),
                    percentile(&calls, 0.99),
                    calls.last().copied().unwrap_or(0.0)
                );
            } else {
                println!(" |");
            }
        }
    }
    Ok(())
}

/// The `kv_calls` of every create the access log shows, sorted: 3 or 4
/// when every call succeeds at once, more for each retried attempt.
fn create_calls(d: &Deployment) -> Vec<f64> {
    // Spin writes a line after its response: let the last ones land.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut calls: Vec<f64> = d
        .spin
        .log_lines()
        .iter()
        .filter(|l| l["method"] == "POST" && l["status"] == 201)
        .filter_map(|l| l["kv_calls"].as_f64())
        .collect();
    calls.sort_by(f64::total_cmp);
    calls
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}
