//! Constant cost, counted by the host: the key-value calls and bytes of each
//! operation are the same on a catalogue of 1,000 pets and of 20,000, and no
//! stored value reaches 64 KiB. Counts, not timings: exact on any machine.

use petstore_host::kv::{Backend, Stats};
use petstore_host::preload::{one_sold_among, preload, preload_lanes};

use crate::support::{loaded, serve, serve_app, Server};

/// Pets with one sold among them (the middle one); the rest alternate.
fn catalogue(pets: usize) -> Server {
    let server = serve(Backend::Memory);
    preload(server.kv(), pets, one_sold_among(pets)).unwrap();
    server
}

fn cost(server: &Server, request: impl Fn(&Server)) -> Stats {
    server.kv().reset_stats();
    request(server);
    server.kv().stats()
}

type Request = Box<dyn Fn(&Server)>;

/// Each operation, checked for its answer; `list_sold` checks the page of
/// the one `sold` pet (which a layout may list on a later page).
fn operations(list_sold: Request) -> Vec<(&'static str, Request)> {
    vec![
        (
            "list 100",
            Box::new(|s| assert_eq!(s.api.get("/v1/pets?limit=100").ids().len(), 100)),
        ),
        ("list sold", list_sold),
        (
            "deep page",
            Box::new(|s| assert_eq!(s.api.get("/v1/pets?limit=100&cursor=c700").ids().len(), 100)),
        ),
        (
            "get",
            Box::new(|s| assert_eq!(s.api.get("/v1/pets/321").status, 200)),
        ),
        (
            "create",
            Box::new(|s| {
                s.api.create("costed", "available");
            }),
        ),
    ]
}

#[test]
fn every_operation_costs_the_same_at_1_000_and_20_000_pets() {
    // Both sizes are 8 past a multiple of 32, so a create lands at the same
    // offset of its index piece in both.
    let (small, large) = (catalogue(1_000), catalogue(20_008));
    let operations = operations(Box::new(|s| {
        assert_eq!(s.api.get("/v1/pets?limit=100&status=sold").ids().len(), 1)
    }));
    for (name, request) in operations {
        let a = cost(&small, &request);
        let b = cost(&large, &request);
        assert_eq!(a.calls, b.calls, "{name}: calls at 1,000 vs 20,008 pets");
        // Only the digits differ: ids and list positions are longer at 20,008
        // pets, in every entry of the pieces a request reads or writes.
        assert!(
            b.bytes <= a.bytes * 6 / 5,
            "{name}: bytes {} vs {}",
            a.bytes,
            b.bytes
        );
        assert!(a.calls <= 16, "{name}: {} calls", a.calls);
    }
    assert!(large.host.kv().largest_value() < 64 * 1024);
}

/// The same in the lanes layout (a DynamoDB store configured `lanes`, read
/// in batches): every operation makes the same calls at 1,000 and at 20,008
/// pets; a page is one `get-many` warm, the page of the one `sold` pet too,
/// which lists it (a status list has its own index in every lane); a
/// create is the heads' read, the head's `cas.new` and `current`, the store
/// of the pet it held and the `swap`.
#[test]
fn every_operation_of_the_lanes_layout_costs_the_same_at_1_000_and_20_000_pets() {
    let catalogue = |pets: usize| {
        let app = loaded().with_variables(&[
            ("key_value_backend", "aws_dynamo"),
            ("catalogue_layout", "lanes"),
        ]);
        let server = serve_app(app, Backend::Memory);
        preload_lanes(server.kv(), pets, one_sold_among(pets)).unwrap();
        server
    };
    let (small, large) = (catalogue(1_000), catalogue(20_008));
    let operations = operations(Box::new(|s| {
        let page = s.api.get("/v1/pets?limit=100&status=sold");
        assert_eq!(page.status, 200);
        assert_eq!(page.ids().len(), 1, "the one sold pet");
    }));
    for (name, request) in operations {
        let a = cost(&small, &request);
        let b = cost(&large, &request);
        assert_eq!(a.calls, b.calls, "{name}: calls at 1,000 vs 20,008 pets");
        let most = if name == "create" { 5 } else { 1 };
        assert_eq!(a.calls, most, "{name}");
    }
    assert!(large.host.kv().largest_value() < 64 * 1024);
}
