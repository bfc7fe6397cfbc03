//! Creates that scale out, or do not: creates per second on Spin's
//! DynamoDB backend over DynamoDB Local, for each delay a call (a delay line
//! in front of the store, the distance from an edge location to its
//! store's region), each number of `spin up` instances on one table, and
//! each number of clients spread over the instances, every client creating
//! back to back on its own keep-alive connection. An empty catalogue per
//! delay, or (`--moved N`) one of N pets in the counters layout, which the
//! first create moves to lanes; the answers that are not 201 are counted,
//! and the CPU time a create cost DynamoDB Local (`java`) and the Spin
//! processes, which share this machine's cores with the clients.

use std::time::Duration;

use anyhow::Result;
use petstore::model::PetStatus;
use petstore_e2e::cpu;
use petstore_e2e::line::Line;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};

use crate::load;
use crate::operations::create_request;
use crate::options::Options;
use crate::setup::Serving;

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    println!(
        "## Creates per second, DynamoDB Local, {} s a figure\n",
        o.seconds
    );
    println!("| delay a call | instances | clients | creates/s | p50 ms | p99 ms | not 201 | engine CPU ms a create | Spin CPU ms a create |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let engine = petstore_e2e::dynamo::local().pid;
    let request = create_request();
    // Unmeasured first: DynamoDB Local is Java, and its first seconds run
    // before its JIT has compiled the hot paths (those of contended creates
    // too: as many clients as the most the figures use).
    {
        let store = Store::new(Backend::Dynamo);
        let spin = store.launch().variable("api_key", &serving.api_key).start();
        let addr = spin.api.base.trim_start_matches("http://").to_string();
        let most = o.connections.iter().copied().max().unwrap_or(16);
        load::closed_over(&[addr], &request, most, 2.0 * o.seconds)?;
    }
    for &delay in &o.delays {
        let store = if o.moved > 0 {
            let store = Store::with_layout(Backend::Dynamo, "counters");
            store.preload(o.moved, |n| PetStatus::ALL[n % 3]);
            println!(
                "| {delay} ms | {} pets of the counters layout, preloaded | | | | | |",
                o.moved
            );
            store
        } else {
            Store::new(Backend::Dynamo)
        };
        // One line for every instance: the same distance to the store.
        let line = (delay > 0.0).then(|| {
            let local = petstore_e2e::dynamo::local().endpoint.clone();
            let one_way = Duration::from_secs_f64(delay / 2000.0);
            Line::start(local.trim_start_matches("http://"), one_way).expect("the delay line")
        });
        for &instances in &o.instances {
            let running: Vec<SpinUp> = (0..instances)
                .map(|_| {
                    let mut launch = store
                        .launch()
                        .variable("api_key", &serving.api_key)
                        .variable("catalogue_layout", "lanes");
                    if let Some(line) = &line {
                        launch = launch.env("AWS_ENDPOINT_URL", line.endpoint());
                    }
                    launch.start()
                })
                .collect();
            let addrs: Vec<String> = running
                .iter()
                .map(|s| s.api.base.trim_start_matches("http://").to_string())
                .collect();
            let spin_cpu = || {
                running
                    .iter()
                    .map(|s| cpu::of_group(s.group()))
                    .sum::<f64>()
            };
            for &clients in &o.connections {
                let before = (cpu::of_process(engine), spin_cpu());
                let run = load::closed_over(&addrs, &request, clients, o.seconds)?;
                let creates = (run.ok.len() + run.failed) as f64;
                let per_create = |seconds: f64| 1000.0 * seconds / creates;
                println!(
                    "| {delay} ms | {instances} | {clients} | {:.1} | {:.1} | {:.1} | {} | {:.1} | {:.1} |",
                    run.throughput(),
                    run.ok.percentile(0.5),
                    run.ok.percentile(0.99),
                    run.failed,
                    per_create(cpu::of_process(engine) - before.0),
                    per_create(spin_cpu() - before.1),
                );
            }
        }
    }
    Ok(())
}
