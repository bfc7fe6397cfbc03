//! Layout v3 (a DynamoDB store created by this release): ids from 16
//! sequences, one `increment` and one `set` per create, status lists read
//! from the unfiltered list. Which layout a store gets and keeps; ids one
//! at a time and under races; walks that list every earlier pet once
//! whatever the interleaving; a failure or a lost reply at every call of a
//! create; a rare status; instances that write only layout v2 refused.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, json, page_ids, Api};
use petstore::catalogue::V3_MARK;
use petstore_testkit::{Backend, Fault, MemStore, Op};

/// An instance declared `backend` over `store`.
fn declared(store: &MemStore, backend: &str) -> Api {
    let mut api = Api::on(store.clone());
    api.set_variable("key_value_backend", backend);
    api
}

fn dynamo() -> Api {
    declared(&MemStore::new(Backend::Dynamo), "aws_dynamo")
}

fn counter(api: &Api, key: &str) -> Option<i64> {
    api.store
        .peek(key)
        .map(|v| String::from_utf8(v).unwrap().parse().unwrap())
}

const STATUSES: [&str; 3] = ["available", "pending", "sold"];

#[test]
fn a_new_dynamodb_store_gets_layout_v3_and_creates_one_at_a_time_get_1_2_3() {
    let api = dynamo();
    let ids: Vec<i64> = (0..40).map(|i| api.create("p", STATUSES[i % 3])).collect();
    assert_eq!(ids, (1..=40).collect::<Vec<_>>());
    assert_eq!(counter(&api, "ctr:id"), Some(V3_MARK), "the mark");
    // 40 ids over 16 sequences: 3, 3, 3, 3, 3, 3, 3, 3, 2, …
    assert_eq!(counter(&api, "ids:0"), Some(3));
    assert_eq!(counter(&api, "ids:15"), Some(2));
    let keys = api.store.keys();
    assert!(!keys.iter().any(|k| k.starts_with("slot:")), "no slots");
    assert!(
        !keys.iter().any(|k| k.starts_with("ctr:sold")),
        "no status counter"
    );
    // A create: the sequences, one increment, the pet.
    api.store.reset_counts();
    api.create("p", "sold");
    let ops = api.store.ops();
    assert!(
        matches!(&ops[..], [Op::GetMany(_), Op::Increment(k), Op::Set(p)] if k == "ids:8" && p == "pet:41"),
        "{ops:?}"
    );
    let expected: BTreeSet<i64> = (1..=41).collect();
    api.assert_consistent(&expected, "v3");
}

#[test]
fn a_store_written_by_an_earlier_release_keeps_layout_v2_with_no_step() {
    // Written as 1.2.0 writes (an instance that writes layout v2).
    let store = MemStore::new(Backend::Dynamo);
    let old = declared(&store, "spin");
    let mut expected: BTreeSet<i64> = (0..10)
        .map(|i| old.create("old", STATUSES[i % 3]))
        .collect();
    // The new release, declared, on the same store, beside the old one.
    let new = declared(&store, "aws_dynamo");
    for i in 0..10 {
        expected.insert(new.create("new", STATUSES[i % 3]));
        expected.insert(old.create("old", STATUSES[i % 3]));
    }
    assert_eq!(expected, (1..=30).collect::<BTreeSet<_>>());
    assert_eq!(counter(&new, "ctr:id"), Some(30), "still a counter");
    assert!(new.store.keys().iter().all(|k| !k.starts_with("ids:")));
    assert!(
        new.store.peek("slot:sold:9").is_some(),
        "slots, as 1.2.0 reads"
    );
    new.assert_consistent(&expected, "new instance");
    old.assert_consistent(&expected, "old instance");
}

#[test]
fn a_release_of_layout_v2_creating_first_keeps_the_store_v2() {
    // A 1.2.0 instance creates inside the new one's claim of the layout.
    let store = MemStore::new(Backend::Dynamo);
    let old = declared(&store, "spin");
    let new = declared(&store, "aws_dynamo");
    let raced = std::rc::Rc::new(std::cell::Cell::new(0));
    let seen = raced.clone();
    store.before(
        |op| matches!(op, Op::CasBegin(k) if k == "ctr:id"),
        move |_| seen.set(old.create("old", "sold")),
    );
    let id = new.create("new", "sold");
    assert_eq!((raced.get(), id), (1, 2));
    assert_eq!(counter(&new, "ctr:id"), Some(2), "layout v2");
    let sold = new.walk("/v1/pets?status=sold");
    assert_eq!(sold, vec![1, 2]);
}

