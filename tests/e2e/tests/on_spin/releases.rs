//! Release 1.2.0 (built from the history of `main`) beside this one on real
//! `spin up`, on one DynamoDB table: during a rolling upgrade of a counters
//! store both write and both list everything; once this release moves the
//! store to lanes, 1.2.0 fails every create (its `increment` cannot parse
//! the lanes' mark in `ctr:id`) and stores nothing, and this release still
//! configured for counters answers 503 `misconfigured` to writes and says so
//! in `/v1/health`. An instance asked for lanes on SQLite fails its probe.
//! Release 1.3.0 and this one share a store of 16 lanes, which 1.3.0
//! claimed; 1.3.0 cannot write one of 32, which this release claims, nor
//! follow this release's lanes cursors, which 1.5.1 follows.
//! This release, pushed to an OCI registry as the deploy recipes pull it,
//! serves the API and its reference page from there.

use std::collections::BTreeSet;
use std::path::Path;

use petstore_e2e::registry::{release_version, Registry};
use petstore_e2e::release::{release_1_2_0, release_1_3_0, release_1_5_1};
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};

const PET: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

/// An earlier release on a store it cannot read: a create and a keyed
/// create answer 5xx and store no pet (1.2.0's keyed create makes the
/// key's word, by `increment` by 0, first), no id is taken beyond `ids`,
/// and its pages fail loudly rather than show a part.
fn writes_nothing(old: &SpinUp, release: &str, store: &Store, ids: &BTreeSet<i64>) {
    let keys = store.direct().key_count();
    let r = old.api.post(PET);
    assert!(
        r.status >= 500,
        "{release} answered {}: {}",
        r.status,
        r.body
    );
    let r = old.api.post_keyed("old-key", PET);
    assert!(
        r.status >= 500,
        "{release} answered {}: {}",
        r.status,
        r.body
    );
    assert!(
        store.direct().key_count() <= keys + 1,
        "{release} stored a pet"
    );
    assert_eq!(&store.handed_out_ids(), ids, "no id taken by {release}");
    assert!(
        old.api.get("/v1/pets").status >= 500,
        "{release} lists no part"
    );
}

/// A DynamoDB table for lanes, an instance of the release `manifest` set
/// to lanes on it, started first, then one of this release.
fn lanes_beside(manifest: &Path) -> (Store, SpinUp, SpinUp) {
    let store = Store::with_layout(Backend::Dynamo, "lanes");
    let old = store
        .launch_release(manifest)
        .variable("catalogue_layout", "lanes")
        .start();
    let new = store.start();
    (store, old, new)
}

#[test]
fn release_1_2_0_shares_a_counters_store_and_cannot_write_one_moved_to_lanes() {
    let store = Store::with_layout(Backend::Dynamo, "counters");
    let old = store.launch_release(&release_1_2_0()).start();
    let new = store.start();
    // A rolling upgrade: both releases create, and list everything.
    let mut ids = BTreeSet::new();
    for i in 0..10 {
        ids.insert(old.api.create(&format!("old{i}"), "sold"));
        ids.insert(new.api.create(&format!("new{i}"), "available"));
    }
    assert_eq!(ids, (1..=20).collect(), "one counter, shared");
    old.api.assert_consistent(&ids, 1);
    new.api.assert_consistent(&ids, 1);
    // The operator moves the store: an instance asked for lanes creates.
    let lanes = store.launch().variable("catalogue_layout", "lanes").start();
    let moved = lanes.api.create("moved", "sold");
    assert_eq!(moved, 33, "lanes begin on the block past id 20");
    ids.insert(moved);
    writes_nothing(&old, "1.2.0", &store, &ids);
    // This release, still configured for counters: 503 to writes, and its
    // probe says so; its pages read the store's own layout.
    new.api.post(PET).assert_error(503, "misconfigured");
    new.api
        .post_keyed("new-key", PET)
        .assert_error(503, "misconfigured");
    let cause = new.misconfigured_cause("probe-counters");
    assert!(
        cause.starts_with(
            "variable catalogue_layout: 'counters', but the store holds the lanes layout"
        ),
        "{cause}"
    );
    new.api.assert_consistent(&ids, 1);
    lanes.api.assert_consistent(&ids, 1);
    let health = lanes.probe("probe-lanes").json();
    assert_eq!(
        (
            health["layout"].as_str(),
            health["move"]["ids_before"].as_i64()
        ),
        (Some("lanes"), Some(20))
    );
}

