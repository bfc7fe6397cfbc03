//! The edge module itself (`petstore_edge.wasm`, `scripts/build-edge`) in
//! the test host on a store replicated as Akamai Functions' is: 3
//! replicas, each request served by the next in turn, each write reaching
//! the others 0 to 3 s later on the clock the component reads, no atomics.
//! What real `spin up` cannot show (it has one store): no acknowledged pet
//! lost to replication, every walk exact once the store settled, getPet
//! and keyed retries across replicas as docs/decisions.md says.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use petstore_e2e::client::{distinct_ids, fan_out, pet_body, Api, KEY};
use petstore_e2e::spin::build_edge;
use petstore_e2e::workspace;
use petstore_host::component::{self, Loaded};
use petstore_host::kv::KvStore;
use petstore_host::serve::{self, Host, Output};
use petstore_testkit::replicated::Replicated;

/// The instances' `replication_ms`: each write's delay is drawn up to it
/// (longer than the create's 1 s window, so a page that waited only for
/// the window would list pets other replicas do not hold yet).
const REPLICATION_MS: u64 = 3_000;
/// Past the horizon: the create's window (1 s) and `replication_ms`.
const SETTLE_MS: u64 = 1_000 + REPLICATION_MS + 1;

fn edge() -> Arc<Loaded> {
    static LOADED: OnceLock<Arc<Loaded>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            build_edge();
            let variables = HashMap::from([
                ("api_key".to_string(), KEY.to_string()),
                ("replication_ms".to_string(), REPLICATION_MS.to_string()),
                ("clock_skew_ms".to_string(), "0".to_string()),
                ("piece_interval_ms".to_string(), "0".to_string()),
            ]);
            component::load_app(&workspace().join("spin-edge.toml"), &variables)
                .expect("load the edge module")
        })
        .clone()
}

/// The edge module on 3 replicas whose delays are drawn from `delays`.
fn serve(delays: std::ops::RangeInclusive<u64>, seed: u64) -> (Api, Arc<Host>) {
    let set = Replicated::new(3, delays, seed);
    let log = Arc::new(Mutex::new(Vec::new()));
    let host = Host::new(edge(), KvStore::replicated(set), Output::Capture(log));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let bound = serve::spawn(host.clone(), addr, 2).expect("serve");
    (Api::new(format!("http://{bound}")), host)
}

#[test]
fn the_edge_module_imports_no_atomics_and_loses_nothing_on_three_replicas() {
    let imports = edge().imports();
    assert!(
        imports.iter().any(|i| i.starts_with("wasi:keyvalue/store")),
        "{imports:?}"
    );
    assert!(
        !imports.iter().any(|i| i.contains("atomics")),
        "{imports:?}"
    );
    let (api, host) = serve(0..=REPLICATION_MS, 3);
    let url = api.base.clone();
    // 32 creators at once, 4 creates each, through the replicas in turn;
    // a walk through each replica while they create lists no pet twice.
    let statuses = ["available", "pending", "sold"];
    let created = fan_out(32, 128, move |i| {
        let api = Api::new(url.clone());
        let id = api.create(&format!("c{i}"), statuses[i % 3]);
        let seen = api.walk("/v1/pets?limit=7");
        distinct_ids(seen);
        id
    });
    let ids = distinct_ids(created);
    host.advance_clock(SETTLE_MS);
    // Settled: every replica lists every pet once, and each status its own.
    for _replica in 0..3 {
        let walked = api.walk("/v1/pets?limit=9");
        assert_eq!(distinct_ids(walked), ids);
    }
    for status in statuses {
        let walked: BTreeSet<i64> = distinct_ids(api.walk(&format!("/v1/pets?status={status}")));
        assert_eq!(
            walked.len(),
            128 / 3 + usize::from(status != "sold"),
            "{status}"
        );
        assert!(walked.is_subset(&ids));
    }
    // And every replica finds every pet.
    for id in &ids {
        for _replica in 0..3 {
            assert_eq!(api.get(&format!("/v1/pets/{id}")).status, 200, "{id}");
        }
    }
}

#[test]
fn across_replicas_getpet_finds_a_pet_once_it_replicated_and_a_keyed_retry_may_make_a_second() {
    // Every write takes 500 ms to reach another replica.
    let (api, host) = serve(500..=500, 5);
    // Requests go to replicas 0, 1, 2, 0, …: the create on 0, getPet on 1.
    let id = api.create("Rex", "sold");
    assert_eq!(
        api.get(&format!("/v1/pets/{id}")).status,
        404,
        "not on replica 1 yet"
    );
    assert_eq!(api.get(&format!("/v1/pets/{id}")).status, 404, "nor on 2");
    assert_eq!(
        api.get(&format!("/v1/pets/{id}")).status,
        200,
        "its own replica"
    );
    host.advance_clock(500);
    for _replica in 0..3 {
        assert_eq!(api.get(&format!("/v1/pets/{id}")).status, 200);
    }
    // A keyed create on replica 1, its retry on replica 2 before the
    // record reached it: a second pet. Once both records replicated, every
    // replay answers the one kept.
    let body = pet_body("Tom", "pending");
    let first = api.post_keyed("k-1", &body);
    let retry = api.post_keyed("k-1", &body);
    assert_eq!((first.status, retry.status), (201, 201));
    assert_ne!(
        first.created_id(),
        retry.created_id(),
        "beyond the replica's reach"
    );
    host.advance_clock(SETTLE_MS);
    let replays: BTreeSet<i64> = (0..3)
        .map(|_| {
            let r = api.post_keyed("k-1", &body);
            assert_eq!(r.header("idempotent-replayed"), Some("true"));
            r.created_id()
        })
        .collect();
    assert_eq!(
        replays.len(),
        1,
        "every replica answers one pet: {replays:?}"
    );
    assert!([first.created_id(), retry.created_id()].contains(replays.first().unwrap()));
}

/// A follower polling through each replica in turn while pets are created
/// in rounds, the clock moved past the create's window (1.5 s) but not
/// past the replication delay between rounds: it sees each pet once, none
/// before every replica holds it (a page that waited only for the window
/// would pass pets still on their way, and the follower would miss them).
#[test]
fn a_follower_through_the_replicas_in_turn_sees_each_pet_once_while_writes_replicate_late() {
    let (api, host) = serve(0..=REPLICATION_MS, 11);
    let mut follower = Follower::new();
    let mut ids = Vec::new();
    for round in 0..4 {
        for i in 0..30 {
            ids.push(api.create(&format!("r{round}-{i}"), "available"));
        }
        host.advance_clock(1_500);
        for _replica in 0..3 {
            follower.poll(&api);
        }
    }
    host.advance_clock(SETTLE_MS);
    for _replica in 0..3 {
        follower.poll(&api);
    }
    assert_eq!(
        distinct_ids(follower.seen),
        distinct_ids(ids),
        "the follower saw each pet once"
    );
}

/// A client that keeps a copy: it follows the `next` links from where it
/// stopped to the empty page, and from that page's request next time.
struct Follower {
    target: String,
    seen: Vec<i64>,
}

impl Follower {
    fn new() -> Follower {
        Follower {
            target: "/v1/pets?limit=5".into(),
            seen: Vec::new(),
        }
    }

    fn poll(&mut self, api: &Api) {
        loop {
            let page = api.get(&self.target);
            assert_eq!(page.status, 200, "{}", page.body);
            self.seen.extend(page.ids());
            match page.next_link() {
                Some(next) => self.target = next,
                None => return,
            }
        }
    }
}
