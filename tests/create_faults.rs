//! A create on the key-value store under faults: a failure or a lost reply
//! at every call answers 503 with nothing visible or a true 201; retried
//! increments leave gaps, never duplicates; a commit whose outcome cannot
//! be read back says so; and what a create writes.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, attempts, every_attempt, json, Api, QUIRKS};
use petstore::model::PetStatus;
use petstore_testkit::{Backend, Fault, MemStore, Op};

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
    for backend in QUIRKS {
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
    // Its calls: the `get` of `ctr:id` (SQLite), then the increment.
    api.store.inject(Fault::LoseReply(api.store.calls() + 2));
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
/// 503 that stored nothing. After a failure it reads `ctr:id` (a store of
/// the lanes layout would be a misconfiguration, not an outage to wait
/// out), until one such read succeeds: here, failing too, after each.
#[test]
fn an_increment_that_keeps_failing_is_a_503_after_the_bounded_retries() {
    use petstore::retry::{policy, Policy};
    for (backend, policy) in [("spin", Policy::BRIEF), ("aws_dynamo", Policy::CONTENDED)] {
        let mut api = Api::new();
        api.set_variable("key_value_backend", backend);
        api.create("a", "sold");
        api.random.set([0x9d; 16]);
        let attempts = u64::from(policy.attempts_when_every_draw_is([0x9d; 16]));
        // On SQLite the create reads `ctr:id` first (one call).
        let first = api.store.calls() + if backend == "spin" { 2 } else { 1 };
        for n in first..first + 2 * attempts {
            api.store.inject(Fault::Fail(n));
        }
        let keys = api.store.keys();
        api.sleeps.borrow_mut().clear();
        assert_error(
            &api.post(r#"{"name":"b","categoryId":1}"#),
            503,
            "store_unavailable",
        );
        assert_eq!(api.store.calls(), first - 1 + 2 * attempts, "{backend}");
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
    // Calls of a first create: get, increment, increment, set-many (4th):
    // its reply is lost, and every retry fails.
    lose_the_first_commits_reply(&api);
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
    // The set-many's reply is lost and its retries fail (calls 4 to
    // 3 + attempts); the slot is written again, then every read-back fails:
    // nobody knows.
    let api = Api::new();
    lose_the_first_commits_reply(&api);
    for fault in every_attempt(5 + attempts(), Fault::Fail) {
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
    for fault in every_attempt(4, Fault::Fail) {
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
fn a_create_reads_ctr_id_then_is_two_increments_and_one_set_many() {
    for status in PetStatus::ALL {
        let api = Api::new();
        api.create("first", "available");
        api.store.reset_counts();
        api.create("c", status.as_str());
        let position = if status == PetStatus::Available { 2 } else { 1 };
        assert_eq!(
            api.store.ops(),
            vec![
                // SQLite: what `ctr:id` holds, before its `increment`.
                Op::Get("ctr:id".into()),
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

/// The first create's commit (its 4th call, the `set-many`) is applied but
/// its reply lost, and every retry of it fails.
fn lose_the_first_commits_reply(api: &Api) {
    api.store.inject(Fault::LoseReply(4));
    for fault in every_attempt(4, Fault::Fail).into_iter().skip(1) {
        api.store.inject(fault);
    }
}
