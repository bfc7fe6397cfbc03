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

use std::time::Duration;

use petstore_e2e::dynamo;
use petstore_e2e::history::{self, Mix};
use petstore_e2e::line::Line;
use petstore_e2e::stores::{Backend, Store};
use petstore_testkit::model::{self, IdOrder, Promise};

/// Requests the clients make in each run (the CI's: short).
const OPERATIONS: usize = 1500;

#[test]
fn histories_of_two_instances_and_24_clients_keep_every_promise() {
    for backend in [Backend::Dynamo, Backend::Redis] {
        let store = Store::new(backend);
        let local = dynamo::local()
            .endpoint
            .trim_start_matches("http://")
            .to_string();
        let line = Line::start(&local, Duration::from_millis(5)).expect("the line");
        let a = store.start();
        let b = match backend {
            Backend::Dynamo => store
                .launch()
                .env("AWS_ENDPOINT_URL", line.endpoint())
                .start(),
            _ => store.start(),
        };
        let mix = Mix {
            clients: 24,
            operations: OPERATIONS,
            keys: 6,
        };
        let run = history::run(&[a.api.clone(), b.api.clone()], mix);
        let promise = Promise {
            ids: match store.layout {
                "lanes" => IdOrder::Within(127),
                _ => IdOrder::Above,
            },
            corrupt: false,
            faults: false,
        };
        let path =
            petstore_e2e::workspace().join(format!("target/histories/{}.jsonl", backend.name()));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        run.history
            .write(&mut std::fs::File::create(&path).unwrap())
            .unwrap();
        let violations = model::check(&run.history, &promise);
        eprintln!(
            "{backend:?} ({}): {} requests by 24 clients, {} finishing the run, checked by the model: {} violations; {}",
            store.layout,
            run.mixed,
            run.finishing,
            violations.len(),
            path.strip_prefix(petstore_e2e::workspace()).unwrap_or(&path).display()
        );
        let shown: Vec<String> = violations.iter().take(5).map(|v| v.to_string()).collect();
        assert!(violations.is_empty(), "{backend:?}: {shown:#?}");
    }
}
