//! `petstore-bench`: the release component on real `spin up`, on Spin's
//! key-value backends (a SQLite file on disk, a `redis-server` on loopback),
//! each operation beside a floor component (`bench/floor`) served by the
//! same Spin process on the same store, so that ours ÷ floor is our own cost.
//!
//! Per backend and catalogue size: preload N pets; per operation, read the
//! key-value calls of `--counted` requests from Spin's access log and the
//! keys they added from the store, then measure latency with clients that
//! alternate, request by request, ours and the floor's doing the same number
//! of plain `get`s with the same body size — or, for createPet, the least any
//! create does (1 `increment` + 1 new-key `set`), on 1 and 4 keep-alive
//! connections.
//!
//! ```text
//! cargo run --release -p petstore-bench -- --backends sqlite,redis --pets 1000,10000,100000
//! ```

mod capacity;
mod creates;
mod edge;
mod edge_costs;
mod engine;
mod history;
mod load;
mod measure;
mod moving;
mod operations;
mod options;
mod pages;
mod report;
mod scale;
mod setup;
mod throughput;
mod walks;

use anyhow::Result;
use options::{Mode, Options};
use setup::Serving;

fn main() -> Result<()> {
    let o = options::parse()?;
    let sizes = setup::build()?;
    let serving = setup::Serving {
        api_key: setup::api_key(&o.key_form),
        dynamo_rtt_ms: o.dynamo_rtt_ms,
    };
    if o.dynamo_rtt_ms > 0.0 {
        println!(
            "DynamoDB Local behind a delay line: +{} ms per call\n",
            o.dynamo_rtt_ms
        );
    }
    match o.mode {
        Mode::Tables => tables(&o, &sizes, &serving),
        Mode::Throughput => throughput::run(&o, &serving),
        Mode::Pages => pages::run(&o, &serving),
        Mode::Scale => scale::run(&o, &serving),
        Mode::Edge => edge::run(&o, &serving),
        Mode::EdgeBuild => edge::edge_build(&o, &serving),
        Mode::EdgeScale => edge::edge_scale(&o, &serving),
        Mode::EdgeCosts => edge_costs::run(&o, &serving),
        Mode::Creates => creates::run(&o, &serving),
        Mode::Walks => walks::run(&o, &serving),
        Mode::Move => moving::run(&o, &serving),
        Mode::History => history::run(&o),
        Mode::Capacity => capacity::run(&o),
        Mode::Engine => engine::run(&o),
    }
}

fn tables(o: &Options, sizes: &[(&str, u64)], serving: &Serving) -> Result<()> {
    println!("`api_key` holds the key as: {}\n", o.key_form);
    report::sizes(sizes);
    for &backend in &o.backends {
        report::table_head(backend.name(), &o.connections);
        for &pets in &o.pets {
            let deployment = setup::Deployment::new(backend, pets, serving);
            let chosen = operations::all(pets)
                .into_iter()
                .filter(|op| o.only.is_empty() || o.only.iter().any(|n| op.name.contains(n)));
            for op in chosen {
                let cost = measure::count(&deployment, &op, o.counted)?;
                let comparisons = o
                    .connections
                    .iter()
                    .map(|&c| measure::compare(&deployment, &op, &cost, c, o.seconds))
                    .collect::<Result<Vec<_>>>()?;
                report::row(pets, &op, &cost, &comparisons);
            }
            report::largest(pets, deployment.largest_value());
        }
    }
    report::floor_note();
    Ok(())
}
