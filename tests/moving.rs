//! Moving a store from the counters layout to lanes, as an operator does
//! by setting `catalogue_layout = lanes`: the next create moves it (one
//! compare-and-swap of `ctr:id`), whatever its size; pets written before
//! stay where they are, listed first; creates and walks that run across
//! the move lose nothing and list nothing twice; an instance still set to
//! counters, or a 1.2.0 one, can no longer write; a fault at any call of
//! the move leaves a store that the next create moves.

mod common;

use std::collections::BTreeSet;

use common::{assert_created, assert_error, json, page_ids, Api, REX};
use petstore_testkit::{next_of, Backend, Fault, MemStore, Op};

const STATUSES: [&str; 3] = ["available", "pending", "sold"];

/// An instance over `store` on DynamoDB, configured for `layout`.
fn instance(store: &MemStore, layout: &str) -> Api {
    let mut api = Api::on(store.clone());
    api.set_variable("key_value_backend", "aws_dynamo");
    api.set_variable("catalogue_layout", layout);
    api
}

/// A counters store of `n` pets, statuses in turn.
fn counters_store(n: usize) -> (MemStore, BTreeSet<i64>) {
    let store = MemStore::new(Backend::Dynamo);
    let old = instance(&store, "counters");
    let ids = (0..n).map(|i| old.create("old", STATUSES[i % 3])).collect();
    (store, ids)
}

#[test]
fn the_next_create_moves_the_store_and_every_pet_stays_listed() {
    for n in [0, 1, 70, 1000] {
        let (store, mut ids) = counters_store(n);
        let new = instance(&store, "lanes");
        let health = json(&new.handle_health().response);
        if n > 0 {
            assert_eq!(health["layout"], "counters", "{n}");
            assert_eq!(
                health["move"]["state"], "waiting for the next create",
                "{n}"
            );
        } else {
            assert_eq!(health["layout"], "none", "no create yet: nothing to move");
        }
        store.reset_counts();
        let first = new.create("new", "sold");
        // The heads' read; the move: `ctr:id`'s compare-and-swap from the
        // counter it read; the claim of lane 0.
        let moves: Vec<Op> = store.ops().into_iter().take(3).collect();
        assert!(
            matches!(&moves[..], [Op::GetMany(_), Op::CasBegin(k), Op::Swap(s)] if k == "ctr:id" && s == "ctr:id"),
            "{n}: {moves:?}"
        );
        let base = (n as i64 + 31) / 32 * 32 + 1;
        assert_eq!(first, base, "{n}: lanes begin past the ids before");
        ids.insert(first);
        for i in 0..40 {
            ids.insert(new.create("new", STATUSES[i % 3]));
        }
        new.assert_consistent(&ids, &format!("moved at {n}"));
        let health = json(&new.handle_health().response);
        assert_eq!(health["layout"], "lanes");
        if n > 0 {
            assert_eq!(health["move"]["ids_before"], n as i64);
            assert_eq!(
                health["move"]["state"], "settling",
                "creates of the moment may commit"
            );
            new.advance_ms(petstore::catalogue::SEAL_AFTER_MS);
            let health = json(&new.handle_health().response);
            assert_eq!(health["move"]["state"], "done");
        } else {
            assert!(
                health["move"].is_null(),
                "a store that began in lanes moved nothing"
            );
        }
    }
}

#[test]
fn instances_that_write_counters_cannot_write_a_moved_store() {
    let (store, ids) = counters_store(10);
    instance(&store, "lanes").create("new", "sold");
    let old = instance(&store, "counters");
    let keys = store.keys();
    let m = assert_error(&old.post(REX), 503, "misconfigured");
    assert!(m.contains("operators"), "{m}");
    assert_eq!(store.keys(), keys, "nothing stored");
    assert_error(&old.post_keyed("k", REX), 503, "misconfigured");
    assert_eq!(store.keys(), keys, "nothing stored: a key is claimed last");
    assert_error(&old.handle_health().response, 503, "misconfigured");
    // A keyed create made on a lanes instance, retried on one still set to
    // counters (the client never had the answer): the key's record is an
    // intent, which that instance cannot follow.
    let lanes = instance(&store, "lanes");
    let id = assert_created(&lanes.post_keyed("begun", REX));
    let keys = store.keys();
    assert_error(&old.post_keyed("begun", REX), 503, "misconfigured");
    assert_eq!(store.keys(), keys, "nothing stored");
    // Reads stay right: pages read the store's own layout.
    let mut expected = ids.clone();
    expected.extend([33, id]);
    old.assert_consistent(&expected, "read by a counters instance");
    // A 1.2.0 instance increments `ctr:id`: the mark is no number, so its
    // `increment` fails (as DynamoDB's does: it parses the value).
    assert!(petstore::store::KvStore::increment(&store, "ctr:id", 1).is_err());
}

