//! The store as a whole: a store written by 1.0.0 keeps working, read
//! failures and corrupt data answer 503 and 500 (never a panic), and the
//! bounds: costs that do not grow with the catalogue, no value over 64 KiB.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, json, Api};
use petstore::catalogue::PIECE_LEN;
use petstore_testkit::{Fault, MemStore};

#[test]
fn a_store_written_by_1_0_0_keeps_working() {
    // Layout 1.0.0: the same counters, pets and slots; index pieces under
    // `ix:` as bare JSON arrays, created ahead of need (`[]`) and filled by
    // CAS — here one insert was lost, as a failed CAS could leave it. This
    // release reads none of them (its pieces are `ix2:`) and builds its own
    // from the truth.
    let store = MemStore::default();
    let pet = |id: i64, status: &str, name: &str| {
        format!(r#"{{"id":{id},"name":"{name}","categoryId":3,"status":"{status}"}}"#)
    };
    for (key, value) in [
        ("ctr:id", 3i64.to_le_bytes().to_vec()),
        ("ctr:sold", 2i64.to_le_bytes().to_vec()),
        ("ctr:available", 1i64.to_le_bytes().to_vec()),
        ("pet:1", pet(1, "sold", "a").into_bytes()),
        ("pet:2", pet(2, "available", "b").into_bytes()),
        ("pet:3", pet(3, "sold", "c").into_bytes()),
        ("slot:sold:1", b"1".to_vec()),
        ("slot:available:1", b"2".to_vec()),
        ("slot:sold:2", b"3".to_vec()),
        (
            "ix:all:0",
            br#"[[1,1,3,"sold","a"],[2,2,3,"available","b"],[3,3,3,"sold","c"]]"#.to_vec(),
        ),
        ("ix:all:1", b"[]".to_vec()),
        (
            "ix:sold:0",
            br#"[[1,1,3,"sold","a"],[2,3,3,"sold","c"]]"#.to_vec(),
        ),
        ("ix:sold:1", b"[]".to_vec()),
        ("ix:available:0", b"[]".to_vec()),
        ("ix:available:1", b"[]".to_vec()),
    ] {
        store.put(key, &value);
    }
    let api = Api::on(store.clone());
    api.assert_consistent(&BTreeSet::from([1, 2, 3]), "1.0.0 data");
    let new = api.create("d", "available");
    assert_eq!(new, 4);
    api.assert_consistent(&BTreeSet::from([1, 2, 3, 4]), "with a new pet");
    // Its own pieces hold every pet; the 1.0.0 pieces are left as they were,
    // so instances of both releases can share the store in a rolling upgrade.
    assert_eq!(
        String::from_utf8(store.peek("ix2:available:0").unwrap()).unwrap(),
        "petstore-index-piece 2\n\
         1 2 {\"id\":2,\"name\":\"b\",\"categoryId\":3,\"status\":\"available\"}\n\
         2 4 {\"id\":4,\"name\":\"d\",\"categoryId\":1,\"status\":\"available\"}"
    );
    assert_eq!(store.peek("ix:available:0").unwrap(), b"[]");
}

#[test]
fn store_failures_on_reads_are_503_with_retry_after() {
    let api = Api::new();
    api.create("a", "sold");
    for target in ["/v1/pets", "/v1/pets?status=sold", "/v1/pets/1"] {
        api.store.inject(Fault::Fail(api.store.calls() + 1));
        let r = api.get(target);
        assert_error(&r, 503, "store_unavailable");
        assert_eq!(r.header("retry-after"), Some("1"));
        if target == "/v1/pets/1" {
            assert_eq!(r.header("deprecation"), Some("@1795219200"));
        }
    }
}

#[test]
fn a_corrupt_pet_or_counter_is_a_500_not_a_panic() {
    let api = Api::new();
    api.create("a", "sold");
    api.store.put("pet:1", b"{oops");
    assert_error(&api.get("/v1/pets/1"), 500, "internal_error");
    assert_error(&api.get("/v1/pets"), 500, "internal_error");
    api.store.put("ctr:sold", b"xyz");
    assert_error(
        &api.get("/v1/pets?status=sold&cursor=c2"),
        500,
        "internal_error",
    );
}

/// Preloads `n` pets with one in `sold_every` sold (0: none sold), writing
/// through the catalogue exactly as the component does.
fn preload(n: usize, sold_every: usize) -> Api {
    let api = Api::new();
    for i in 1..=n {
        let status = if sold_every > 0 && i % sold_every == 0 {
            "sold"
        } else {
            "available"
        };
        api.create("preloaded", status);
    }
    // Readers build the index: walk every list once.
    for target in [
        "/v1/pets?limit=100",
        "/v1/pets?limit=100&status=available",
        "/v1/pets?limit=100&status=sold",
    ] {
        api.walk(target);
    }
    api
}

type Operation = Box<dyn Fn(&Api)>;

fn cost(api: &Api, f: impl FnOnce(&Api)) -> (u64, u64) {
    api.store.reset_counts();
    f(api);
    (api.store.calls(), api.store.bytes())
}

#[test]
fn create_and_list_cost_does_not_grow_with_the_catalogue() {
    let small = preload(1_000, 1_000);
    let large = preload(20_008, 20_008);
    let operations: Vec<(&str, Operation)> = vec![
        (
            "create",
            Box::new(|a: &Api| {
                a.create("c", "pending");
            }),
        ),
        (
            "list 100",
            Box::new(|a: &Api| assert_eq!(a.get("/v1/pets?limit=100").status.as_u16(), 200)),
        ),
        (
            "list sold",
            Box::new(|a: &Api| {
                assert_eq!(
                    json(&a.get("/v1/pets?limit=100&status=sold"))
                        .as_array()
                        .unwrap()
                        .len(),
                    1
                )
            }),
        ),
        (
            "list absent status",
            Box::new(|a: &Api| {
                assert_eq!(a.get("/v1/pets?status=pending&cursor=c1000").body, b"[]")
            }),
        ),
        (
            "deep page",
            Box::new(|a: &Api| {
                assert_eq!(
                    json(&a.get("/v1/pets?limit=100&cursor=c600"))
                        .as_array()
                        .unwrap()
                        .len(),
                    100
                )
            }),
        ),
        (
            "get",
            Box::new(|a: &Api| assert_eq!(a.get("/v1/pets/500").status.as_u16(), 200)),
        ),
    ];
    for (name, op) in operations {
        let (calls_s, bytes_s) = cost(&small, &op);
        let (calls_l, bytes_l) = cost(&large, &op);
        assert_eq!(calls_s, calls_l, "{name}: calls at 1,000 vs 20,008 pets");
        // Bytes differ only by the digits of larger ids (both at the same offset in a piece).
        assert!(
            bytes_l <= bytes_s + bytes_s / 20 + 64,
            "{name}: bytes {bytes_s} vs {bytes_l}"
        );
        assert!(calls_s <= 8, "{name}: {calls_s} calls");
    }
}

#[test]
fn no_stored_value_can_exceed_64_kib() {
    // The largest pet JSON: 200 characters that each escape to 6 bytes, and
    // extreme numbers, filling whole pieces of every list.
    let api = Api::new();
    let name = "\\u0001".repeat(200);
    for _ in 0..(PIECE_LEN * 2) {
        let body =
            format!(r#"{{"name":"{name}","categoryId":-9223372036854775808,"status":"pending"}}"#);
        assert_eq!(api.post(&body).status.as_u16(), 201);
    }
    api.walk("/v1/pets?limit=100");
    api.walk("/v1/pets?limit=100&status=pending");
    let largest = api.store.largest_value();
    assert!(largest < 64 * 1024, "largest value {largest} bytes");
    assert!(largest > 32 * 1200, "pieces are full: {largest}");
}
