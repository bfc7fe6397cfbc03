//! Safe retries of createPet (`Idempotency-Key`), asserted on what a client
//! sees and on what is stored, over the in-memory store with each backend's
//! quirks, faults at every call, and competitors interleaved at every step.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{assert_error, every_attempt, json, Api, KEY, LEASE_MS};
use http::Method;
use petstore::catalogue::keys::record_key;
use petstore::model::IdempotencyKey;
use petstore::response::Response;
use petstore_testkit::{Backend, Fault, MemStore, Op};

/// Each backend's quirks, with the `key_value_backend` it is declared as
/// (which chooses how a keyed create claims its key).
const BACKENDS: [(Backend, &str); 4] = [
    (Backend::Clean, "spin"),
    (Backend::Sqlite, "spin"),
    (Backend::Redis, "redis"),
    (Backend::Dynamo, "aws_dynamo"),
];
const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

fn api((backend, declared): (Backend, &str)) -> Api {
    let mut api = Api::on(MemStore::new(backend));
    api.set_variable("key_value_backend", declared);
    api
}

fn assert_created(r: &Response) -> i64 {
    assert_eq!(
        r.status.as_u16(),
        201,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let id = json(r)["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/v1/pets/{id}").as_str())
    );
    id
}

/// The pets named `name`: in the unfiltered walk, in the walk of `status`,
/// and fetchable one by one.
fn pets_named(api: &Api, name: &str, status: &str) -> (Vec<i64>, Vec<i64>) {
    let named = |target: &str| {
        api.walk(target)
            .into_iter()
            .filter(|id| json(&api.get(&format!("/v1/pets/{id}")))["name"] == name)
            .collect::<Vec<_>>()
    };
    (
        named("/v1/pets?limit=100"),
        named(&format!("/v1/pets?status={status}&limit=100")),
    )
}

#[test]
fn a_replay_is_the_same_201_byte_for_byte_and_creates_nothing() {
    for backend in BACKENDS {
        let api = api(backend);
        let first = api.post_keyed("order-1", REX);
        let id = assert_created(&first);
        assert_eq!(first.header("idempotent-replayed"), None);
        let keys = api.store.keys();
        let again = api.post_keyed("\"order-1\"", REX);
        assert_eq!(again.status, first.status);
        assert_eq!(again.body, first.body, "{backend:?}");
        assert_eq!(again.header("location"), first.header("location"));
        assert_eq!(again.header("content-type"), Some("application/json"));
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(api.store.keys(), keys, "a replay stores nothing");
        assert_eq!(api.walk("/v1/pets"), vec![id]);
    }
}

