//! The edge build (`spin-edge.toml`: the replicated layout, no atomics) on
//! real `spin up`, two instances on one store, SQLite and DynamoDB Local,
//! with no replication (`replication_ms` and `clock_skew_ms` 0): the
//! contract as docs/decisions.md ("The replicated layout") states it for
//! this layout. What differs from the default build's suites, and why: ids
//! are random, not 1, 2, 3; lists are by creation time, not by id; a pet is
//! listed once its creation is 1 s old (the create's commit window), not at
//! once. The rest is the same: errors, auth, getPet at once, keyed replays,
//! walks that show every pet once, what is stored.

use std::collections::BTreeSet;
use std::time::Duration;

use petstore_e2e::client::{distinct_ids, fan_out, pet_body};
use petstore_e2e::meter::Meter;
use petstore_e2e::registry::{release_version, Registry};
use petstore_e2e::spin::{build_edge, Launch, SpinUp};
use petstore_e2e::stores::{Backend, Store};
use petstore_e2e::workspace;
use petstore_testkit::model::landed_late_pet;

/// A pet is listed once this much older than its create (the commit
/// window, 1 s, with no replication and no skew), and a little more.
pub const SETTLE: Duration = Duration::from_millis(1_300);

fn edge(store: &Store) -> SpinUp {
    edge_launch(store).start()
}

/// The edge build on `store`, with no replication, not started yet.
pub fn edge_launch(store: &Store) -> Launch {
    build_edge();
    store
        .launch_release(&workspace().join("spin-edge.toml"))
        .variable("replication_ms", "0")
        .variable("clock_skew_ms", "0")
        .variable("piece_interval_ms", "0")
}

