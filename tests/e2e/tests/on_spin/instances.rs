//! Several `spin up` processes on one store, as replicas of a deployment:
//! on each backend that replicas can share (Redis, a DynamoDB table), two
//! instances hand out distinct ids to 400 creates from 24 clients, all 201,
//! and each lists every pet once, in its status's walk too.

use std::collections::BTreeSet;

use petstore_e2e::stores::{Backend, Store};

use crate::concurrency::{create_in_parallel, status_of};

#[test]
fn two_instances_on_one_store_share_one_catalogue() {
    for backend in [Backend::Redis, Backend::Dynamo] {
        let store = Store::new(backend);
        store.preload(1_000, status_of);
        let (a, b) = (store.start(), store.start());
        let apis = [a.api.clone(), b.api.clone()];
        // 24 clients, every other create on the other instance: on DynamoDB
        // their increments conflict, across instances too, and are retried.
        let ids = create_in_parallel(&apis, 24, 400);
        assert_eq!(ids.len(), 400, "{backend:?}");
        let mut expected: BTreeSet<i64> = (1..=1_000).collect();
        expected.extend(ids);
        for api in &apis {
            api.assert_consistent(&expected, 1_001);
        }
    }
}

/// Why SQLite is not among them, measured (not run by `scripts/test`:
/// `cargo test -p petstore-e2e --test on_spin sqlite_file -- --ignored
/// --nocapture`): while 16 clients keep one process writing the file, a
/// second process started beside it gets 16 creates at once, `ROUNDS` times
/// (default 50). SQLite's lock is not fair between processes: the second
/// one's calls wait out busy timeouts (rusqlite's 5 s), and a create past
/// its commit window answers 503 having changed nothing. Asserted: every
/// create is a 201 or such a 503, and the list shows exactly the 201s.
/// Printed: how long the second process's creates took.
#[test]
#[ignore = "a measurement of SQLite's locking, minutes long"]
fn a_sqlite_file_written_by_two_processes_starves_one_of_them() {
    use petstore_e2e::client::{fan_out, pet_body};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let store = Store::new(Backend::Sqlite);
    let busy = store.start();
    let made = Arc::new(Mutex::new(BTreeSet::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..16)
        .map(|t| {
            let (api, stop, made) = (busy.api.clone(), stop.clone(), made.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let r = api.post(&pet_body(&format!("w{t}-{n}"), "sold"));
                    if r.status == 201 {
                        made.lock().unwrap().insert(r.created_id());
                    }
                    n += 1;
                }
            })
        })
        .collect();
    let (mut refused, mut took) = (0, Vec::new());
    for round in 0..rounds {
        let second = store.start();
        let (api, made_c) = (second.api.clone(), made.clone());
        let statuses = fan_out(16, 16, move |i| {
            let r = api.post(&pet_body(&format!("s{round}-{i}"), "sold"));
            match r.status {
                201 => {
                    made_c.lock().unwrap().insert(r.created_id());
                }
                503 => assert_eq!(r.json()["code"], "store_unavailable", "{}", r.body),
                other => panic!("a create answered {other}: {}", r.body),
            }
            r.status
        });
        refused += statuses.iter().filter(|s| **s == 503).count();
        took.extend(
            second
                .log_lines()
                .iter()
                .filter_map(|line| line["duration_ms"].as_f64()),
        );
    }
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.join().expect("a writer");
    }
    let made = made.lock().unwrap().clone();
    let shown: BTreeSet<i64> = busy.api.walk("/v1/pets?limit=100").into_iter().collect();
    assert_eq!(shown, made, "the list shows exactly the 201s");
    took.sort_by(f64::total_cmp);
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize] / 1000.0;
    eprintln!(
        "{} creates on the second process: {refused} answered 503; took p50 {:.1} s, \
         p90 {:.1} s, p99 {:.1} s, max {:.1} s; {} over 5 s",
        took.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        took.iter().filter(|ms| **ms > 5000.0).count()
    );
}
