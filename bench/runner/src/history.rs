//! Histories judged by the model, long: the end-to-end suite's client mix
//! (`petstore_e2e::history`: creates, keyed creates on shared keys, getPets
//! of committed ids, walks that follow the end, health) through two
//! `spin up` instances of one store, on DynamoDB Local (lanes; the second
//! instance through the delay line, `--dynamo-rtt-ms`, 10 by default) and
//! on Redis (counters); every request timed, the history written to
//! `target/histories/bench-*.jsonl` and judged by the model of what the
//! service promises (docs/decisions.md).

use anyhow::{bail, Result};
use petstore_e2e::history::{self, Mix};
use petstore_e2e::stores::Backend;

use crate::options::Options;

pub fn run(o: &Options) -> Result<()> {
    println!(
        "## Histories judged by the model: {} requests by {} clients a store\n",
        o.operations, o.clients
    );
    println!("| store | requests by the clients | finishing the run | seconds | violations |");
    println!("|---|---:|---:|---:|---:|");
    let rtt = if o.dynamo_rtt_ms > 0.0 {
        o.dynamo_rtt_ms
    } else {
        10.0
    };
    let mut broken = 0;
    for backend in [Backend::Dynamo, Backend::Redis] {
        let mix = Mix {
            clients: o.clients,
            operations: o.operations,
            keys: 8,
        };
        let name = format!("bench-{}", backend.name());
        let judged = history::on_spin(backend, mix, (rtt / 2.0) as u64, &name);
        let store = match backend {
            Backend::Dynamo => format!("DynamoDB Local, lanes (one instance {rtt} ms a call away)"),
            _ => format!("Redis, {}", judged.layout),
        };
        println!(
            "| {store} | {} | {} | {:.0} | {} |",
            judged.run.mixed,
            judged.run.finishing,
            judged.seconds,
            judged.violations.len()
        );
        for v in judged.violations.iter().take(5) {
            eprintln!("{}: {v}", judged.path);
        }
        broken += judged.violations.len();
    }
    if broken > 0 {
        bail!("{broken} violations of the promises");
    }
    Ok(())
}
