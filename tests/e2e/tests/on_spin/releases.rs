//! Release 1.2.0 (built from the history of `main`) beside this one on real
//! `spin up`, on one DynamoDB table: during a rolling upgrade of a counters
//! store both write and both list everything; once this release moves the
//! store to lanes, 1.2.0 fails every create (its `increment` cannot parse
//! the lanes' mark in `ctr:id`) and stores nothing, and this release still
//! configured for counters answers 503 `misconfigured` to writes and says so
//! in `/v1/health`. An instance asked for lanes on SQLite fails its probe.
//! This release, pushed to an OCI registry as the deploy recipes pull it,
//! serves the API and its reference page from there.

use std::collections::BTreeSet;

use petstore_e2e::registry::{release_version, Registry};
use petstore_e2e::release::release_1_2_0;
use petstore_e2e::stores::{Backend, Store};

const PET: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

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
    // 1.2.0 cannot write: no 201, and nothing stored.
    let keys = store.direct().key_count();
    let r = old.api.post(PET);
    assert!(r.status >= 500, "1.2.0 answered {}: {}", r.status, r.body);
    let r = old.api.post_keyed("old-key", PET);
    assert!(r.status >= 500, "1.2.0 answered {}: {}", r.status, r.body);
    // (Its keyed create made the key's word, by `increment` by 0, first.)
    assert!(store.direct().key_count() <= keys + 1, "1.2.0 stored a pet");
    assert_eq!(store.handed_out_ids(), ids, "no id taken by 1.2.0");
    // Its pages fail loudly rather than show a part.
    assert!(old.api.get("/v1/pets").status >= 500);
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
