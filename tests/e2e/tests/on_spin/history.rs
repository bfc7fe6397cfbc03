//! Histories of real `spin up`, judged by the model of what the service
//! promises (`petstore_testkit::model`, the explorer's judge): two
//! instances of one store, 24 clients mixing creates, keyed creates on
//! six repeated keys, getPets of committed ids, walks that follow the
//! list's end and health, each request timed; on DynamoDB Local (lanes),
//! one instance reaching it through a line 10 ms a call away, as a store
//! in another zone is (the window in which another request's calls land
//! between two of one request's), and on Redis (counters). The history is written to
//! `target/histories/` and checked after the run. The bench runs the same
//! mix longer (`--mode history`, BENCHMARKS.md).

use petstore_e2e::history::{self, Mix};
use petstore_e2e::stores::Backend;

/// Requests the clients make in each run (the CI's: short).
const OPERATIONS: usize = 1500;

#[test]
fn histories_of_two_instances_and_24_clients_keep_every_promise() {
    for backend in [Backend::Dynamo, Backend::Redis] {
        let mix = Mix {
            clients: 24,
            operations: OPERATIONS,
            keys: 6,
        };
        let judged = history::on_spin(backend, mix, 5, backend.name());
        eprintln!(
            "{backend:?} ({}): {} requests by 24 clients, {} finishing the run, checked by the model: {} violations; {}",
            judged.layout,
            judged.run.mixed,
            judged.run.finishing,
            judged.violations.len(),
            judged.path
        );
        let shown: Vec<String> = judged
            .violations
            .iter()
            .take(5)
            .map(|v| v.to_string())
            .collect();
        assert!(judged.violations.is_empty(), "{backend:?}: {shown:#?}");
    }
}
