//! A store a network away, on real Spin over DynamoDB Local behind a line
//! that delays every call and can be cut: two instances on one table (a new
//! one, of the lanes layout), walks while 64 clients create,
//! and the store's network cut for 2 s, twice, while 64 clients create. No
//! acknowledged create is lost, no pet is listed twice, and the same Spin
//! processes are healthy afterwards.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use petstore_e2e::client::{Api, STATUSES};
use petstore_e2e::dynamo;
use petstore_e2e::line::Line;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};

use crate::walks::{creates_beside_walks, Committed};

/// Two instances on `store`'s table, each reaching DynamoDB Local through
/// `line`.
fn two_instances_through(store: &Store, line: &Line) -> [SpinUp; 2] {
    [(); 2].map(|_| {
        store
            .launch()
            .env("AWS_ENDPOINT_URL", line.endpoint())
            .start()
    })
}

fn line(one_way_ms: u64) -> Line {
    let local = dynamo::local()
        .endpoint
        .trim_start_matches("http://")
        .to_string();
    Line::start(&local, Duration::from_millis(one_way_ms)).expect("the line")
}

#[test]
fn walks_on_two_instances_while_64_clients_create_list_every_earlier_pet_once() {
    let store = Store::new(Backend::Dynamo);
    let line = line(1);
    let spins = two_instances_through(&store, &line);
    let apis: Vec<Api> = spins.iter().map(|s| s.api.clone()).collect();
    let committed: Committed = Arc::default();
    let walks = [None, Some("sold"), Some("pending"), None];
    creates_beside_walks(&apis, &committed, (64, 4, "e"), (&walks, 3));
    let all: BTreeSet<i64> = committed.lock().unwrap().keys().copied().collect();
    assert_eq!(all.len(), 64 * 4);
    assert_eq!(all, store.handed_out_ids(), "no hole");
    for api in &apis {
        api.assert_consistent(&all, 1);
    }
}

#[test]
fn the_stores_network_cut_twice_under_64_clients_loses_no_acknowledged_create() {
    let store = Store::new(Backend::Dynamo);
    let line = line(1);
    let spins = two_instances_through(&store, &line);
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let answers = Arc::new(Mutex::new(Vec::new()));
    // The names of creates answered 503 "nothing was changed".
    let unchanged = Arc::new(Mutex::new(BTreeSet::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..64)
        .map(|t| {
            let api = spins[t % 2].api.clone();
            let (acknowledged, answers, unchanged, stop) = (
                acknowledged.clone(),
                answers.clone(),
                unchanged.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let name = format!("cut{t}-{i}");
                    let body = format!(
                        r#"{{"name":"{name}","categoryId":1,"status":"{}"}}"#,
                        STATUSES[(t + i) % 3]
                    );
                    let sent = std::time::Instant::now();
                    let r = api.post(&body);
                    let took = sent.elapsed();
                    if r.status == 201 {
                        acknowledged.lock().unwrap().insert(r.created_id());
                    } else {
                        r.assert_error(503, "store_unavailable");
                        if r.json()["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("nothing was changed"))
                        {
                            unchanged.lock().unwrap().insert(name);
                        }
                    }
                    answers.lock().unwrap().push((r.status, took));
                    i += 1;
                }
            })
        })
        .collect();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(1_500));
        line.cut();
        std::thread::sleep(Duration::from_secs(2));
        line.restore();
    }
    std::thread::sleep(Duration::from_millis(1_500));
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().expect("a client");
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let answers = answers.lock().unwrap();
    let unavailable = answers.iter().filter(|(s, _)| *s == 503).count();
    let longest = answers
        .iter()
        .map(|(_, took)| *took)
        .max()
        .unwrap_or_default();
    println!(
        "network cut twice: {} creates answered, {} of them 201, {unavailable} 503; \
         the longest took {longest:?}",
        answers.len(),
        acknowledged.len()
    );
    // The store's callers met the cut: Spin's connections were refused.
    assert!(line.refused() > 0, "the cut was felt");
    assert!(
        acknowledged.len() > 16,
        "creates went on: {}",
        acknowledged.len()
    );
    // The same processes answer their probe, and every acknowledged pet is
    // there, listed once, in its status's walk too; a create answered 503
    // may or may not have made its pet, and its message says which: none
    // that said "nothing was changed" made one.
    for spin in &spins {
        let health = spin.api.send("GET", "/v1/health", None, &[], None);
        assert_eq!(health.status, 200, "{}", health.body);
    }
    let listed: BTreeSet<i64> = spins[0]
        .api
        .walk("/v1/pets?limit=100")
        .into_iter()
        .collect();
    let lost: Vec<_> = acknowledged.difference(&listed).collect();
    assert!(lost.is_empty(), "acknowledged, not listed: {lost:?}");
    let unchanged = unchanged.lock().unwrap().clone();
    let made: Vec<String> = spins[0]
        .api
        .walk_pets("/v1/pets?limit=100")
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .filter(|name| unchanged.contains(name))
        .collect();
    assert!(
        made.is_empty(),
        "answered 503 'nothing was changed', yet stored: {made:?}"
    );
    println!(
        "{} creates answered 503 'nothing was changed'; none stored",
        unchanged.len()
    );
    spins[1].api.assert_consistent(&listed, 1);
}