#[test]
fn the_edge_build_serves_the_contract_through_two_instances_on_one_store() {
    for backend in [Backend::Sqlite, Backend::Dynamo] {
        let store = Store::new(backend);
        let (a, b) = (edge(&store), edge(&store));
        let health = a.api.get("/v1/health");
        assert_eq!(
            health.json(),
            serde_json::json!({"status":"ok","layout":"replicated"}),
            "{backend:?}"
        );
        // Creates through both: random ids within 2^53, each answered as sent.
        let r = a
            .api
            .post(r#"{"name":"Rex","categoryId":7,"status":"sold","id":42}"#);
        let rex = r.created_id();
        assert!((1..1i64 << 53).contains(&rex) && rex != 42, "{rex}");
        assert_eq!(
            r.json(),
            serde_json::json!({"id":rex,"name":"Rex","categoryId":7,"status":"sold"})
        );
        assert_eq!(
            r.header("location"),
            Some(format!("/v1/pets/{rex}").as_str())
        );
        let tom = b.api.post(r#"{"name":"Tom","categoryId":1}"#);
        assert_eq!(tom.json()["status"], "available", "default status");
        // getPet at once, through either instance.
        for s in [&a.api, &b.api] {
            let g = s.get(&format!("/v1/pets/{rex}"));
            assert_eq!((g.status, g.body.as_str()), (200, r.body.as_str()));
        }
        // Listed once a second old, in creation order, by status too.
        std::thread::sleep(SETTLE);
        let tom = tom.created_id();
        assert_eq!(a.api.get("/v1/pets").ids(), vec![rex, tom]);
        assert_eq!(b.api.get("/v1/pets?status=available").ids(), vec![tom]);
        assert_eq!(b.api.get("/v1/pets?status=pending").body, "[]");
        // What is stored: the pet and its entry, and the store's mark.
        let direct = store.direct();
        let stored = direct.peek(&format!("pet:{rex}")).expect("pet stored");
        assert!(stored.ends_with(r.body.as_bytes()));
        assert_eq!(
            direct.peek("ctr:id").as_deref(),
            Some(&b"petstore-replicated 1"[..])
        );
        // Errors store nothing.
        let before = direct.list_keys().unwrap().len();
        a.api
            .post(r#"{"name":"","categoryId":1}"#)
            .assert_error(400, "invalid_body");
        a.api
            .get("/v1/pets?limit=0")
            .assert_error(400, "invalid_parameter");
        a.api
            .get("/v1/pets?cursor=zz")
            .assert_error(400, "invalid_parameter");
        a.api.get("/v1/pets/0").assert_error(404, "not_found");
        let unauthorized = a.api.send("GET", "/v1/pets", None, &[], None);
        unauthorized.assert_error(401, "unauthorized");
        assert_eq!(direct.list_keys().unwrap().len(), before, "{backend:?}");
        // A keyed create, retried through the other instance: one pet.
        let first = a.api.post_keyed("edge-key", &pet_body("Kit", "pending"));
        let again = b.api.post_keyed("edge-key", &pet_body("Kit", "pending"));
        assert_eq!((first.status, again.status), (201, 201));
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(again.body, first.body);
    }
}

#[test]
fn concurrent_creates_through_two_instances_are_each_listed_once() {
    for backend in [Backend::Sqlite, Backend::Dynamo] {
        let store = Store::new(backend);
        let (a, b) = (edge(&store), edge(&store));
        let apis = [a.api.clone(), b.api.clone()];
        // A create whose write landed past its window (as one may on a
        // loaded machine) answers 503 naming its pet, which is stored and
        // listed by walks begun after it settled: its id counts. Any other
        // answer but a 201 fails.
        let ids = fan_out(16, 160, move |i| {
            let status = ["available", "pending", "sold"][i % 3];
            let r = apis[i % 2].post(&pet_body(&format!("p{i}"), status));
            match r.status {
                503 => landed_late_pet(r.json()["message"].as_str().unwrap_or_default())
                    .unwrap_or_else(|| panic!("{}", r.body)),
                _ => r.created_id(),
            }
        });
        let made = distinct_ids(ids);
        std::thread::sleep(SETTLE);
        for s in [&a.api, &b.api] {
            let walk = s.walk("/v1/pets?limit=7");
            assert_eq!(walk.len(), made.len(), "{backend:?}: a pet twice");
            assert_eq!(walk.iter().copied().collect::<BTreeSet<_>>(), made);
            let by_status: usize = ["available", "pending", "sold"]
                .iter()
                .map(|st| s.walk(&format!("/v1/pets?limit=9&status={st}")).len())
                .sum();
            assert_eq!(by_status, made.len());
        }
    }
}

#[test]
fn the_default_build_refuses_a_store_the_edge_build_wrote() {
    let store = Store::new(Backend::Sqlite);
    let spin = edge(&store);
    spin.api.create("a", "sold");
    drop(spin);
    let default = store.start();
    let health = default.api.get("/v1/health");
    assert_eq!(health.status, 503);
    assert_eq!(
        store.direct().peek("ctr:id").as_deref(),
        Some(&b"petstore-replicated 1"[..])
    );
}

/// Shipped as the default build is: pushed with its own manifest to an OCI
/// registry (`spin registry push -f spin-edge.toml`), and served by `spin
/// up --from` it, the manifest's variables and all.
#[test]
fn the_edge_build_pushed_to_a_registry_serves_from_it() {
    build_edge();
    let registry = Registry::start();
    let reference = registry.push_manifest("spin-edge.toml", "petstore-edge", &release_version());
    let store = Store::new(Backend::Sqlite);
    let spin = store
        .launch_release(&workspace().join("spin-edge.toml"))
        .from_registry(&reference)
        .variable("replication_ms", "0")
        .variable("clock_skew_ms", "0")
        .variable("piece_interval_ms", "0")
        .start();
    let health = spin.api.get("/v1/health");
    assert_eq!(
        health.json(),
        serde_json::json!({"status":"ok","layout":"replicated"})
    );
    let id = spin.api.create("Rex", "sold");
    assert!((1..1i64 << 53).contains(&id), "{id}");
    let pet = spin.api.get(&format!("/v1/pets/{id}"));
    assert_eq!(
        (pet.status, pet.json()["name"].as_str()),
        (200, Some("Rex"))
    );
    std::thread::sleep(SETTLE);
    assert_eq!(spin.api.walk("/v1/pets?status=sold"), vec![id]);
    assert_eq!(
        store.direct().peek("ctr:id").as_deref(),
        Some(&b"petstore-replicated 1"[..]),
        "the edge build's mark: this is the edge module"
    );
}

/// On DynamoDB a page's `list-keys` is a `Scan` of the whole table, billed
/// as reads of every item it examines (the meter books it so): 20 pets are
/// 41 items (each pet and its entry, and the mark), scanned once, by the
/// first page, to make the list's index piece; the next page reads the
/// piece, no `Scan`.
#[test]
fn a_page_on_dynamodb_scans_the_store_only_to_make_index_pieces() {
    let store = Store::new(Backend::Dynamo);
    let local = petstore_e2e::dynamo::local().endpoint.clone();
    let meter = Meter::start(local.trim_start_matches("http://")).expect("the meter");
    let spin = edge_launch(&store)
        .env("AWS_ENDPOINT_URL", meter.endpoint())
        .start();
    for i in 0..20 {
        spin.api
            .post(&pet_body(&format!("p{i}"), "sold"))
            .created_id();
    }
    std::thread::sleep(SETTLE);
    meter.take();
    let page = spin.api.get("/v1/pets?limit=20");
    assert_eq!(page.ids().len(), 20, "{}", page.body);
    let used = meter.take();
    // The mark and pieces 0 and 1 (absent) in one get-many, one scan (a
    // table this small is one page of it), the open piece written, one
    // get-many of the page's 20 entries.
    assert_eq!(used.by_operation, [0, 2, 1, 0, 1], "{used:?}");
    assert_eq!(
        (used.items_read, used.items_found),
        (3 + 41 + 20, 1 + 41 + 20),
        "{used:?}"
    );
    assert!(used.write_units >= 1.0, "{used:?}");
    // Again: the piece, no scan, nothing written.
    let again = spin.api.get("/v1/pets?limit=20");
    assert_eq!(again.ids(), page.ids());
    let used = meter.take();
    assert_eq!(used.by_operation, [0, 2, 0, 0, 0], "{used:?}");
    assert_eq!(
        (used.items_read, used.items_found),
        (3 + 20, 2 + 20),
        "{used:?}"
    );
    assert_eq!(used.write_units, 0.0, "{used:?}");
}

/// A rolling upgrade from 2.0.0's edge build (built from `main`'s history)
/// and its rollback: both on one SQLite store, 420 pets created through
/// both (three index pieces), walks of the whole list and of `sold`, 100 a
/// page, alternating between them and begun on either: each lists every
/// pet once (2.0.0 ignores the piece a cursor names; this release reads
/// 2.0.0's cursors from the entries); 30 more, and the walks' ends followed
/// list those once; each pet is found through both.
#[test]
fn the_2_0_0_edge_build_and_this_one_share_a_store_and_its_walks() {
    let store = Store::new(Backend::Sqlite);
    let old = store
        .launch_release(&petstore_e2e::release::release_2_0_0_edge())
        .variable("replication_ms", "0")
        .variable("clock_skew_ms", "0")
        .start();
    let new = edge(&store);
    let both = [&old, &new];
    let create = |from: usize, to: usize| -> Vec<(i64, usize)> {
        (from..to)
            .map(|i| {
                let status = ["available", "pending", "sold"][i % 3];
                let id = both[i % 2]
                    .api
                    .post(&pet_body(&format!("p{i}"), status))
                    .created_id();
                (id, i % 3)
            })
            .collect()
    };
    let mut made = create(0, 420);
    std::thread::sleep(SETTLE);
    for (list, sold) in [
        ("/v1/pets?limit=100", false),
        ("/v1/pets?limit=100&status=sold", true),
    ] {
        for began in 0..2 {
            let expected = |made: &[(i64, usize)]| -> BTreeSet<i64> {
                made.iter()
                    .filter(|(_, s)| !sold || *s == 2)
                    .map(|(id, _)| *id)
                    .collect()
            };
            let (mut seen, mut target, mut turn) = (Vec::new(), list.to_string(), began);
            let mut walk_to_end = |seen: &mut Vec<i64>, target: &mut String| loop {
                let r = both[turn % 2].api.get(target);
                assert_eq!(r.status, 200, "{target}: {}", r.body);
                seen.extend(r.ids());
                turn += 1;
                match r.next_link() {
                    Some(next) => *target = next,
                    None => break,
                }
            };
            walk_to_end(&mut seen, &mut target);
            assert_eq!(
                seen.len(),
                expected(&made).len(),
                "{list} from {began}: a pet twice"
            );
            assert_eq!(
                seen.iter().copied().collect::<BTreeSet<_>>(),
                expected(&made)
            );
            if sold || began == 1 {
                continue;
            }
            made.extend(create(420, 450));
            std::thread::sleep(SETTLE);
            walk_to_end(&mut seen, &mut target);
            assert_eq!(seen.len(), expected(&made).len(), "followed: a pet twice");
            assert_eq!(
                seen.iter().copied().collect::<BTreeSet<_>>(),
                expected(&made)
            );
        }
    }
    let pieces = store.direct().peek("ixp:all:2").map(|p| p.len());
    assert!(pieces.is_some(), "this release made the pieces");
    // Each pet is found alike through either build, whichever wrote its
    // record: 2.0.0 reads this release's `+<t>` (its create's time) as the
    // nonce it wrote there.
    let direct = store.direct();
    let stamped = made.iter().filter(|(id, _)| {
        let record = direct.peek(&format!("pet:{id}")).unwrap_or_default();
        record.starts_with(b"petstore-pet 1 +")
    });
    assert_eq!(stamped.count(), made.len() / 2, "this release's records");
    for (id, _) in &made {
        let found = both.map(|i| i.api.get(&format!("/v1/pets/{id}")));
        assert_eq!((found[0].status, found[1].status), (200, 200), "{id}");
        assert_eq!(found[0].body, found[1].body);
    }
}
