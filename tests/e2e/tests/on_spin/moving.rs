//! Moving a DynamoDB store written in the counters layout to lanes, on real
//! `spin up`, as an operator does it: a rolling restart of two instances
//! with `catalogue_layout = lanes`, while 64 clients create (each with an
//! `Idempotency-Key`, retrying as the answers tell them) and walks of the
//! unfiltered list and of a status run; the store's network, behind a line
//! 1 ms away, is cut for 2 s just as the first instance that asks for lanes
//! comes up, so the move runs into the cut and resumes. Every acknowledged
//! create is one pet, listed once; no id is given twice; every walk lists
//! every pet committed before it began.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use petstore_e2e::client::{Api, STATUSES};
use petstore_e2e::dynamo;
use petstore_e2e::line::Line;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};
use petstore_testkit::Reader;
use serde_json::Value;

use crate::concurrency::status_of;

const PRELOADED: usize = 1_000;

/// Instances clients and walkers send to, round robin; one is retired only
/// once no request to it is in flight.
#[derive(Default)]
struct Pool {
    instances: Mutex<Vec<(usize, Api, Arc<AtomicUsize>)>>,
    turn: AtomicUsize,
}

impl Pool {
    fn add(&self, name: usize, api: Api) {
        let entry = (name, api, Arc::new(AtomicUsize::new(0)));
        self.instances.lock().unwrap().push(entry);
    }

    fn call<T>(&self, request: impl FnOnce(&Api) -> T) -> T {
        let (api, in_flight) = {
            let instances = self.instances.lock().unwrap();
            let at = self.turn.fetch_add(1, Ordering::SeqCst) % instances.len();
            let (_, api, in_flight) = &instances[at];
            in_flight.fetch_add(1, Ordering::SeqCst);
            (api.clone(), in_flight.clone())
        };
        let answer = request(&api);
        in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }

    /// Takes `name` out of the rotation, and returns once its last request
    /// was answered.
    fn retire(&self, name: usize) {
        let in_flight = {
            let mut instances = self.instances.lock().unwrap();
            let at = instances.iter().position(|(n, _, _)| *n == name).unwrap();
            instances.remove(at).2
        };
        while in_flight.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
    }
}