#[test]
fn creates_and_walks_across_the_move_lose_nothing_and_list_nothing_twice() {
    let (store, mut ids) = counters_store(50);
    let old = instance(&store, "counters");
    let new = instance(&store, "lanes");
    // Walks begun before the move.
    let starts = ["/v1/pets?limit=7", "/v1/pets?limit=4&status=sold"];
    let mut walks: Vec<(Option<String>, Vec<i64>)> = starts
        .iter()
        .map(|t| (Some(t.to_string()), Vec::new()))
        .collect();
    for (next, seen) in &mut walks {
        let r = new.get(next.as_ref().unwrap());
        seen.extend(page_ids(&r));
        *next = r.header("link").and_then(next_of);
    }
    // A counters create takes its id and position, then the move runs
    // inside it, before its commit: its pet is one of the ids before.
    let mover = new.twin();
    let moved = std::rc::Rc::new(std::cell::Cell::new(0));
    let seen_id = moved.clone();
    // (Declared DynamoDB, a counters create writes its slot, then its pet.)
    store.before(
        |op| matches!(op, Op::Set(k) if k.starts_with("slot:")),
        move |_| seen_id.set(mover.create("mover", "sold")),
    );
    let late = old.create("late", "sold");
    assert_eq!(late, 51);
    ids.insert(late);
    ids.insert(moved.get());
    assert_eq!(moved.get(), 65, "lanes begin on the block past 51");
    for i in 0..30 {
        ids.insert(new.create("after", STATUSES[i % 3]));
    }
    for (next, seen) in &mut walks {
        while let Some(target) = next.take() {
            let r = new.get(&target);
            seen.extend(page_ids(&r));
            *next = r.header("link").and_then(next_of);
        }
    }
    let (all, sold) = (&walks[0].1, &walks[1].1);
    let distinct: BTreeSet<i64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), all.len(), "once each");
    assert_eq!(
        distinct, ids,
        "every pet: before, during and after the move"
    );
    let sold_ids: BTreeSet<i64> = sold.iter().copied().collect();
    assert_eq!(sold_ids.len(), sold.len());
    assert!(sold_ids.contains(&51) && sold_ids.contains(&65), "{sold:?}");
    new.assert_consistent(&ids, "after the move");
}

#[test]
fn a_key_bound_before_the_move_replays_after_it_and_a_new_one_is_lanes() {
    let (store, _) = counters_store(5);
    let old = instance(&store, "counters");
    let before = assert_created(&old.post_keyed("k", REX));
    let new = instance(&store, "lanes");
    new.create("mover", "sold");
    let replay = new.post_keyed("k", REX);
    assert_eq!(assert_created(&replay), before);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_error(
        &new.post_keyed("k", r#"{"name":"Max","categoryId":1}"#),
        422,
        "idempotency_key_reused",
    );
    let after = assert_created(&new.post_keyed("k2", REX));
    assert!(after > 32, "a lanes id: {after}");
    assert_eq!(assert_created(&new.post_keyed("k2", REX)), after);
}

#[test]
fn a_fault_at_any_call_of_the_move_leaves_a_store_the_next_create_moves() {
    for fault in [Fault::Fail as fn(u64) -> Fault, Fault::LoseReply] {
        for call in 1..=6u64 {
            let (store, mut ids) = counters_store(40);
            let new = instance(&store, "lanes");
            store.reset_counts();
            store.inject(fault(call));
            let r = new.post(r#"{"name":"x","categoryId":1,"status":"sold"}"#);
            store.clear_faults();
            let context = format!("{:?} at call {call}", fault(call));
            match r.status.as_u16() {
                201 => drop(ids.insert(json(&r)["id"].as_i64().unwrap())),
                503 => {}
                other => panic!("{context}: {other}"),
            }
            ids.insert(new.create("next", "available"));
            assert!(
                ids.iter().all(|id| *id <= 40 || *id > 64),
                "{context}: {ids:?}"
            );
            new.assert_consistent(&ids, &context);
        }
    }
}

/// getPet of an id below a moved store's lanes (they begin on the block
/// past the counters' last id): its pet, or a 404 where no create of the
/// counters committed (`pet:33` removed: a create that failed), never a
/// lane's head.
#[test]
fn get_pet_below_the_lanes_of_a_moved_store_is_the_counters() {
    let (store, _) = counters_store(40);
    store.remove("pet:33");
    let new = instance(&store, "lanes");
    assert_eq!(new.create("new", "sold"), 65, "the lanes begin at 65");
    for id in [1, 40] {
        assert_eq!(new.get(&format!("/v1/pets/{id}")).status.as_u16(), 200);
    }
    for id in [33, 41, 64] {
        assert_error(&new.get(&format!("/v1/pets/{id}")), 404, "not_found");
    }
}
