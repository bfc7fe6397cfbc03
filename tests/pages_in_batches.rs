//! Pages on a store declared `aws_dynamo`, where each call is a round trip
//! to a remote store, in both layouts it may hold (counters, written by
//! 1.2.0 or configured so; lanes): a page reads its pieces, the layout and
//! the heads in one `get-many`, what they lack in a few more, and writes its
//! repairs in one call; the answers are those of a page read a `get` at a
//! time (counters) or of the same catalogue in the counters layout (lanes),
//! and faults at any of its calls change nothing stored.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, json, page_ids, Api};
use petstore::store::KvStore;
use petstore_testkit::{Backend, Fault, MemStore, Op};

/// An API over `store` declared as `backend` (`key_value_backend`),
/// configured for `layout` (`catalogue_layout`).
fn declared(store: &MemStore, backend: &str, layout: &str) -> Api {
    let mut api = Api::on(store.clone());
    api.set_variable("key_value_backend", backend);
    api.set_variable("catalogue_layout", layout);
    api
}

/// Which layout the store holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    /// Written by 1.2.0 (here: by an instance declared `spin`, which writes
    /// the counters layout), read by instances declared `aws_dynamo`.
    Counters,
    /// Configured `lanes` from its first create.
    Lanes,
}

const LAYOUTS: [Layout; 2] = [Layout::Counters, Layout::Lanes];

/// `n` pets, statuses in turn, on a store of `layout`; an API declared
/// DynamoDB over it, and the ids.
fn catalogue_in(layout: Layout, n: usize) -> (Api, BTreeSet<i64>) {
    let store = MemStore::new(Backend::Memory);
    let (api, writer) = match layout {
        Layout::Counters => (
            declared(&store, "aws_dynamo", "counters"),
            declared(&store, "spin", "counters"),
        ),
        Layout::Lanes => (
            declared(&store, "aws_dynamo", "lanes"),
            declared(&store, "aws_dynamo", "lanes"),
        ),
    };
    let ids = (0..n)
        .map(|i| writer.create("p", ["available", "pending", "sold"][i % 3]))
        .collect();
    (api, ids)
}

/// What a page should answer: the same catalogue in the counters layout,
/// read a `get` at a time, its index built by walks.
fn by_key(n: usize) -> Api {
    let (api, ids) = catalogue_in(Layout::Counters, n);
    let by_key = declared(&api.store, "spin", "counters");
    by_key.assert_consistent(&ids, "the index built");
    by_key
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
    let by_key = by_key(150);
    for layout in LAYOUTS {
        let (api, ids) = catalogue_in(layout, 150);
        // Twice: a page writes back at most 25 pieces, and a status page
        // over 32 lanes touches 32.
        api.assert_consistent(&ids, "readers build the index");
        api.assert_consistent(&ids, "readers build the rest of it");
        for target in PAGES {
            let (calls, ops, r) = page(&api, target);
            assert_eq!(r.status.as_u16(), 200, "{layout:?} {target}");
            assert_eq!(calls, 1, "{layout:?} {target}: {ops:?}");
            let Op::GetMany(keys) = &ops[0] else {
                panic!("{target}: {ops:?}")
            };
            assert!(keys.iter().any(|k| k == "ctr:id"), "the layout");
            // A counters cursor of a status list is a position in it: on a
            // lanes store, the same page only from the first.
            if layout == Layout::Counters
                || !target.contains("status=")
                || !target.contains("cursor")
            {
                let expected = by_key.get(target);
                assert_eq!(r.body, expected.body, "{layout:?} {target}");
            }
            if layout == Layout::Counters {
                let expected = by_key.get(target);
                assert_eq!(r.header("link"), expected.header("link"), "{target}");
            }
        }
        for list in ["", "?status=sold", "?status=pending&limit=7"] {
            let target = format!("/v1/pets{list}");
            assert_eq!(
                api.walk(&target),
                by_key.walk(&target),
                "{layout:?} {target}"
            );
        }
    }
}

