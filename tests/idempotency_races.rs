//! Keyed creates that race and fail: competitors interleaved at every step,
//! both ways of claiming on one DynamoDB store, a fault at every call, a
//! late owner, an abandoned create and its lease. Exactly one pet, always.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{
    api, assert_created, assert_error, every_attempt, pets_named, Api, Setup, BACKENDS, LEASE_MS,
    REX,
};
use petstore::response::Response;
use petstore_testkit::{Backend, Fault, Op};

/// Runs a second `post_keyed("k", REX)`, from another instance on the same
/// store whose clock is `ahead_ms` later, just before the first operation
/// that `when` matches; its answer lands in the returned cell.
fn competitor_inside(
    api: &Api,
    when: fn(&Op) -> bool,
    ahead_ms: u64,
) -> Rc<RefCell<Option<Response>>> {
    let competitor = api.twin();
    competitor.advance_ms(ahead_ms);
    let seen = Rc::new(RefCell::new(None));
    let slot = seen.clone();
    api.store.before(when, move |_| {
        *slot.borrow_mut() = Some(competitor.post_keyed("k", REX));
    });
    seen
}

/// The commit of a keyed create: the pet's `set` (counters), the swap of
/// its lane's head (lanes).
fn commit(setup: Setup) -> fn(&Op) -> bool {
    if setup.lanes() {
        |op| matches!(op, Op::Swap(k) if k.starts_with("lane:"))
    } else {
        |op| matches!(op, Op::Set(_))
    }
}

