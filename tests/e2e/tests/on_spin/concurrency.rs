//! Many clients at once on one `spin up`, on each backend: parallel creates
//! get distinct ids and every pet is listed once, in its status's walk too,
//! on an empty catalogue and on one of 10,000 pets.

use std::collections::BTreeSet;

use petstore::model::PetStatus;
use petstore_e2e::client::{distinct_ids, fan_out, pet_body, Api, STATUSES};
use petstore_e2e::stores::{Backend, Store};

/// `total` creates from `clients` threads at once; the ids of the 201s.
/// Every create must answer 201: no fault is injected.
pub fn create_in_parallel(apis: &[Api], clients: usize, total: usize) -> BTreeSet<i64> {
    let apis = apis.to_vec();
    distinct_ids(fan_out(clients, total, move |i| {
        let status = STATUSES[i % 3];
        let r = apis[i % apis.len()].post(&pet_body(&format!("c{i}"), status));
        assert_eq!(r.json()["status"], status);
        r.created_id()
    }))
}

pub fn status_of(n: usize) -> PetStatus {
    [PetStatus::Available, PetStatus::Pending, PetStatus::Sold][n % 3]
}

fn parallel_creates_get_distinct_ids_each_listed_once(pets: usize) {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        store.preload(pets, status_of);
        let spin = store.start();
        let ids = create_in_parallel(std::slice::from_ref(&spin.api), 16, 200);
        assert_eq!(ids.len(), 200, "{backend:?}");
        let mut expected: BTreeSet<i64> = (1..=pets as i64).collect();
        expected.extend(ids);
        spin.api.assert_consistent(&expected, pets as i64 + 1);
        assert!(store.direct().largest_value() < 64 * 1024);
    }
}

#[test]
fn sixteen_clients_create_on_an_empty_catalogue() {
    parallel_creates_get_distinct_ids_each_listed_once(0);
}

#[test]
fn sixteen_clients_create_on_a_catalogue_of_10_000_pets() {
    parallel_creates_get_distinct_ids_each_listed_once(10_000);
}