#[test]
fn the_fingerprint_is_the_parsed_request_after_defaults() {
    let api = Api::new();
    let id = assert_created(&api.post_keyed("k", r#"{"name":"Rex","categoryId":7}"#));
    for same in [
        r#"{"categoryId":7,"name":"Rex"}"#,
        r#" { "name" : "Rex" , "categoryId" : 7 , "status" : "available" } "#,
        r#"{"name":"Rex","categoryId":7,"id":99,"extra":[1]}"#,
    ] {
        let r = api.post_keyed("k", same);
        assert_eq!(assert_created(&r), id, "{same}");
        assert_eq!(r.header("idempotent-replayed"), Some("true"));
    }
    assert_eq!(api.walk("/v1/pets"), vec![id]);
}

#[test]
fn another_request_with_a_used_key_is_422_and_stores_nothing() {
    for backend in BACKENDS {
        let api = api(backend);
        assert_created(&api.post_keyed("k", REX));
        let keys = api.store.keys();
        for other in [
            r#"{"name":"Rex","categoryId":8,"status":"sold"}"#,
            r#"{"name":"Rex","categoryId":7}"#,
            r#"{"name":"Max","categoryId":7,"status":"sold"}"#,
        ] {
            let message = assert_error(&api.post_keyed("k", other), 422, "idempotency_key_reused");
            assert!(message.contains("Idempotency-Key"), "{message}");
        }
        assert_eq!(api.store.keys(), keys);
        // Another key is another pet.
        assert_eq!(assert_created(&api.post_keyed("k2", REX)), 2);
    }
}

#[test]
fn keys_are_stored_only_as_digests() {
    let api = Api::new();
    let id = assert_created(&api.post_keyed("my/secret?key#1", REX));
    let record = record_key(&IdempotencyKey::parse(b"my/secret?key#1").unwrap());
    assert!(api.store.keys().iter().all(|k| !k.contains("secret")));
    // The record is a counter word holding the pet's id.
    assert_eq!(api.store.peek(&record), Some(id.to_le_bytes().to_vec()));
}

#[test]
fn malformed_keys_are_400_invalid_header_and_store_nothing() {
    let api = Api::new();
    let long = "k".repeat(256);
    for bad in [
        "",
        "\"\"",
        long.as_str(),
        "a b",
        "a\"b",
        "\"ab",
        "a\\b",
        "ключ",
    ] {
        let message = assert_error(&api.post_keyed(bad, REX), 400, "invalid_header");
        assert!(message.contains("Idempotency-Key"), "{bad}: {message}");
    }
    let auth = format!("Bearer {KEY}");
    let twice = api.request(
        Method::POST,
        "/v1/pets",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("Idempotency-Key", "a"),
            ("Idempotency-Key", "a"),
        ],
        REX.as_bytes(),
    );
    assert_error(&twice, 400, "invalid_header");
    assert!(api.store.keys().is_empty());
    assert_created(&api.post_keyed(&"k".repeat(255), REX));
}

#[test]
fn checks_run_in_the_documented_order() {
    let api = Api::new();
    let post = |headers: &[(&str, &str)], body: &[u8]| {
        api.request(Method::POST, "/v1/pets", headers, body)
    };
    let auth = format!("Bearer {KEY}");
    let bad_key = ("Idempotency-Key", "a b");
    let json_type = ("Content-Type", "application/json");
    // 401 before everything.
    assert_error(&post(&[json_type, bad_key], b"{"), 401, "unauthorized");
    // 415, then 413, before the header.
    assert_error(
        &post(
            &[
                ("Authorization", &auth),
                ("Content-Type", "text/plain"),
                bad_key,
            ],
            REX.as_bytes(),
        ),
        415,
        "unsupported_media_type",
    );
    assert_error(
        &post(
            &[("Authorization", &auth), json_type, bad_key],
            &vec![b' '; 16 * 1024 + 1],
        ),
        413,
        "payload_too_large",
    );
    // The header, then the body.
    assert_error(
        &post(&[("Authorization", &auth), json_type, bad_key], b"{"),
        400,
        "invalid_header",
    );
    assert_error(&api.post_keyed("k", "{"), 400, "invalid_body");
    // A wrong method with a key is still a 405 (the header is createPet's).
    let r = api.request(
        Method::PUT,
        "/v1/pets",
        &[("Authorization", &auth), bad_key],
        b"",
    );
    assert_error(&r, 405, "method_not_allowed");
    assert!(api.store.keys().is_empty());
}

#[test]
fn failed_validation_binds_nothing_and_the_key_can_be_reused() {
    let api = Api::new();
    let auth = format!("Bearer {KEY}");
    let keyed = |content_type: &str, body: &[u8]| {
        api.request(
            Method::POST,
            "/v1/pets",
            &[
                ("Authorization", &auth),
                ("Content-Type", content_type),
                ("Idempotency-Key", "k"),
            ],
            body,
        )
    };
    assert_error(
        &keyed("application/json", b"{\"name\":\"\"}"),
        400,
        "invalid_body",
    );
    assert_error(
        &keyed("text/plain", REX.as_bytes()),
        415,
        "unsupported_media_type",
    );
    assert_error(
        &keyed("application/json", &vec![b' '; 20_000]),
        413,
        "payload_too_large",
    );
    let wrong = api.request(
        Method::POST,
        "/v1/pets",
        &[
            ("Authorization", "Bearer wrong"),
            ("Content-Type", "application/json"),
            ("Idempotency-Key", "k"),
        ],
        REX.as_bytes(),
    );
    assert_error(&wrong, 401, "unauthorized");
    assert!(api.store.keys().is_empty());
    // Now the fixed request takes the key.
    let id = assert_created(&api.post_keyed("k", REX));
    assert_eq!(
        api.post_keyed("k", REX).header("idempotent-replayed"),
        Some("true")
    );
    assert_eq!(api.walk("/v1/pets"), vec![id]);
}

// Without the header a create makes the same three calls as before:
// tests/storage.rs, a_create_is_two_increments_and_one_set_many_and_never_touches_the_index.

#[test]
fn a_keyed_create_costs_a_constant_number_of_calls_and_three_keys() {
    for backend in BACKENDS {
        let api = api(backend);
        let first = api.post_keyed("k", REX);
        let id = assert_created(&first);
        // The read of the key's word (an `increment` by 0; on DynamoDB the
        // claim's own `new` and `current`), two `increment`s (the id, the
        // position), the stage, the claim (its `new` and `current`, and
        // `swap`; read back on Redis, which reports a conflict after
        // writing), the commit.
        let calls = match backend.0 {
            Backend::Redis => 8,
            Backend::Dynamo => 6,
            _ => 7,
        };
        assert_eq!(
            api.store.ops().len(),
            calls,
            "{backend:?}: {:?}",
            api.store.ops()
        );
        let record = record_key(&IdempotencyKey::parse(b"k").unwrap());
        let mut stored = vec![
            "ctr:id".to_string(),
            "ctr:sold".into(),
            record,
            format!("pet:{id}"),
            "slot:sold:1".into(),
        ];
        stored.sort();
        assert_eq!(api.store.keys(), stored, "{backend:?}");
        assert_eq!(json(&api.get(&format!("/v1/pets/{id}")))["name"], "Rex");
        api.store.reset_counts();
        let replay = api.post_keyed("k", REX);
        assert_eq!(replay.body, first.body);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(api.store.ops().len(), 2, "a replay: the word and the pet");
        if backend.0 == Backend::Dynamo {
            assert!(
                matches!(api.store.ops()[0], Op::CasBegin(_)),
                "read by the claim's compare-and-swap"
            );
        }
        assert_eq!(api.store.keys(), stored, "a replay stores nothing");
    }
}

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

#[test]
fn a_request_while_the_first_is_in_progress_is_409_with_retry_after() {
    for backend in BACKENDS {
        let api = api(backend);
        // The second request arrives while the first is about to commit.
        let seen = competitor_inside(&api, |op| matches!(op, Op::Set(_)), 0);
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

#[test]
fn concurrent_first_requests_elect_one_creator_at_every_step() {
    // A second first-request runs entirely inside each step of the first.
    let steps: [fn(&Op) -> bool; 6] = [
        |op| matches!(op, Op::Increment(k) if k == "ctr:id"),
        |op| matches!(op, Op::Increment(k) if k == "ctr:sold"),
        |op| matches!(op, Op::SetMany(_)),
        |op| matches!(op, Op::CasBegin(_)),
        |op| matches!(op, Op::Swap(_)),
        |op| matches!(op, Op::Set(_)),
    ];
    for backend in BACKENDS {
        for (step, when) in steps.iter().enumerate() {
            let api = api(backend);
            let seen = competitor_inside(&api, *when, 0);
            let first = api.post_keyed("k", REX);
            let second = seen.borrow_mut().take().unwrap();
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
    }
}

/// During a rolling upgrade on DynamoDB, a 1.2.0 instance claims a key by
/// `increment` by 0 and a compare-and-swap from 0, a new one by
/// put-if-absent: a request of either kind run inside each step of the
/// other still makes one pet, listed once, and both replay it.
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
            let api = api((Backend::Dynamo, first));
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
    for _ in 0..10 {
        let r = api.post_keyed(key, body);
        match r.status.as_u16() {
            201 => return assert_created(&r),
            409 => {
                let wait: u64 = r.header("retry-after").unwrap().parse().unwrap();
                api.advance_ms(wait * 1000);
            }
            503 => {}
            s => panic!("{s}: {}", String::from_utf8_lossy(&r.body)),
        }
    }
    panic!("no 201 after 10 retries");
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
                // The catalogue around it is whole.
                assert_eq!(api.walk("/v1/pets?limit=1")[0], 1, "{context}");
                assert_eq!(
                    api.create("after", "sold"),
                    api.walk("/v1/pets").last().copied().unwrap()
                );
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
        let seen = competitor_inside(&api, |op| matches!(op, Op::Set(_)), LEASE_MS + 1);
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
    // Calls 1–7 reserve, stage and claim (a `cas_begin` is two host
    // calls); call 8 is the commit, which fails at every attempt.
    for fault in every_attempt(8, Fault::Fail) {
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
fn a_misconfigured_lease_fails_keyed_creates_and_the_probe_and_nothing_else() {
    let mut api = Api::new();
    api.set_variable("idempotency_lease_ms", "abc");
    assert_error(&api.post_keyed("k", REX), 500, "internal_error");
    assert!(
        api.store.keys().is_empty(),
        "the keyed create stored nothing"
    );
    assert_eq!(
        api.post(REX).status.as_u16(),
        201,
        "no key, no lease needed"
    );
    assert_error(&api.get("/v1/health"), 503, "misconfigured");
    assert_eq!(
        petstore::config::parse_lease_ms("250"),
        Ok(250),
        "milliseconds"
    );
    for bad in ["", "0", "-1", "1.5", "3600001", "ten"] {
        assert!(petstore::config::parse_lease_ms(bad).is_err(), "{bad}");
    }
}
