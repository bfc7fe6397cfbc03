//! Several `spin up` processes on one store, as replicas of a deployment:
//! two instances on one Redis hand out distinct ids, and each lists every
//! pet once, in its status's walk too.

use std::collections::BTreeSet;

use petstore_e2e::stores::{Backend, Store};

use crate::concurrency::create_in_parallel;

#[test]
fn two_instances_on_one_redis_share_one_catalogue() {
    let store = Store::new(Backend::Redis);
    store.preload(1_000, crate::concurrency::status_of);
    let (a, b) = (store.start(), store.start());
    let apis = [a.api.clone(), b.api.clone()];
    // 24 clients, every other create on the other instance.
    let ids = create_in_parallel(&apis, 24, 400);
    assert_eq!(ids.len(), 400);
    let mut expected: BTreeSet<i64> = (1..=1_000).collect();
    expected.extend(ids);
    for api in &apis {
        api.assert_consistent(&expected, 1_001);
    }
}
