//! Creates that scale out, or do not: creates per second on Spin's
//! DynamoDB backend over DynamoDB Local, for each delay a call (a delay line
//! in front of the store, the distance from an edge location to its
//! store's region), each number of `spin up` instances on one table, and
//! each number of clients spread over the instances, every client creating
//! back to back on its own keep-alive connection. An empty catalogue per
//! delay, or (`--moved N`) one of N pets in the counters layout, which the
//! first create moves to lanes; the answers that are not 201 are counted,
//! and the CPU time a create cost DynamoDB Local (`java`) and the Spin
//! processes, which share this machine's cores with the clients, and how
//! many of its cores those two kept busy over the figure (at 64 clients
//! the rate is about those cores ÷ their CPU a create). With
//! `--metered on`, a meter between the instances and the line counts each
//! figure's DynamoDB calls, swaps refused (races lost), items read and
//! units a create (the races' bill; the meter's own CPU is the bench
//! process's, so its rates are not the figure's).

use std::time::{Duration, Instant};

use anyhow::Result;
use petstore::model::PetStatus;
use petstore_e2e::cpu;
use petstore_e2e::line::Line;
use petstore_e2e::meter::Meter;
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
    print!("| delay a call | instances | clients | creates/s | p50 ms | p99 ms | not 201 | engine CPU ms a create | Spin CPU ms a create | cores busy, engine + Spin |");
    if o.metered {
        print!(" calls a create | of which current / get-many / set-many / swap | swaps refused a create | items read a create (absent) | units a create |");
    }
    println!(
        "\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|{}",
        if o.metered {
            "---:|---:|---:|---:|---:|"
        } else {
            ""
        }
    );
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
        let local = petstore_e2e::dynamo::local().endpoint.clone();
        let line = (delay > 0.0).then(|| {
            let one_way = Duration::from_secs_f64(delay / 2000.0);
            Line::start(local.trim_start_matches("http://"), one_way).expect("the delay line")
        });
        let endpoint = line
            .as_ref()
            .map_or(local, |line| line.endpoint().to_string());
        let meter = o
            .metered
            .then(|| Meter::start(endpoint.trim_start_matches("http://")).expect("the meter"));
        let endpoint = meter
            .as_ref()
            .map_or(endpoint, |meter| meter.endpoint().to_string());
        for &instances in &o.instances {
            let running: Vec<SpinUp> = (0..instances)
                .map(|_| {
                    store
                        .launch()
                        .variable("api_key", &serving.api_key)
                        .variable("catalogue_layout", "lanes")
                        .env("AWS_ENDPOINT_URL", &endpoint)
                        .start()
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
                if let Some(meter) = &meter {
                    meter.take();
                }
                let began = Instant::now();
                let run = load::closed_over(&addrs, &request, clients, o.seconds)?;
                let elapsed = began.elapsed().as_secs_f64();
                let creates = (run.ok.len() + run.failed) as f64;
                let used = (cpu::of_process(engine) - before.0, spin_cpu() - before.1);
                let per_create = |seconds: f64| 1000.0 * seconds / creates;
                print!(
                    "| {delay} ms | {instances} | {clients} | {:.1} | {:.1} | {:.1} | {} | {:.1} | {:.1} | {:.2} |",
                    run.throughput(),
                    run.ok.percentile(0.5),
                    run.ok.percentile(0.99),
                    run.failed,
                    per_create(used.0),
                    per_create(used.1),
                    (used.0 + used.1) / elapsed,
                );
                if let Some(meter) = &meter {
                    let used = meter.take();
                    let each = |n: f64| n / creates;
                    // The create path scans nothing: the four operations it calls.
                    let ops = used.by_operation[..4]
                        .iter()
                        .map(|n| format!("{:.2}", each(*n as f64)))
                        .collect::<Vec<_>>();
                    print!(
                        " {:.2} | {} | {:.2} | {:.1} ({:.1}) | {:.1} |",
                        each(used.calls as f64),
                        ops.join(" / "),
                        each(used.refused as f64),
                        each(used.items_read as f64),
                        each(used.absent() as f64),
                        each(used.units()),
                    );
                }
                println!();
            }
        }
    }
    Ok(())
}
