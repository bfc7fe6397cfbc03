//! The catalogue on the key-value store: failures, lost replies, CAS
//! conflicts, interleaved writers and each measured Spin backend quirk,
//! reproduced by the in-memory store and survived; and the cost bounds.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, json, Api};
use petstore::catalogue::{Catalogue, CAS_ATTEMPTS, PIECE_LEN};
use petstore::model::{NewPet, PetStatus};
use petstore_testkit::{Backend, Fault, MemStore, Op};

const BACKENDS: [Backend; 3] = [Backend::Clean, Backend::Sqlite, Backend::Redis];

fn new_pet(name: &str, status: PetStatus) -> NewPet {
    let body = format!(
        r#"{{"name":"{name}","categoryId":3,"status":"{}"}}"#,
        status.as_str()
    );
    NewPet::from_json(body.as_bytes()).unwrap()
}

/// What a client can see: every pet reachable by id, and each walk.
fn assert_consistent(api: &Api, expected: &BTreeSet<i64>) {
    let all = api.walk("/v1/pets?limit=7");
    assert_eq!(
        all.iter().copied().collect::<BTreeSet<_>>(),
        *expected,
        "unfiltered walk"
    );
    assert_eq!(all.len(), expected.len(), "a pet listed twice: {all:?}");
    assert!(all.windows(2).all(|w| w[0] < w[1]), "ascending: {all:?}");
    let mut by_status = BTreeSet::new();
    for s in PetStatus::ALL {
        let ids = api.walk(&format!("/v1/pets?limit=5&status={}", s.as_str()));
        for id in &ids {
            let pet = json(&api.get(&format!("/v1/pets/{id}")));
            assert_eq!(
                pet["status"],
                s.as_str(),
                "pet {id} listed under the wrong status"
            );
            assert!(by_status.insert(*id), "pet {id} listed twice");
        }
    }
    assert_eq!(by_status, *expected, "status walks");
    for id in expected {
        assert_eq!(
            api.get(&format!("/v1/pets/{id}")).status.as_u16(),
            200,
            "pet {id} fetchable"
        );
    }
}

fn calls_of_one_create(backend: Backend, existing: usize) -> u64 {
    let api = Api::on(MemStore::new(backend));
    for _ in 0..existing {
        api.create("x", "available");
    }
    api.store.reset_counts();
    api.create("x", "available");
    api.store.calls()
}

