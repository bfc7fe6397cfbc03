//! A store whose `ctr:id` the serving build does not serve (the other build's
//! mark or counter, or a format none writes here) gets 503 `misconfigured`
//! naming what it holds, never a false answer; nothing is written; no wedge.

mod made;
mod refused;

use petstore_e2e::stores::{Backend, Store};

use made::{made_by, planted_edge_store, Build, Left};
use refused::{assert_refused, refused_by};

#[test]
fn the_default_build_refuses_the_edge_builds_sqlite_store() {
    let store = Store::new(Backend::Sqlite);
    let left = made_by(Build::Edge, &store);
    assert_refused(refused_by(Build::Default, &store, &left, Some(Build::Edge)));
}

#[test]
fn the_edge_build_refuses_the_default_builds_sqlite_store() {
    let store = Store::new(Backend::Sqlite);
    let left = made_by(Build::Default, &store);
    assert_refused(refused_by(Build::Edge, &store, &left, Some(Build::Default)));
}

/// The default build as DynamoDB deployments run it: lanes.
#[test]
fn the_default_build_on_lanes_refuses_the_edge_builds_dynamodb_store() {
    let store = Store::with_layout(Backend::Dynamo, "lanes");
    let left = made_by(Build::Edge, &store);
    assert_refused(refused_by(Build::Default, &store, &left, Some(Build::Edge)));
}

#[test]
fn the_edge_build_refuses_the_default_builds_lanes_dynamodb_store() {
    let store = Store::with_layout(Backend::Dynamo, "lanes");
    let left = made_by(Build::Default, &store);
    assert_refused(refused_by(Build::Edge, &store, &left, Some(Build::Default)));
}

/// The edge build does not run on Redis: its store is planted as it writes
/// one (a store copied there, say).
#[test]
fn the_default_build_refuses_an_edge_store_planted_on_redis() {
    let store = Store::new(Backend::Redis);
    let left = planted_edge_store(&store);
    assert_refused(refused_by(Build::Default, &store, &left, Some(Build::Edge)));
}

/// On SQLite `42` is a counter of another length (Spin's `increment` on it
/// panics), a lanes mark is a layout SQLite cannot hold, and a mark no
/// release writes may be a later one's: none is the default build's.
#[test]
fn the_default_build_refuses_sqlite_stores_it_cannot_read() {
    let mut wrong = Vec::new();
    for word in ["42", "petstore-lanes 2 1 0 0", "petstore-future 9"] {
        let store = Store::new(Backend::Sqlite);
        let planted = store.direct().set("ctr:id", word.as_bytes());
        planted.expect("plant ctr:id");
        wrong.extend(refused_by(Build::Default, &store, &Left::default(), None));
    }
    assert_refused(wrong);
}