#[test]
fn a_page_over_a_cold_index_is_a_few_batches_and_then_warm() {
    // Counters: pieces and counter, the truth (a status list: slots, then
    // pets), one write of the rebuilt pieces. Lanes: pieces and heads (a
    // walk's first page reads its blocks first, and the heads only when
    // the blocks are not whole: here, cold, they are absent), the
    // stored pets (a status list: its entries, in as many batches as its
    // lanes need to be merged), one write of the pieces they filled: at
    // most 25 (DynamoDB's `BatchWriteItem` limit); a status page writes
    // first the whole merged blocks of its settled pets (here 2), so over
    // 32 lanes it leaves 9 pieces for the next page, which fills them in
    // one call more, and the page after it is warm.
    let cases = [
        (Layout::Counters, "", 1, 4, 0),
        (Layout::Counters, "&status=pending", 2, 4, 0),
        (Layout::Lanes, "", 2, 4, 0),
        (Layout::Lanes, "&status=pending", 1, 25, 9),
    ];
    for (layout, list, lookups, pieces, left) in cases {
        let (api, ids) = catalogue_in(layout, 300);
        let target = format!("/v1/pets?limit=100{list}");
        let (calls, ops, r) = page(&api, &target);
        let listed = json(&r).as_array().unwrap().len();
        assert_eq!(listed, 100, "{target}");
        assert_eq!(calls, 1 + lookups + 1, "{layout:?} {target}: {ops:?}");
        let written = |ops: &[Op]| match ops.last() {
            Some(Op::SetMany(keys)) => keys.len(),
            Some(Op::Set(_)) => 1,
            other => panic!("{target}: ends with {other:?}"),
        };
        assert_eq!(written(&ops), pieces, "{layout:?} {target}");
        if let (Layout::Lanes, Some(Op::SetMany(keys))) = (layout, ops.last()) {
            // The settled blocks first (ids to 256: positions 1 to 64 of
            // a status), and the unfiltered list writes none.
            let merged: Vec<&str> = keys
                .iter()
                .map(String::as_str)
                .take_while(|k| k.starts_with("ixm:"))
                .collect();
            let expected: &[&str] = if list.is_empty() {
                &[]
            } else {
                &["ixm:pending:0", "ixm:pending:1"]
            };
            assert_eq!(merged, expected, "{target}");
        }
        if left > 0 {
            let (calls, ops, again) = page(&api, &target);
            assert_eq!(again.body, r.body, "{target}: the same page");
            assert_eq!(calls, 3, "{layout:?} {target}, the rest: {ops:?}");
            assert_eq!(written(&ops), left, "{layout:?} {target}");
        }
        let (calls, ops, _) = page(&api, &target);
        assert_eq!(calls, 1, "{layout:?} {target}, warm: {ops:?}");
        api.assert_consistent(&ids, &target);
    }
}

/// Counters only: a lanes store has no holes (a create that fails before
/// its head's swap stored nothing; `tests/lanes.rs`).
#[test]
fn holes_cost_a_page_one_batch_whatever_their_number() {
    let (api, _) = catalogue_in(Layout::Counters, 0);
    let writer = declared(&api.store, "spin", "counters");
    writer.create("first", "available");
    let mut ids = BTreeSet::from([1]);
    for i in 1..120i64 {
        if i % 10 == 3 {
            // A create that reserved its id and position and died: a hole.
            api.store.increment("ctr:id", 1).unwrap();
            api.store.increment("ctr:available", 1).unwrap();
        } else {
            ids.insert(writer.create("p", "available"));
        }
    }
    assert_eq!(ids.len(), 108);
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
    for (layout, list) in [
        (Layout::Counters, ""),
        (Layout::Counters, "&status=sold"),
        (Layout::Lanes, ""),
        (Layout::Lanes, "&status=sold"),
    ] {
        let target = format!("/v1/pets?limit=100{list}");
        let (api, ids) = catalogue_in(layout, 240);
        // The whole walk, from another catalogue (walking builds the
        // index, and each faulted page must find it cold).
        let expected = by_key(240).walk(&target);
        let calls = page(&api, &target).0;
        // A fresh cold catalogue per fault: each call of the cold page fails
        // or loses its reply.
        for n in 1..=calls {
            for fault in [Fault::Fail(n), Fault::LoseReply(n)] {
                let (api, ids) = catalogue_in(layout, 240);
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
    let (api, mut ids) = catalogue_in(Layout::Lanes, 70);
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
            for i in 0..4.min(60usize.saturating_sub(seen.len())) {
                ids.insert(api.create("late", ["available", "sold"][i % 2]));
            }
        }
        let distinct: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), seen.len(), "{list}: listed twice");
        let wanted: BTreeSet<i64> = if list.is_empty() {
            start
        } else {
            let by_key = declared(&api.store, "aws_dynamo", "lanes");
            start
                .into_iter()
                .filter(|id| json(&by_key.get(&format!("/v1/pets/{id}")))["status"] == "available")
                .collect()
        };
        assert!(wanted.is_subset(&distinct), "{list}: every earlier pet");
    }
    api.assert_consistent(&ids, "after the walks");
}