#[test]
fn a_failure_at_any_call_of_a_create_is_503_with_nothing_visible_or_a_true_201() {
    for backend in BACKENDS {
        // 40 pets first, so creates touch a piece that exists and one that is new.
        let calls = calls_of_one_create(backend, 40) + 2;
        for fault in (1..=calls).flat_map(|n| [Fault::Fail(n), Fault::LoseReply(n)]) {
            let api = Api::on(MemStore::new(backend));
            let mut expected: BTreeSet<i64> = (0..40).map(|_| api.create("x", "pending")).collect();
            api.store.reset_counts();
            api.store.inject(fault);
            let r = api.post(r#"{"name":"new","categoryId":1,"status":"sold"}"#);
            match r.status.as_u16() {
                201 => {
                    expected.insert(json(&r)["id"].as_i64().unwrap());
                }
                503 => {
                    assert_error(&r, 503, "store_unavailable");
                    assert_eq!(r.header("retry-after"), Some("1"));
                }
                other => panic!("{backend:?} {fault:?}: status {other}"),
            }
            // Later creates work, and every pet is whole: listed iff fetchable.
            expected.insert(api.create("after", "sold"));
            assert_consistent(&api, &expected);
            assert_eq!(api.store.absent_key_swaps(), 0, "{backend:?} {fault:?}");
        }
    }
}

#[test]
fn a_lost_increment_reply_leaves_a_gap_never_a_duplicate() {
    let api = Api::new();
    api.create("a", "sold");
    api.store.inject(Fault::LoseReply(api.store.calls() + 1));
    assert_error(
        &api.post(r#"{"name":"b","categoryId":1}"#),
        503,
        "store_unavailable",
    );
    assert_eq!(
        api.create("c", "sold"),
        3,
        "id 2 was taken by the lost increment"
    );
    assert_error(&api.get("/v1/pets/2"), 404, "not_found");
    assert_consistent(&api, &BTreeSet::from([1, 3]));
}

#[test]
fn a_lost_commit_reply_is_settled_by_reading_back() {
    let api = Api::new();
    // Calls of a first create: increment, increment, set slot, set pet (4th).
    api.store.inject(Fault::LoseReply(4));
    let r = api.post(r#"{"name":"a","categoryId":1}"#);
    assert_eq!(
        r.status.as_u16(),
        201,
        "the write was applied: the 201 is true"
    );
    assert_consistent(&api, &BTreeSet::from([1]));
    assert!(
        api.store.ops().contains(&Op::Get("pet:1".into())),
        "read back"
    );
}

#[test]
fn redis_swap_that_writes_but_reports_failure_ends_after_one_round() {
    let api = Api::on(MemStore::new(Backend::Redis));
    let ids: BTreeSet<i64> = (0..70)
        .map(|i| api.create("r", ["sold", "pending"][i % 2]))
        .collect();
    assert_consistent(&api, &ids);
    api.store.reset_counts();
    api.create("r", "sold");
    let swaps = api
        .store
        .ops()
        .iter()
        .filter(|o| matches!(o, Op::Swap(_)))
        .count();
    assert_eq!(swaps, 2, "one swap per index piece, no blind retries");
}

#[test]
fn cas_storms_end_in_success_without_losing_or_duplicating_an_entry() {
    for k in 1..=(CAS_ATTEMPTS as u64 * 2 + 1) {
        for backend in BACKENDS {
            let api = Api::on(MemStore::new(backend));
            let mut ids: BTreeSet<i64> = (0..33).map(|_| api.create("s", "sold")).collect();
            api.store.force_conflicts(k);
            ids.insert(api.create("storm", "sold"));
            ids.insert(api.create("calm", "sold"));
            assert_consistent(&api, &ids);
            let calls = api.store.calls();
            // Reads repaired what the storm kept out of the pieces: walking again costs less.
            api.store.reset_counts();
            assert_consistent(&api, &ids);
            assert!(api.store.calls() <= calls, "{backend:?} k={k}");
        }
    }
}

#[test]
fn a_writer_that_loses_a_cas_race_retries_and_both_entries_stay() {
    for backend in BACKENDS {
        let store = MemStore::new(backend);
        let api = Api::on(store.clone());
        api.create("first", "sold");
        // Just before A swaps piece ix:all:0, B inserts into it.
        let b_store = store.clone();
        store.before(
            |op| *op == Op::Swap("ix:all:0".into()),
            move |_| {
                Catalogue::new(&b_store)
                    .create(new_pet("B", PetStatus::Sold))
                    .unwrap();
            },
        );
        let a = api.create("A", "sold");
        assert_eq!(a, 2);
        assert_consistent(&api, &BTreeSet::from([1, 2, 3]));
        let piece = String::from_utf8(store.peek("ix:all:0").unwrap()).unwrap();
        assert!(
            piece.contains("\"A\"") && piece.contains("\"B\""),
            "{piece}"
        );
        assert_eq!(store.absent_key_swaps(), 0);
    }
}

#[test]
fn writers_that_arrive_before_a_piece_exists_never_create_it_by_cas() {
    // On SQLite a CAS on an absent key is an upsert: two writers creating
    // the first piece at once would lose one entry. Here B runs while A,
    // the piece's one creator, is about to create it.
    let store = MemStore::new(Backend::Sqlite);
    let api = Api::on(store.clone());
    let b_store = store.clone();
    store.before(
        |op| *op == Op::Get("ix:all:0".into()),
        move |_| {
            for name in ["B", "C"] {
                Catalogue::new(&b_store)
                    .create(new_pet(name, PetStatus::Sold))
                    .unwrap();
            }
        },
    );
    api.create("A", "sold");
    assert_eq!(store.absent_key_swaps(), 0, "no CAS on an absent key");
    assert_consistent(&api, &BTreeSet::from([1, 2, 3]));
    // The first read repaired the piece: it now holds all three.
    let piece = String::from_utf8(store.peek("ix:all:0").unwrap()).unwrap();
    for name in ["\"A\"", "\"B\"", "\"C\""] {
        assert!(piece.contains(name), "{piece}");
    }
}

#[test]
fn a_missing_piece_is_read_through_the_fallback() {
    let store = MemStore::default();
    let api = Api::on(store.clone());
    let ids: BTreeSet<i64> = (0..10).map(|_| api.create("m", "pending")).collect();
    // Lose the index entirely, as if every index write had failed.
    for key in store.keys().into_iter().filter(|k| k.starts_with("ix:")) {
        use petstore::store::KvStore;
        store.set(&key, b"[]").unwrap();
    }
    assert_consistent(&api, &ids);
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
fn a_corrupt_stored_value_is_a_500_not_a_panic() {
    let api = Api::new();
    api.create("a", "sold");
    use petstore::store::KvStore;
    api.store.set("pet:1", b"{oops").unwrap();
    api.store.set("ix:all:0", b"garbage").unwrap();
    assert_error(&api.get("/v1/pets/1"), 500, "internal_error");
    assert_error(&api.get("/v1/pets"), 500, "internal_error");
}

/// Preloads `n` pets with one in `sold_every` sold (0: none sold), writing
/// through the catalogue exactly as the component does.
fn preload(n: usize, sold_every: usize) -> Api {
    let api = Api::new();
    let catalogue = Catalogue::new(&api.store);
    for i in 1..=n {
        let status = if sold_every > 0 && i % sold_every == 0 {
            PetStatus::Sold
        } else {
            PetStatus::Available
        };
        catalogue.create(new_pet("preloaded", status)).unwrap();
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
    // Both next ids sit at the same offset of a piece, and neither is the first of a piece (its creator also creates the
    // next piece ahead: two calls more, once in 32 creates).
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
        assert!(calls_s <= 16, "{name}: {calls_s} calls");
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
    let largest = api.store.largest_value();
    assert!(largest < 64 * 1024, "largest value {largest} bytes");
    assert!(largest > 32 * 1200, "pieces are full: {largest}");
}
