//! Pages on a store declared `aws_dynamo`, where each call is a round trip
//! to a remote store: a page reads its pieces and counter in one `get-many`,
//! the truth of its gaps in one more (two on a status list), and writes its
//! repairs in one call; the answers are those of a page read a `get` at a
//! time, and faults at any of its calls change nothing stored.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, json, page_ids, Api};
use petstore::catalogue::PIECE_LEN;
use petstore::store::KvStore;
use petstore_testkit::{Backend, Fault, MemStore, Op};

/// An API over `store` declared as `backend` (`key_value_backend`).
fn declared(store: &MemStore, backend: &str) -> Api {
    let mut api = Api::on(store.clone());
    api.set_variable("key_value_backend", backend);
    api
}

/// `n` pets, statuses in turn, created on a store declared DynamoDB; the
/// API and the ids.
fn catalogue(n: usize) -> (Api, BTreeSet<i64>) {
    let api = declared(&MemStore::new(Backend::Memory), "aws_dynamo");
    let ids = (0..n)
        .map(|i| api.create("p", ["available", "pending", "sold"][i % 3]))
        .collect();
    (api, ids)
}

/// The calls of one page, the ops it made, and its response.
fn page(api: &Api, target: &str) -> (u64, Vec<Op>, petstore::response::Response) {
    api.store.reset_counts();
    let r = api.get(target);
    (api.store.calls(), api.store.ops(), r)
}

const PAGES: [&str; 6] = [
    "/v1/pets?limit=100",
    "/v1/pets?limit=32",
    "/v1/pets?limit=100&cursor=c40",
    "/v1/pets?limit=100&status=sold",
    "/v1/pets?limit=5&status=pending&cursor=c3",
    "/v1/pets?limit=100&cursor=c150",
];

#[test]
fn a_warm_page_is_one_get_many_and_answers_as_a_page_read_key_by_key() {
    let (api, ids) = catalogue(150);
    api.assert_consistent(&ids, "readers build the index");
    let by_key = declared(&api.store, "spin");
    for target in PAGES {
        let (calls, ops, r) = page(&api, target);
        assert_eq!(r.status.as_u16(), 200, "{target}");
        assert_eq!(calls, 1, "{target}: {ops:?}");
        let Op::GetMany(keys) = &ops[0] else {
            panic!("{target}: {ops:?}")
        };
        assert!(keys.iter().any(|k| k.starts_with("ctr:")), "the counter");
        let expected = by_key.get(target);
        assert_eq!(r.body, expected.body, "{target}");
        assert_eq!(r.header("link"), expected.header("link"), "{target}");
    }
}

#[test]
fn a_page_over_a_cold_index_is_a_few_batches_and_then_warm() {
    for (list, lookups) in [("", 1), ("&status=pending", 2)] {
        let (api, ids) = catalogue(300);
        let target = format!("/v1/pets?limit=100{list}");
        let (calls, ops, r) = page(&api, &target);
        let listed = json(&r).as_array().unwrap().len();
        assert_eq!(listed, 100, "{target}");
        // Pieces and counter, the truth, one write of the rebuilt pieces.
        assert_eq!(calls, 1 + lookups + 1, "{target}: {ops:?}");
        let written = match ops.last() {
            Some(Op::SetMany(keys)) => keys.len() as i64,
            Some(Op::Set(_)) => 1,
            other => panic!("{target}: ends with {other:?}"),
        };
        assert_eq!(written, (100 - 1) / PIECE_LEN + 1, "{target}");
        let (calls, ops, _) = page(&api, &target);
        assert_eq!(calls, 1, "{target}, warm: {ops:?}");
        api.assert_consistent(&ids, &target);
    }
}

#[test]
fn holes_cost_a_page_one_batch_whatever_their_number() {
    let (api, _) = catalogue(0);
    let mut ids = BTreeSet::new();
    for i in 0..120 {
        if i % 10 == 3 {
            // A create that reserved its id and position and died: a hole.
            api.store.increment("ctr:id", 1).unwrap();
            api.store.increment("ctr:available", 1).unwrap();
        } else {
            ids.insert(api.create("p", "available"));
        }
    }
    api.assert_consistent(&ids, "with 12 holes");
    for target in ["/v1/pets?limit=100", "/v1/pets?limit=100&status=available"] {
        let (calls, ops, r) = page(&api, target);
        assert_eq!(r.status.as_u16(), 200);
        // Pieces and counter; the holes' truth (a status list's holes have
        // no slot, so there are no pets to fetch after).
        assert_eq!(calls, 2, "{target}: {ops:?}");
        assert!(
            ops.iter()
                .all(|op| matches!(op, Op::GetMany(_) | Op::Get(_))),
            "a page over holes only reads: {ops:?}"
        );
    }
}

#[test]
fn a_fault_at_any_call_of_a_batched_page_is_a_503_or_the_right_page_and_changes_no_pet() {
    for list in ["", "&status=sold"] {
        let target = format!("/v1/pets?limit=100{list}");
        let (api, ids) = catalogue(240);
        // The whole walk, from a twin of the catalogue (walking builds the
        // index, and each faulted page must find it cold).
        let expected = declared(&catalogue(240).0.store, "spin").walk(&target);
        let calls = page(&api, &target).0;
        // A fresh cold catalogue per fault: each call of the cold page fails
        // or loses its reply.
        for n in 1..=calls {
            for fault in [Fault::Fail(n), Fault::LoseReply(n)] {
                let (api, ids) = catalogue(240);
                api.store.reset_counts();
                api.store.inject(fault);
                let r = api.get(&target);
                api.store.clear_faults();
                match r.status.as_u16() {
                    200 => {
                        let listed: Vec<i64> = page_ids(&r);
                        assert_eq!(listed[..], expected[..listed.len()], "{fault:?}");
                    }
                    _ => {
                        assert_error(&r, 503, "store_unavailable");
                        assert!(n < calls, "only a read fails the page: {fault:?}");
                    }
                }
                api.assert_consistent(&ids, &format!("{target} {fault:?}"));
            }
        }
        api.assert_consistent(&ids, &target);
    }
}

#[test]
fn pages_made_while_creates_run_list_every_earlier_pet_once() {
    let (api, mut ids) = catalogue(70);
    // A walk whose every page is followed by more creates.
    for list in ["", "&status=available"] {
        let start = ids.clone();
        let mut next = Some(format!("/v1/pets?limit=9{list}"));
        let mut seen = Vec::new();
        while let Some(target) = next {
            let r = api.get(&target);
            assert_eq!(r.status.as_u16(), 200);
            seen.extend(page_ids(&r));
            next = r.header("link").map(petstore_testkit::next_target);
            for i in 0..4 {
                ids.insert(api.create("late", ["available", "sold"][i % 2]));
            }
        }
        let distinct: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), seen.len(), "{list}: listed twice");
        let wanted: BTreeSet<i64> = if list.is_empty() {
            start
        } else {
            let by_key = declared(&api.store, "spin");
            start
                .into_iter()
                .filter(|id| json(&by_key.get(&format!("/v1/pets/{id}")))["status"] == "available")
                .collect()
        };
        assert!(wanted.is_subset(&distinct), "{list}: every earlier pet");
    }
    api.assert_consistent(&ids, "after the walks");
}
