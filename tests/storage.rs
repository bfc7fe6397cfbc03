//! The catalogue on the key-value store (layout v2): failures and lost
//! replies at every call of a create, an index that heals itself from the
//! truth (deleted, corrupt and unwritten pieces, with exact call counts),
//! reads that only read, a store written by 1.0.0, and the cost bounds.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, attempts, every_attempt, json, Api};
use petstore::catalogue::Batches;
use petstore::catalogue::{Catalogue, PIECE_LEN};
use petstore::model::{NewPet, PetStatus};
use petstore::routes::Handled;
use petstore_testkit::{Backend, Fault, MemStore, Op};

const BACKENDS: [Backend; 3] = [Backend::Clean, Backend::Sqlite, Backend::Redis];

fn new_pet(name: &str, status: PetStatus) -> NewPet {
    let body = format!(
        r#"{{"name":"{name}","categoryId":3,"status":"{}"}}"#,
        status.as_str()
    );
    NewPet::from_json(body.as_bytes()).unwrap()
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
            api.store.clear_faults();
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
            api.assert_consistent(&expected, &format!("{backend:?} {fault:?}"));
            assert_eq!(api.store.absent_key_swaps(), 0, "{backend:?} {fault:?}");
        }
    }
}

#[test]
fn a_lost_increment_reply_is_retried_and_leaves_a_gap_never_a_duplicate() {
    let api = Api::new();
    api.create("a", "sold");
    api.store.inject(Fault::LoseReply(api.store.calls() + 1));
    let r = api.post(r#"{"name":"b","categoryId":1}"#);
    assert_eq!(r.status.as_u16(), 201);
    assert_eq!(
        json(&r)["id"],
        3,
        "id 2 was taken by the increment whose reply was lost"
    );
    assert_eq!(api.sleeps.borrow().len(), 1, "one wait before the retry");
    assert_error(&api.get("/v1/pets/2"), 404, "not_found");
    api.assert_consistent(&BTreeSet::from([1, 3]), "gap");
}

/// A failing increment is tried at most as often as the declared backend's
/// policy allows, with a jittered wait below the policy's ceilings between
/// attempts and no more waiting in all than its budget; then the create is a
/// 503 that stored nothing.
#[test]
fn an_increment_that_keeps_failing_is_a_503_after_the_bounded_retries() {
    use petstore::retry::{policy, Policy};
    for (backend, policy) in [("spin", Policy::BRIEF), ("aws_dynamo", Policy::CONTENDED)] {
        let mut api = Api::new();
        api.set_variable("key_value_backend", backend);
        api.create("a", "sold");
        api.random.set([0x9d; 16]);
        let attempts = u64::from(policy.attempts_when_every_draw_is([0x9d; 16]));
        let first = api.store.calls() + 1;
        for n in first..first + attempts {
            api.store.inject(Fault::Fail(n));
        }
        let keys = api.store.keys();
        api.sleeps.borrow_mut().clear();
        assert_error(
            &api.post(r#"{"name":"b","categoryId":1}"#),
            503,
            "store_unavailable",
        );
        assert_eq!(api.store.calls(), first - 1 + attempts, "{backend}");
        assert_eq!(api.store.keys(), keys, "{backend}: nothing stored");
        let sleeps = api.sleeps.borrow().clone();
        assert_eq!(sleeps.len() as u64, attempts - 1, "{backend}");
        for (retry, ms) in (1..).zip(&sleeps) {
            assert!(*ms <= policy::ceiling_ms(retry), "{backend}: {sleeps:?}");
        }
        assert!(sleeps.iter().sum::<u64>() <= policy.budget_ms, "{backend}");
        assert_eq!(api.create("c", "sold"), 2, "{backend}: no number was taken");
    }
}

#[test]
fn a_lost_commit_reply_is_settled_by_reading_back() {
    let api = Api::new();
    // Calls of a first create: increment, increment, set-many (3rd): its
    // reply is lost, and every retry fails.
    api.store.inject(Fault::LoseReply(3));
    for fault in every_attempt(3, Fault::Fail).into_iter().skip(1) {
        api.store.inject(fault);
    }
    let r = api.post(r#"{"name":"a","categoryId":1}"#);
    assert_eq!(
        r.status.as_u16(),
        201,
        "the write was applied: the 201 is true"
    );
    api.assert_consistent(&BTreeSet::from([1]), "settled");
    assert!(
        api.store.ops().contains(&Op::Get("pet:1".into())),
        "read back"
    );
}

#[test]
fn a_commit_whose_outcome_cannot_be_read_back_says_the_pet_may_exist() {
    // The set-many's reply is lost and its retries fail (calls 3 to
    // 2 + attempts); the slot is written again, then every read-back fails:
    // nobody knows.
    let api = Api::new();
    api.store.inject(Fault::LoseReply(3));
    for fault in every_attempt(3, Fault::Fail).into_iter().skip(1) {
        api.store.inject(fault);
    }
    for fault in every_attempt(4 + attempts(), Fault::Fail) {
        api.store.inject(fault);
    }
    let r = api.post(r#"{"name":"a","categoryId":1}"#);
    assert_error(&r, 503, "store_unavailable");
    assert!(
        json(&r)["message"]
            .as_str()
            .unwrap()
            .contains("may have been created"),
        "{:?}",
        json(&r)
    );
    api.assert_consistent(&BTreeSet::from([1]), "it was applied after all");
    // The set-many fails at every attempt and the read-back finds no pet:
    // nothing is visible (the slot written again points at none: a hole).
    let api = Api::new();
    for fault in every_attempt(3, Fault::Fail) {
        api.store.inject(fault);
    }
    let r = api.post(r#"{"name":"a","categoryId":1}"#);
    assert_error(&r, 503, "store_unavailable");
    assert!(json(&r)["message"]
        .as_str()
        .unwrap()
        .contains("nothing was changed"));
    assert_eq!(api.store.peek("pet:1"), None);
    api.assert_consistent(&BTreeSet::new(), "a hole");
}

#[test]
fn a_create_is_two_increments_and_one_set_many_and_never_touches_the_index() {
    for status in PetStatus::ALL {
        let api = Api::new();
        api.create("first", "available");
        api.store.reset_counts();
        api.create("c", status.as_str());
        let position = if status == PetStatus::Available { 2 } else { 1 };
        assert_eq!(
            api.store.ops(),
            vec![
                Op::Increment("ctr:id".into()),
                Op::Increment(format!("ctr:{}", status.as_str())),
                Op::SetMany(vec![
                    format!("slot:{}:{position}", status.as_str()),
                    "pet:2".into(),
                ]),
            ]
        );
    }
}

/// One GET with its key-value calls and how many of them wrote.
fn costed(api: &Api, target: &str) -> (Handled, u64, usize) {
    api.store.reset_counts();
    let handled = api.handle_get(target);
    assert_eq!(handled.response.status.as_u16(), 200, "{target}");
    let writes = api
        .store
        .ops()
        .iter()
        .filter(|o| !matches!(o, Op::Get(_)))
        .count();
    (handled, api.store.calls(), writes)
}

/// Key-value calls of one request, and how many of them wrote.
fn calls_and_writes(api: &Api, target: &str) -> (u64, usize) {
    let (_, calls, writes) = costed(api, target);
    (calls, writes)
}

const PAGES: [&str; 5] = [
    "/v1/pets?limit=100",
    "/v1/pets?limit=32",
    "/v1/pets?limit=100&cursor=c40",
    "/v1/pets?limit=100&status=sold",
    "/v1/pets?limit=5&status=pending&cursor=c3",
];

#[test]
fn list_pages_make_only_plain_gets_once_the_index_is_built() {
    for backend in BACKENDS {
        let api = Api::on(MemStore::new(backend));
        let ids: BTreeSet<i64> = (0..150)
            .map(|i| api.create("p", ["available", "pending", "sold"][i % 3]))
            .collect();
        // The first readers build the index from the truth...
        api.assert_consistent(&ids, "first walk");
        for target in PAGES {
            // ...after which a page reads and never writes: no increment, no CAS, no set.
            let (calls, writes) = calls_and_writes(&api, target);
            assert_eq!(writes, 0, "{backend:?} {target}: {:?}", api.store.ops());
            assert!(calls <= 6, "{backend:?} {target}: {calls} calls");
        }
    }
}

/// 64 available pets (two full pieces of `all` and of `available`), index built.
fn two_full_pieces() -> Api {
    let api = Api::new();
    for _ in 0..64 {
        api.create("p", "available");
    }
    for target in ["/v1/pets?limit=100", "/v1/pets?limit=100&status=available"] {
        api.get(target);
    }
    api
}

#[test]
fn a_deleted_piece_is_rebuilt_by_the_first_page_over_it_then_costs_nothing() {
    for (list, per_pet) in [("", 1), ("&status=available", 2)] {
        let api = two_full_pieces();
        let target = format!("/v1/pets?limit=32{list}");
        let (normal, _) = calls_and_writes(&api, &target);
        // The piece get, then the counter (the page ends at the piece's end).
        assert_eq!(normal, 2, "{target}");
        let key = format!(
            "ix2:{}:0",
            if list.is_empty() { "all" } else { "available" }
        );
        api.store.remove(&key);
        let (handled, first, writes) = costed(&api, &target);
        assert_eq!(handled.notes.len(), 1, "{:?}", handled.notes);
        assert!(handled.notes[0].contains(&key), "logged with its key");
        // Piece get, counter get, 32 look-ups of the truth, one repair set.
        assert_eq!(first, 1 + 1 + 32 * per_pet + 1, "{target}");
        assert_eq!(writes, 1);
        assert_eq!(calls_and_writes(&api, &target), (normal, 0), "healed");
        api.assert_consistent(&(1..=64).collect(), "after the rebuild");
    }
}

/// A page over a cold index (no piece written yet, as right after a burst
/// of creates) spends at most its budget of calls on the truth, then ends
/// early with a `next` link; the walk still lists every pet once.
#[test]
fn a_page_over_a_cold_index_spends_at_most_its_call_budget() {
    use petstore::catalogue::FALLBACK_BUDGET;
    let api = Api::new();
    for _ in 0..200 {
        api.create("p", "pending");
    }
    let budget = FALLBACK_BUDGET as u64;
    for (list, per_pet) in [("", 1), ("&status=pending", 2)] {
        let target = format!("/v1/pets?limit=100{list}");
        let (handled, calls, writes) = costed(&api, &target);
        let listed = json(&handled.response).as_array().unwrap().len() as u64;
        assert_eq!(listed, budget / per_pet, "{target}");
        assert!(
            handled.response.header("link").is_some(),
            "{target}: more follow"
        );
        // The pieces read (up to the one where the budget ran out), the
        // counter, the look-ups, and one write of every piece they filled
        // (a `set-many`).
        let pieces = (listed - 1) / PIECE_LEN as u64 + 1;
        assert_eq!(calls, pieces + 1 + budget + 1, "{target}");
        assert_eq!(writes, 1, "{target}");
        let repaired = api.store.ops().into_iter().find_map(|op| match op {
            Op::SetMany(keys) => Some(keys.len() as u64),
            Op::Set(_) => Some(1),
            _ => None,
        });
        assert_eq!(repaired, Some(pieces), "{target}: every filled piece");
    }
    api.assert_consistent(&(1..=200).collect(), "walks over the rest");
}

#[test]
fn a_corrupt_piece_is_rebuilt_from_the_truth_not_a_500() {
    let api = two_full_pieces();
    let (normal, _) = calls_and_writes(&api, "/v1/pets?limit=32");
    for garbage in [&b"garbage"[..], br#"{"v":9,"e":[]}"#, b"[[1]]"] {
        api.store.put("ix2:all:0", garbage);
        let (handled, _, _) = costed(&api, "/v1/pets?limit=32");
        assert!(
            handled
                .notes
                .iter()
                .any(|n| n.contains("ix2:all:0") && n.contains("unreadable")),
            "{:?}",
            handled.notes
        );
        assert_eq!(calls_and_writes(&api, "/v1/pets?limit=32"), (normal, 0));
    }
    api.assert_consistent(&(1..=64).collect(), "after the rebuilds");
}

#[test]
fn a_repair_whose_write_fails_leaves_the_work_to_the_next_reader_only() {
    let api = two_full_pieces();
    let (normal, _) = calls_and_writes(&api, "/v1/pets?limit=32");
    api.store.remove("ix2:all:0");
    // The repair set is call 35: piece, counter, 32 pets, set.
    api.store.reset_counts();
    api.store.inject(Fault::Fail(35));
    let handled = api.handle_get("/v1/pets?limit=32");
    assert_eq!(handled.response.status.as_u16(), 200);
    assert!(
        handled.notes[0].contains("not written"),
        "{:?}",
        handled.notes
    );
    assert_eq!(api.store.peek("ix2:all:0"), None);
    // The next reader pays the same once more, and succeeds.
    let (again, writes) = calls_and_writes(&api, "/v1/pets?limit=32");
    assert_eq!((again, writes), (35, 1));
    assert_eq!(calls_and_writes(&api, "/v1/pets?limit=32"), (normal, 0));
}

#[test]
fn a_reader_racing_a_create_loses_nothing() {
    // A reader rebuilds piece ix2:all:0 while a create commits pet 3: the
    // piece it writes lacks pet 3, which the next reader finds in the truth.
    let store = MemStore::default();
    let api = Api::on(store.clone());
    api.create("a", "sold");
    api.create("b", "sold");
    let creator = store.clone();
    store.before(
        |op| *op == Op::Set("ix2:all:0".into()),
        move |_| {
            Catalogue::new(&creator)
                .create(new_pet("c", PetStatus::Sold), Batches::Atomic)
                .unwrap();
        },
    );
    assert_eq!(api.walk("/v1/pets"), vec![1, 2]);
    api.assert_consistent(&BTreeSet::from([1, 2, 3]), "the racing pet");
}

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
    let catalogue = Catalogue::new(&api.store);
    for i in 1..=n {
        let status = if sold_every > 0 && i % sold_every == 0 {
            PetStatus::Sold
        } else {
            PetStatus::Available
        };
        catalogue
            .create(new_pet("preloaded", status), Batches::Atomic)
            .unwrap();
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

#[test]
fn a_lagging_piece_grows_silently_and_a_missing_one_is_logged() {
    let api = Api::new();
    for _ in 0..20 {
        api.create("p", "sold");
    }
    let (first, _, writes) = costed(&api, "/v1/pets");
    assert_eq!(writes, 1, "the first reader builds piece 0");
    assert_eq!(first.notes.len(), 1, "{:?}", first.notes);
    assert!(
        first.notes[0].contains("ix2:all:0 missing"),
        "{:?}",
        first.notes
    );
    api.create("late", "sold");
    let (later, _, writes) = costed(&api, "/v1/pets?limit=100");
    assert_eq!(writes, 1, "the next reader adds the new pet");
    assert!(
        later.notes.is_empty(),
        "normal growth is not logged: {:?}",
        later.notes
    );
    assert_eq!(json(&later.response).as_array().unwrap().len(), 21);
}
