//! The index pieces: pages that only read once the index is built, and an
//! index that heals itself from the truth (deleted, corrupt, unwritten and
//! lagging pieces, a failed repair, a reader racing a create), with exact
//! call counts.

mod common;

use std::collections::BTreeSet;

use common::{json, page_ids, Api, QUIRKS};
use petstore::routes::Handled;
use petstore_testkit::{Fault, MemStore, Op};

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
    for backend in QUIRKS {
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
        // The piece get: it holds the page.
        assert_eq!(normal, 1, "{target}");
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
/// of creates) is full: it looks up what its pieces lack, one `get` a
/// position (a slot and a pet in a status list), and writes back the
/// pieces it filled in one call. docs/decisions.md, "Full pages".
#[test]
fn a_page_over_a_cold_index_is_full() {
    let api = Api::new();
    for _ in 0..200 {
        api.create("p", "pending");
    }
    for (list, per_pet) in [("", 1), ("&status=pending", 2)] {
        let target = format!("/v1/pets?limit=100{list}");
        let (handled, calls, writes) = costed(&api, &target);
        assert_eq!(page_ids(&handled.response), (1..=100).collect::<Vec<_>>());
        assert!(handled.response.header("link").is_some(), "{target}");
        // The four pieces it spans, the counter, the look-ups, the write.
        assert_eq!(calls, 4 + 1 + 100 * per_pet + 1, "{target}");
        assert_eq!(writes, 1, "{target}");
        let repaired = api.store.ops().into_iter().find_map(|op| match op {
            Op::SetMany(keys) => Some(keys.len()),
            _ => None,
        });
        assert_eq!(repaired, Some(4), "{target}: every filled piece");
    }
    api.assert_consistent(&(1..=200).collect(), "walks over the rest");
}

/// The one page that ends early: past [`EMPTY_POSITIONS`] positions that
/// hold no pet (creates that failed), with a `next` link that goes on.
#[test]
fn a_page_ends_early_only_past_64_positions_without_a_pet() {
    use petstore::catalogue::keys::EMPTY_POSITIONS;
    let api = Api::new();
    for _ in 0..150 {
        api.create("p", "pending");
    }
    // Positions 1-70 given up, as a create that failed leaves them.
    for id in 1..=70 {
        let void = format!("petstore-pending 1\n{id} 0\n");
        api.store.put(&format!("pet:{id}"), void.as_bytes());
    }
    let first = api.get("/v1/pets?limit=100");
    assert_eq!(page_ids(&first), Vec::<i64>::new());
    let next = first.header("link").and_then(petstore_testkit::next_of);
    let next = next.expect("the walk goes on");
    assert!(
        next.contains(&format!("cursor=c{}", EMPTY_POSITIONS + 1)),
        "{next}"
    );
    assert_eq!(page_ids(&api.get(&next)), (71..=150).collect::<Vec<_>>());
    assert_eq!(
        api.walk("/v1/pets?limit=40"),
        (71..=150).collect::<Vec<_>>()
    );
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
    let creator = api.twin();
    store.before(
        |op| *op == Op::Set("ix2:all:0".into()),
        move |_| {
            creator.create("c", "sold");
        },
    );
    // The first page lists 1 and 2 (pet 3 came after its read) and links
    // on, so the walk finds pet 3 too: created while it ran, it may.
    assert_eq!(api.walk("/v1/pets"), vec![1, 2, 3]);
    api.assert_consistent(&BTreeSet::from([1, 2, 3]), "the racing pet");
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