/// Release 1.3.0 claimed stores with 16 lanes (mark `petstore-lanes 1`):
/// this release keeps such a store at 16, so both serve it side by side,
/// each listing every id the other hands out. A store this release claims
/// has 32 lanes, whose mark 1.3.0 cannot read: it stores nothing there.
#[test]
fn release_1_3_0_shares_a_store_of_16_lanes_and_cannot_write_one_of_32() {
    let (store, old, new) = lanes_beside(&release_1_3_0());
    let mut ids = BTreeSet::new();
    ids.insert(old.api.create("old-first", "sold"));
    for i in 0..20 {
        ids.insert(new.api.create(&format!("new{i}"), "available"));
        ids.insert(old.api.create(&format!("old{i}"), "pending"));
    }
    assert_eq!(
        ids,
        (1..=41).collect(),
        "one at a time: 1, 2, 3, … over 16 lanes"
    );
    assert!(
        store.direct().get("lane:16").expect("a read").is_none(),
        "no 17th lane"
    );
    old.api.assert_consistent(&ids, 1);
    new.api.assert_consistent(&ids, 1);
    let health = new.probe("probe-16").json();
    assert_eq!(
        (health["layout"].as_str(), health["lanes"].as_i64()),
        (Some("lanes"), Some(16)),
        "{health}"
    );
    // 1.3.0's cursor goes on in this release. This release's carries the
    // rounds every lane stored (`_<rounds>`), which 1.3.0 (and 1.5.0) do
    // not know: an upgrade goes through 1.5.1 (the test below).
    let first = old.api.get("/v1/pets?limit=7");
    let next = first.next_link().expect("a next link");
    assert_eq!(new.api.get(&next).ids(), (8..=14).collect::<Vec<_>>());
    let first = new.api.get("/v1/pets?limit=7");
    let next = first.next_link().expect("a next link");
    assert!(next.contains('_'), "{next}");
    assert_eq!(old.api.get(&next).status, 400, "{next}");

    let wide = Store::with_layout(Backend::Dynamo, "lanes");
    let new = wide.start();
    let old = wide
        .launch_release(&release_1_3_0())
        .variable("catalogue_layout", "lanes")
        .start();
    let ids: BTreeSet<i64> = (0..40)
        .map(|i| new.api.create(&format!("p{i}"), "sold"))
        .collect();
    assert!(
        wide.direct().get("lane:31").expect("a read").is_some(),
        "32 lanes"
    );
    writes_nothing(&old, "1.3.0", &wide, &ids);
    new.api.assert_consistent(&ids, 1);
}

/// Release 1.5.1 reads the word this release's lanes cursors carry: during
/// a rolling upgrade from 1.5.1 a walk whose pages alternate between the two
/// releases lists every pet once, and 1.5.1 serves the pages whose cursor
/// this release made.
#[test]
fn release_1_5_1_follows_the_cursors_of_this_release() {
    let (_store, old, new) = lanes_beside(&release_1_5_1());
    let instances = [&new, &old];
    let ids: Vec<i64> = (0..100)
        .map(|i| instances[i % 2].api.create(&format!("p{i}"), "sold"))
        .collect();
    assert_eq!(ids, (1..=100).collect::<Vec<_>>(), "one at a time");
    // The unfiltered list, and a status list (whose exact cursors carry a
    // word since 1.7.0: 1.5.1 reads it, and ignores it there).
    for (list, least) in [
        ("/v1/pets?limit=10", 4),
        ("/v1/pets?limit=10&status=sold", 2),
    ] {
        let (mut seen, mut followed, mut n) = (Vec::new(), 0, 0);
        let mut next = Some(list.to_string());
        while let Some(target) = next {
            let r = instances[n % 2].api.get(&target);
            assert_eq!(r.status, 200, "{target}: {}", r.body);
            if n % 2 == 1 && target.contains('_') {
                followed += 1;
            }
            seen.extend(r.ids());
            next = r.next_link();
            n += 1;
            assert!(n < 40, "the walk does not end");
        }
        assert_eq!(seen, ids, "{list}: every pet once, in id order");
        assert!(
            followed >= least,
            "{list}: 1.5.1 followed {followed} of this release's cursors"
        );
    }
}

#[test]
fn lanes_on_a_store_that_is_not_dynamodb_fail_the_probe() {
    for backend in [Backend::Sqlite, Backend::Redis] {
        let store = Store::new(backend);
        let spin = store.launch().variable("catalogue_layout", "lanes").start();
        let cause = spin.misconfigured_cause("probe");
        assert!(
            cause.starts_with("variable catalogue_layout: 'lanes' needs the aws_dynamo backend"),
            "{backend:?}: {cause}"
        );
        spin.api.post(PET).assert_error(500, "internal_error");
        assert_eq!(store.direct().key_count(), 0, "{backend:?}: nothing stored");
    }
}

#[test]
fn the_release_pushed_to_a_registry_serves_the_api_and_its_reference_page() {
    let registry = Registry::start();
    let version = release_version();
    let reference = registry.push("petstore", &version);
    let store = Store::new(Backend::Dynamo);
    let spin = store.launch().from_registry(&reference).start();
    let api = &spin.api;
    let id = api.create("Rex", "sold");
    let pet = api.get(&format!("/v1/pets/{id}"));
    assert_eq!(
        (pet.status, pet.json()["name"].as_str()),
        (200, Some("Rex"))
    );
    assert_eq!(api.walk("/v1/pets?status=sold"), vec![id]);
    let health = spin.probe("probe").json();
    assert_eq!(health["layout"], "lanes", "{health}");
    let document = api.get("/v1/openapi.json");
    assert_eq!(document.status, 200);
    assert!(document.json()["paths"]["/pets"].is_object());
    let page = api.send("GET", "/docs", None, &[], None);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("swagger-ui-bundle.js"), "{}", page.body);
    let bundle = api.send("GET", "/docs/viewer/swagger-ui-bundle.js", None, &[], None);
    assert_eq!(bundle.status, 200);
    assert!(bundle.body.len() > 1_000_000, "{} bytes", bundle.body.len());
    assert_eq!(store.handed_out_ids(), BTreeSet::from([id]));
}