#[test]
fn an_instance_that_writes_only_layout_v2_is_refused_on_a_v3_store() {
    let api = dynamo();
    let expected: BTreeSet<i64> = (0..5).map(|_| api.create("p", "sold")).collect();
    let undeclared = declared(&api.store, "spin");
    let r = undeclared.post(r#"{"name":"x","categoryId":1,"status":"sold"}"#);
    assert_error(&r, 500, "internal_error");
    for target in ["/v1/pets", "/v1/pets?status=sold"] {
        assert_error(&undeclared.get(target), 500, "internal_error");
    }
    // It drew an id no sequence hands out, and stored no pet.
    assert_eq!(counter(&api, "ctr:id"), Some(V3_MARK + 1));
    assert!(api.store.peek(&format!("pet:{}", V3_MARK + 1)).is_none());
    api.assert_consistent(&expected, "the declared instance still serves it");
    assert_eq!(api.create("p", "sold"), 6);
}

/// Creates whose `increment`s fail now and then (a race lost, on DynamoDB):
/// each moves to another sequence, ids come out of order, and walks made
/// between the creates, from two instances, list every earlier pet once.
#[test]
fn races_scatter_ids_over_sequences_and_walks_stay_exact() {
    let a = dynamo();
    let b = a.twin();
    let mut ids = BTreeSet::new();
    let mut in_order = true;
    let mut last = 0;
    let mut walks = 0;
    for i in 0..150usize {
        let api = if i % 2 == 0 { &a } else { &b };
        if i % 3 == 1 {
            // The create's increment fails once: a race lost.
            api.store.inject(Fault::Fail(api.store.calls() + 2));
            api.random.set([i as u8; 16]);
        }
        let id = api.create("p", STATUSES[i % 3]);
        api.store.clear_faults();
        assert!(ids.insert(id), "{id} twice");
        in_order &= id > last;
        last = last.max(id);
        if i % 25 == 24 {
            // Whole walks, pages of 7, between creates.
            a.assert_consistent(&ids, &format!("after {i}"));
            walks += 1;
        }
    }
    assert!(!in_order, "races gave ids out of order");
    assert_eq!(walks, 6);
    // Each id below the highest is a pet or was never handed out: no
    // sequence skipped one.
    let sequences: i64 = (0..16)
        .map(|k| counter(&a, &format!("ids:{k}")).unwrap_or(0))
        .sum();
    assert_eq!(sequences as usize, ids.len());
    // A walk with creates after every page lists every earlier pet once.
    for list in ["", "&status=pending"] {
        let start: BTreeSet<i64> = a
            .walk(&format!("/v1/pets?limit=100{list}"))
            .into_iter()
            .collect();
        let mut next = Some(format!("/v1/pets?limit=9{list}"));
        let mut seen = Vec::new();
        let mut n = 0;
        while let Some(target) = next {
            let r = b.get(&target);
            assert_eq!(r.status.as_u16(), 200);
            seen.extend(page_ids(&r));
            next = r.header("link").map(petstore_testkit::next_target);
            for _ in 0..3 {
                a.store.inject(Fault::Fail(a.store.calls() + 2));
                a.random.set([n as u8; 16]);
                n += 1;
                ids.insert(a.create("late", STATUSES[n % 3]));
                a.store.clear_faults();
            }
        }
        let distinct: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), seen.len(), "{list}: listed twice");
        assert!(start.is_subset(&distinct), "{list}: every earlier pet");
    }
    a.assert_consistent(&ids, "after the walks");
}

#[test]
fn a_failure_or_lost_reply_at_any_call_of_a_create_is_503_with_nothing_visible_or_a_true_201() {
    // A create on a store of 40 pets: the sequences, the increment, the pet
    // (and a read-back), each failing or losing its reply, even twice.
    for fault in (1..=5u64).flat_map(|n| [Fault::Fail(n), Fault::LoseReply(n)]) {
        for repeat in [1, 2] {
            let api = dynamo();
            let mut expected: BTreeSet<i64> =
                (0..40).map(|i| api.create("x", STATUSES[i % 3])).collect();
            api.store.reset_counts();
            api.store.inject(fault);
            if repeat == 2 {
                let again = match fault {
                    Fault::Fail(n) => Fault::Fail(n + 1),
                    Fault::LoseReply(n) => Fault::LoseReply(n + 1),
                    other => other,
                };
                api.store.inject(again);
            }
            let r = api.post(r#"{"name":"new","categoryId":1,"status":"sold"}"#);
            api.store.clear_faults();
            let context = format!("{fault:?} x{repeat}");
            match r.status.as_u16() {
                201 => {
                    let id = json(&r)["id"].as_i64().unwrap();
                    assert!(expected.insert(id), "{context}: a new id");
                }
                503 => {
                    assert_error(&r, 503, "store_unavailable");
                }
                other => panic!("{context}: status {other}"),
            }
            expected.insert(api.create("after", "sold"));
            api.assert_consistent(&expected, &context);
        }
    }
}

#[test]
fn a_rare_status_is_walked_in_short_pages_of_bounded_cost() {
    let api = dynamo();
    let mut sold = Vec::new();
    for i in 0..3000 {
        let status = if i % 1000 == 500 { "sold" } else { "available" };
        let id = api.create("p", status);
        if status == "sold" {
            sold.push(id);
        }
    }
    // Warm the unfiltered list's pieces, then walk the rare status.
    api.walk("/v1/pets?limit=100");
    let mut next = Some("/v1/pets?limit=100&status=sold".to_string());
    let (mut seen, mut pages) = (Vec::new(), 0);
    while let Some(target) = next {
        api.store.reset_counts();
        let r = api.get(&target);
        assert_eq!(r.status.as_u16(), 200);
        assert_eq!(api.store.calls(), 1, "a warm page is one get-many");
        seen.extend(page_ids(&r));
        next = r.header("link").map(petstore_testkit::next_target);
        pages += 1;
    }
    assert_eq!(seen, sold);
    // 3,000 ids, 1,024 a page.
    assert_eq!(pages, 3);
}
