//! A DynamoDB store whose `key_value_backend` was left at its default
//! (`spin`): creates learn the store from DynamoDB's own answer to a lost
//! race, and from then on retry and commit as on DynamoDB; the success path
//! makes the same calls as before. (The health probe keeps saying the
//! declaration is wrong: tests/operations.rs, and on real `spin up`
//! on_spin/dynamo.rs.)

mod common;

use common::{assert_error, Api};
use petstore_testkit::{Backend, Fault, MemStore, Op};

/// More failures in a row than the brief policy of SQLite and Redis rides
/// out (4 attempts), fewer than DynamoDB's.
const LOST_RACES: u64 = 6;

fn undeclared_dynamodb() -> Api {
    let api = Api::on(MemStore::new(Backend::Dynamo));
    assert_eq!(
        api.variables["key_value_backend"].as_deref(),
        Ok("spin"),
        "spin.toml's default"
    );
    api
}

#[test]
fn lost_races_on_an_undeclared_dynamodb_are_retried_as_on_dynamodb() {
    let api = undeclared_dynamodb();
    api.store.reset_counts();
    // Call 1 reads `ctr:id` (declared SQLite: before any `increment`).
    for n in 2..=LOST_RACES + 1 {
        api.store.inject(Fault::Fail(n));
    }
    let r = api.post(r#"{"name":"Rex","categoryId":1,"status":"sold"}"#);
    assert_eq!(
        r.status.as_u16(),
        201,
        "{:?}",
        String::from_utf8_lossy(&r.body)
    );
    let ops = api.store.ops();
    let increments = ops
        .iter()
        .filter(|op| matches!(op, Op::Increment(_)))
        .count();
    assert_eq!(increments as u64, LOST_RACES + 2, "id (retried), status");
    // Committed as on DynamoDB, whose batches are neither atomic nor
    // ordered: the slot, then the pet, never one batch.
    let writes: Vec<&Op> = ops
        .iter()
        .filter(|op| matches!(op, Op::Set(..) | Op::SetMany(_)))
        .collect();
    assert!(
        matches!(writes.as_slice(), [Op::Set(slot), Op::Set(pet)]
            if slot.starts_with("slot:sold:") && pet == "pet:1"),
        "{writes:?}"
    );
    assert!(api.store.peek("pet:1").is_some());
    assert_eq!(api.walk("/v1/pets?status=sold&limit=10"), [1]);
}

#[test]
fn the_same_failures_on_sqlite_are_an_outage_answered_at_once() {
    let api = Api::new();
    // Each failed `increment`, not DynamoDB's lost race, is followed by a
    // read of `ctr:id` (a lanes store's mark would be a misconfiguration),
    // which fails too.
    for n in 1..=2 * LOST_RACES {
        api.store.inject(Fault::Fail(n));
    }
    let r = api.post(r#"{"name":"Rex","categoryId":1}"#);
    assert_error(&r, 503, "store_unavailable");
    assert!(api.store.keys().iter().all(|k| !k.starts_with("pet:")));
}

/// Two `spin up` on one SQLite file: an `increment` refused because the
/// other process holds the file (Spin's SQLite `increment` reads inside its
/// transaction, so SQLite refuses at once instead of waiting) is a race
/// lost, not an outage: retried as DynamoDB's are, and committed as on
/// SQLite, one batch (the CI run of 2026-11 answered one create of 640 with
/// a 503 here).
#[test]
fn increments_refused_by_a_locked_sqlite_file_are_retried_until_they_win() {
    let api = Api::new();
    // Call 1 reads `ctr:id`; the increments follow.
    for n in 2..=LOST_RACES + 1 {
        api.store.inject(Fault::Locked(n));
    }
    let r = api.post(r#"{"name":"Rex","categoryId":1,"status":"sold"}"#);
    assert_eq!(
        r.status.as_u16(),
        201,
        "{:?}",
        String::from_utf8_lossy(&r.body)
    );
    let ops = api.store.ops();
    let increments = ops
        .iter()
        .filter(|op| matches!(op, Op::Increment(_)))
        .count();
    assert_eq!(increments as u64, LOST_RACES + 2, "id (retried), status");
    let writes: Vec<&Op> = ops
        .iter()
        .filter(|op| matches!(op, Op::Set(..) | Op::SetMany(_)))
        .collect();
    assert!(matches!(writes.as_slice(), [Op::SetMany(_)]), "{writes:?}");
    assert_eq!(api.walk("/v1/pets?status=sold&limit=10"), [1]);
}

#[test]
fn without_a_lost_race_an_undeclared_dynamodb_makes_todays_calls() {
    let api = undeclared_dynamodb();
    api.store.reset_counts();
    let r = api.post(r#"{"name":"Rex","categoryId":1}"#);
    assert_eq!(r.status.as_u16(), 201);
    let ops = api.store.ops();
    // Declared SQLite, it reads `ctr:id` before its `increment`.
    assert!(
        matches!(
            ops.as_slice(),
            [
                Op::Get(_),
                Op::Increment(_),
                Op::Increment(_),
                Op::SetMany(_)
            ]
        ),
        "{ops:?}"
    );
    // A keyed create whose word's `increment` loses its races learns too.
    // Its first calls: `ctr:id`, holding a counter in text, which SQLite's
    // `increment` cannot take; the empty key, which DynamoDB refuses (so
    // the store is not SQLite, and the create goes on).
    api.store.reset_counts();
    let calls = api.store.calls() + 2;
    for n in calls + 1..=calls + LOST_RACES {
        api.store.inject(Fault::Fail(n));
    }
    let keyed = api.post_keyed("k-1", r#"{"name":"Tom","categoryId":2}"#);
    assert_eq!(keyed.status.as_u16(), 201);
    let replay = api.post_keyed("k-1", r#"{"name":"Tom","categoryId":2}"#);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
}
