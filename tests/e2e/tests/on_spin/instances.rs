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