#[test]
fn a_request_while_the_first_is_in_progress_is_409_with_retry_after() {
    for backend in BACKENDS {
        let api = api(backend);
        // The second request arrives while the first is about to commit.
        let seen = competitor_inside(&api, commit(backend), 0);
        let id = assert_created(&api.post_keyed("k", REX));
        let second = seen.borrow_mut().take().unwrap();
        assert_error(&second, 409, "idempotency_key_in_use");
        assert_eq!(second.header("retry-after"), Some("10"), "{backend:?}");
        // A different request during it is told the key is taken.
        let r = api.post_keyed("k", r#"{"name":"Max","categoryId":1}"#);
        assert_error(&r, 422, "idempotency_key_reused");
        // Afterwards, the replay.
        assert_eq!(assert_created(&api.post_keyed("k", REX)), id);
        assert_eq!(api.walk("/v1/pets"), vec![id]);
    }
}

/// The steps of a keyed create of `setup` on a store of `earlier` pets,
/// each one a competitor runs inside: the counters layout's (the read of
/// the word is an `increment` by 0 or the claim's `current`, unlisted),
/// and the lanes layout's (on a new store its claim of `ctr:id`; on one
/// whose lane already holds a pet, the store of that pet).
fn steps(setup: Setup, earlier: usize) -> Vec<fn(&Op) -> bool> {
    let counters: [fn(&Op) -> bool; 6] = [
        |op| matches!(op, Op::Increment(k) if k == "ctr:id"),
        |op| matches!(op, Op::Increment(k) if k == "ctr:sold"),
        |op| matches!(op, Op::SetMany(_)),
        |op| matches!(op, Op::CasBegin(k) if k.starts_with("idem:")),
        |op| matches!(op, Op::Swap(_)),
        |op| matches!(op, Op::Set(_)),
    ];
    let lanes: [fn(&Op) -> bool; 5] = [
        |op| matches!(op, Op::CasBegin(k) if k.starts_with("idem:")),
        |op| matches!(op, Op::GetMany(_)),
        |op| matches!(op, Op::Swap(k) if k.starts_with("idem:")),
        |op| matches!(op, Op::CasBegin(k) if k.starts_with("lane:")),
        |op| matches!(op, Op::Swap(k) if k.starts_with("lane:")),
    ];
    let mut steps = if setup.lanes() {
        lanes.to_vec()
    } else {
        counters.to_vec()
    };
    if setup.lanes() && earlier == 0 {
        steps.push(|op| matches!(op, Op::CasBegin(k) if k == "ctr:id"));
        steps.push(|op| matches!(op, Op::Swap(k) if k == "ctr:id"));
    }
    if setup.lanes() && earlier > 0 {
        steps.push(|op| matches!(op, Op::SetMany(_)));
    }
    steps
}

#[test]
fn concurrent_first_requests_elect_one_creator_at_every_step() {
    // A second first-request runs entirely inside each step of the first.
    for (backend, earlier) in BACKENDS.into_iter().flat_map(|b| [(b, 0), (b, 40)]) {
        let mut ran = 0;
        let steps = steps(backend, earlier);
        for (step, when) in steps.iter().enumerate() {
            let api = api(backend);
            for n in 0..earlier {
                api.create(&format!("p{n}"), "available");
            }
            let seen = competitor_inside(&api, *when, 0);
            let first = api.post_keyed("k", REX);
            let Some(second) = seen.borrow_mut().take() else {
                continue;
            };
            ran += 1;
            let context = format!("{backend:?}, competitor inside step {step}");
            let mut ids = Vec::new();
            for r in [&first, &second] {
                match r.status.as_u16() {
                    201 => ids.push(assert_created(r)),
                    409 => {
                        assert_error(r, 409, "idempotency_key_in_use");
                    }
                    s => panic!("{context}: {s} {}", String::from_utf8_lossy(&r.body)),
                }
            }
            ids.dedup();
            assert_eq!(ids.len(), 1, "{context}: one id among the 201s");
            let (all, sold) = pets_named(&api, "Rex", "sold");
            assert_eq!(all, ids, "{context}");
            assert_eq!(sold, ids, "{context}");
            assert_eq!(
                assert_created(&api.post_keyed("k", REX)),
                ids[0],
                "{context}"
            );
        }
        assert_eq!(
            ran,
            steps.len(),
            "{backend:?}: every step had a competitor inside"
        );
    }
}

/// During a rolling upgrade on DynamoDB (a store written by 1.2.0, so of
/// layout counters), a 1.2.0 instance claims a key by `increment` by 0 and a
/// compare-and-swap from 0, a new one by put-if-absent: a request of either
/// kind run inside each step of the other still makes one pet, listed once,
/// and both replay it.
#[test]
fn both_ways_of_claiming_on_one_dynamodb_store_elect_one_creator() {
    let steps: [fn(&Op) -> bool; 6] = [
        |op| matches!(op, Op::Increment(k) if k.starts_with("idem:")),
        |op| matches!(op, Op::CasBegin(_)),
        |op| matches!(op, Op::Increment(k) if k == "ctr:id"),
        |op| matches!(op, Op::SetMany(_)),
        |op| matches!(op, Op::Swap(_)),
        |op| matches!(op, Op::Set(_)),
    ];
    for (first, second) in [("aws_dynamo", "spin"), ("spin", "aws_dynamo")] {
        for (step, when) in steps.iter().enumerate() {
            let api = api(Setup {
                backend: Backend::Dynamo,
                declared: first,
                layout: "counters",
            });
            let mut old = api.twin();
            old.set_variable("key_value_backend", "spin");
            old.create("Old", "available");
            let mut competitor = api.twin();
            competitor.set_variable("key_value_backend", second);
            let seen = Rc::new(RefCell::new(None));
            let slot = seen.clone();
            api.store.before(*when, move |_| {
                *slot.borrow_mut() = Some(competitor.post_keyed("k", REX));
            });
            let r = api.post_keyed("k", REX);
            let context = format!("{first} first, {second} inside step {step}");
            // A put-if-absent claim never increments the key's word.
            let ran = !(first == "aws_dynamo" && step == 0);
            assert_eq!(
                seen.borrow().is_some(),
                ran,
                "{context}: the competitor ran"
            );
            let mut ids: Vec<i64> = [Some(&r), seen.borrow().as_ref()]
                .into_iter()
                .flatten()
                .filter(|r| r.status.as_u16() != 409)
                .map(assert_created)
                .collect();
            ids.dedup();
            assert_eq!(ids.len(), 1, "{context}: one id among the 201s");
            let (all, sold) = pets_named(&api, "Rex", "sold");
            assert_eq!((&all, &sold), (&ids, &ids), "{context}");
            let mut other = api.twin();
            other.set_variable("key_value_backend", second);
            for replayer in [&api, &other] {
                assert_eq!(
                    assert_created(&replayer.post_keyed("k", REX)),
                    ids[0],
                    "{context}"
                );
            }
        }
    }
}

/// Retries `body` with `key` until a 201, moving the clock past the lease
/// whenever the answer is a 409, as a client honouring `Retry-After` does.
fn retry_until_created(api: &Api, key: &str, body: &str) -> i64 {
    let created = petstore_testkit::retry_until_created(
        10,
        || {
            let r = api.post_keyed(key, body);
            let after = r.header("retry-after").and_then(|v| v.parse().ok());
            (r.status.as_u16(), after, r)
        },
        |ms| api.advance_ms(ms),
    );
    assert_created(&created)
}

#[test]
fn a_fault_at_any_call_then_retries_end_in_exactly_one_pet() {
    for backend in BACKENDS {
        let calls = {
            let api = api(backend);
            api.post_keyed("k", REX);
            api.store.calls()
        };
        for n in 1..=calls {
            for fault in [Fault::Fail(n), Fault::LoseReply(n)] {
                let api = api(backend);
                api.create("before", "sold");
                api.store.reset_counts();
                api.store.inject(fault);
                let first = api.post_keyed("k", REX);
                let context = format!("{backend:?} {fault:?}: first answer {}", first.status);
                assert!(
                    [201, 503].contains(&first.status.as_u16()),
                    "{context}: {}",
                    String::from_utf8_lossy(&first.body)
                );
                let id = retry_until_created(&api, "k", REX);
                if first.status == 201 {
                    assert_eq!(assert_created(&first), id, "{context}");
                }
                let (all, sold) = pets_named(&api, "Rex", "sold");
                assert_eq!(all, vec![id], "{context}");
                assert_eq!(sold, vec![id], "{context}");
                let replay = api.post_keyed("k", REX);
                assert_eq!(assert_created(&replay), id, "{context}");
                assert_eq!(replay.header("idempotent-replayed"), Some("true"));
                // The catalogue around it is whole. (On a lanes store, a
                // create that lost its lane moved to another: the next
                // create may fill a lower round of the lane it left.)
                assert_eq!(api.walk("/v1/pets?limit=1")[0], 1, "{context}");
                let after = api.create("after", "sold");
                let walked = api.walk("/v1/pets");
                assert!(walked.contains(&after), "{context}");
                if backend.backend != Backend::Dynamo {
                    assert_eq!(Some(&after), walked.last(), "{context}");
                }
            }
        }
    }
}

#[test]
fn a_late_owner_and_the_retry_that_finished_for_it_make_one_pet() {
    for backend in BACKENDS {
        let api = api(backend);
        // The owner stalls before its commit for longer than the lease; a
        // retry finishes the create; then the owner's commit lands.
        let seen = competitor_inside(&api, commit(backend), LEASE_MS + 1);
        let owner = assert_created(&api.post_keyed("k", REX));
        let finisher = assert_created(seen.borrow().as_ref().unwrap());
        assert_eq!(owner, finisher, "{backend:?}");
        let (all, sold) = pets_named(&api, "Rex", "sold");
        assert_eq!((all, sold), (vec![owner], vec![owner]), "{backend:?}");
    }
}

#[test]
fn an_abandoned_create_holds_its_key_for_the_lease_then_a_retry_finishes_it() {
    let api = Api::new();
    // Calls 1–8 read `ctr:id` (SQLite), reserve, stage and claim (a
    // `cas_begin` is two host calls); call 9 is the commit, which fails at
    // every attempt.
    for fault in every_attempt(9, Fault::Fail) {
        api.store.inject(fault);
    }
    let message = assert_error(&api.post_keyed("k", REX), 503, "store_unavailable");
    assert!(message.contains("same Idempotency-Key"), "{message}");
    assert!(api.walk("/v1/pets").is_empty());
    assert_eq!(
        api.get("/v1/pets/1").status.as_u16(),
        404,
        "pending is not a pet"
    );
    let r = api.post_keyed("k", REX);
    assert_error(&r, 409, "idempotency_key_in_use");
    assert_eq!(r.header("retry-after"), Some("10"));
    api.advance_ms(LEASE_MS - 1500);
    assert_eq!(api.post_keyed("k", REX).header("retry-after"), Some("2"));
    assert_error(
        &api.post_keyed("k", r#"{"name":"Max","categoryId":1}"#),
        422,
        "idempotency_key_reused",
    );
    api.advance_ms(1500);
    let finished = api.post_keyed("k", REX);
    assert_eq!(assert_created(&finished), 1);
    assert_eq!(finished.header("idempotent-replayed"), None);
    assert_eq!(api.walk("/v1/pets?status=sold"), vec![1]);
    assert_eq!(
        api.post_keyed("k", REX).header("idempotent-replayed"),
        Some("true")
    );
}

#[test]
fn a_retry_past_the_commit_window_waits_while_the_owners_commit_may_land_one_pet() {
    use petstore::catalogue::{COMMIT_WITHIN_MS, SEAL_AFTER_MS};
    for setup in BACKENDS.into_iter().filter(|s| !s.lanes()) {
        let api = api(setup);
        // The owner passed its window's check; its commit lands only after
        // a retry, past the lease and the window, came in (a stalled call,
        // its retries).
        let late = LEASE_MS + COMMIT_WITHIN_MS + 1;
        let seen = competitor_inside(&api, commit(setup), late);
        let owner = assert_created(&api.post_keyed("k", REX));
        let retry = seen.borrow_mut().take().unwrap();
        assert_error(&retry, 409, "idempotency_key_in_use");
        // Until readers give the owner's record up.
        let wait = (SEAL_AFTER_MS - COMMIT_WITHIN_MS - 1)
            .div_ceil(1000)
            .to_string();
        assert_eq!(
            retry.header("retry-after"),
            Some(wait.as_str()),
            "{setup:?}"
        );
        let replay = api.post_keyed("k", REX);
        assert_eq!(assert_created(&replay), owner, "{setup:?}");
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        let (all, sold) = pets_named(&api, "Rex", "sold");
        assert_eq!((all, sold), (vec![owner], vec![owner]), "{setup:?}");
    }
}

#[test]
fn a_create_stopped_before_its_commit_frees_its_key_when_readers_give_it_up() {
    use petstore::catalogue::SEAL_AFTER_MS;
    let api = Api::new();
    // Call 9 is the commit (as above), failing at every attempt.
    for fault in every_attempt(9, Fault::Fail) {
        api.store.inject(fault);
    }
    assert_error(&api.post_keyed("k", REX), 503, "store_unavailable");
    // Past the lease and the window: still the key's, as walks still wait.
    api.advance_ms(LEASE_MS + SEAL_AFTER_MS - 1000);
    let r = api.post_keyed("k", REX);
    assert_error(&r, 409, "idempotency_key_in_use");
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(api.walk("/v1/pets").is_empty());
    // Given up: the key makes a new pet, the only one listed.
    api.advance_ms(1000);
    let id = assert_created(&api.post_keyed("k", REX));
    assert_ne!(id, 1, "the stopped create's id is given up");
    assert_eq!(api.walk("/v1/pets"), vec![id]);
    assert_eq!(api.walk("/v1/pets?status=sold"), vec![id]);
    assert_eq!(api.get("/v1/pets/1").status.as_u16(), 404);
}