/// A reader that asks again when a page answers 503 (the store's network
/// is cut), as a client honouring `Retry-After` would, soon.
impl Reader for Pool {
    fn read(&self, target: &str) -> (u16, Value, Option<String>) {
        loop {
            let (status, body, next) = self.call(|api| api.read(target));
            if status != 503 {
                return (status, body, next);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Pets acknowledged so far: key → (id, status).
type Acknowledged = Arc<Mutex<BTreeMap<String, (i64, String)>>>;

#[test]
fn a_store_moves_to_lanes_under_64_clients_and_walks_through_a_cut_network() {
    let store = Store::with_layout(Backend::Dynamo, "counters");
    store.preload(PRELOADED, status_of);
    let local = dynamo::local()
        .endpoint
        .trim_start_matches("http://")
        .to_string();
    let line = Line::start(&local, Duration::from_millis(1)).expect("the line");
    let start = |layout: &str| -> SpinUp {
        store
            .launch()
            .variable("catalogue_layout", layout)
            .variable("idempotency_lease_ms", "1000")
            .env("AWS_ENDPOINT_URL", line.endpoint())
            .start()
    };
    let pool = Arc::new(Pool::default());
    let mut instances: BTreeMap<usize, SpinUp> = BTreeMap::new();
    for name in [0, 1] {
        let spin = start("counters");
        pool.add(name, spin.api.clone());
        instances.insert(name, spin);
    }
    let acknowledged: Acknowledged = Arc::default();
    let preloaded: BTreeMap<i64, String> = (1..=PRELOADED)
        .map(|n| (n as i64, status_of(n).as_str().to_string()))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..64)
        .map(|t| {
            let (pool, acknowledged, stop) = (pool.clone(), acknowledged.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let key = format!("m{t}-{i}");
                    let status = STATUSES[(t + i) % 3];
                    let id = create_once(&pool, &key, status);
                    acknowledged
                        .lock()
                        .unwrap()
                        .insert(key, (id, status.to_string()));
                    i += 1;
                }
            })
        })
        .collect();
    let walkers: Vec<_> = [None, Some("sold")]
        .into_iter()
        .map(|status| {
            let (pool, acknowledged, stop) = (pool.clone(), acknowledged.clone(), stop.clone());
            let preloaded = preloaded.clone();
            std::thread::spawn(move || {
                let mut walks = 0;
                while !stop.load(Ordering::SeqCst) {
                    let before = committed(&preloaded, &acknowledged, status);
                    let path = match status {
                        None => "/v1/pets?limit=100".to_string(),
                        Some(s) => format!("/v1/pets?limit=100&status={s}"),
                    };
                    let ids = petstore_testkit::walk(&*pool, &path);
                    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
                    assert_eq!(distinct.len(), ids.len(), "{path}: a pet listed twice");
                    let missing: Vec<_> = before.difference(&distinct).take(5).collect();
                    assert!(
                        missing.is_empty(),
                        "{path}: committed before, not listed: {missing:?}"
                    );
                    walks += 1;
                }
                walks
            })
        })
        .collect();
    // The rolling restart, step by step as creates are acknowledged.
    let count = || acknowledged.lock().unwrap().len();
    let after = |n: usize| {
        while count() < n {
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    after(150);
    eprintln!("moving: 150 acknowledged on counters; the line is cut");
    line.cut();
    for (old, new) in [(1, 2), (0, 3)] {
        let spin = start("lanes");
        pool.add(new, spin.api.clone());
        instances.insert(new, spin);
        eprintln!("moving: instance {new} (lanes) up; retiring {old}");
        pool.retire(old);
        instances.remove(&old);
        eprintln!("moving: {old} retired");
        if old == 1 {
            std::thread::sleep(Duration::from_secs(2));
            line.restore();
        }
        after(count() + 150);
        eprintln!("moving: {} acknowledged", count());
    }
    after(count() + 150);
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.join().expect("a client");
    }
    let walks: Vec<usize> = walkers
        .into_iter()
        .map(|w| w.join().expect("a walker"))
        .collect();
    assert!(line.refused() > 0, "the cut was felt");
    // Every key: one pet, replayed as it was created; no id twice.
    let acknowledged = acknowledged.lock().unwrap().clone();
    let ids: BTreeSet<i64> = acknowledged.values().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), acknowledged.len(), "an id given to two keys");
    for (key, (id, status)) in acknowledged.iter().step_by(7) {
        let replay = pool.call(|api| api.post_keyed(key, &body(key, status)));
        assert_eq!(
            (replay.created_id(), replay.header("idempotent-replayed")),
            (*id, Some("true"))
        );
    }
    let mut all: BTreeSet<i64> = preloaded.keys().copied().collect();
    all.extend(&ids);
    for spin in instances.values() {
        spin.api.assert_consistent(&all, PRELOADED as i64 + 1);
        let health = spin.api.send("GET", "/v1/health", None, &[], None).json();
        assert_eq!(health["layout"], "lanes", "{health}");
        assert!(
            health["move"]["ids_before"].as_i64().unwrap() > PRELOADED as i64,
            "{health}"
        );
    }
    let lanes_ids = ids.iter().filter(|id| **id > 1_100).count();
    assert!(lanes_ids >= 300, "creates went on in lanes: {lanes_ids}");
    println!(
        "moved under load: {} pets acknowledged ({lanes_ids} in lanes), walks {walks:?}, {} connections refused by the cut",
        acknowledged.len(),
        line.refused()
    );
}

fn body(key: &str, status: &str) -> String {
    format!(r#"{{"name":"{key}","categoryId":1,"status":"{status}"}}"#)
}

/// Creates the pet of `key` once: retried with the same key until a 201,
/// when no answer came in time, and after a 409 or a 503 as their
/// `Retry-After` says (a 503 `misconfigured` is an instance not restarted
/// yet: another answers the retry).
fn create_once(pool: &Pool, key: &str, status: &str) -> i64 {
    for _ in 0..200 {
        // No answer in time (the client's 30 s): ask again, with the key.
        let Ok(r) = pool.call(|api| api.try_post_keyed(key, &body(key, status))) else {
            continue;
        };
        match r.status {
            201 => return r.created_id(),
            409 | 503 => {
                let code = r.json()["code"].as_str().unwrap_or_default().to_string();
                assert!(
                    [
                        "idempotency_key_in_use",
                        "store_unavailable",
                        "misconfigured"
                    ]
                    .contains(&code.as_str()),
                    "{key}: {}",
                    r.body
                );
                let after: u64 = r
                    .header("retry-after")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(1);
                std::thread::sleep(Duration::from_millis(100 * after));
            }
            other => panic!("{key}: {other} {}", r.body),
        }
    }
    panic!("{key}: no 201 after 200 tries");
}

/// The ids committed so far (of `status`, if given).
fn committed(
    preloaded: &BTreeMap<i64, String>,
    acknowledged: &Acknowledged,
    status: Option<&str>,
) -> BTreeSet<i64> {
    let made = acknowledged.lock().unwrap();
    let ours = made.values().map(|(id, s)| (id, s));
    preloaded
        .iter()
        .chain(ours)
        .filter(|(_, s)| status.is_none_or(|want| s.as_str() == want))
        .map(|(id, _)| *id)
        .collect()
}
