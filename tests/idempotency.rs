//! Safe retries of createPet (`Idempotency-Key`): the rules a client sees
//! (replays, 422, 400, the order of checks, what binds a key) and what is
//! stored, over the in-memory store with each backend's quirks.

mod common;

use std::collections::BTreeSet;

use common::{api, assert_created, assert_error, json, Api, BACKENDS, KEY, REX};
use http::Method;
use petstore::catalogue::keys::record_key;
use petstore::model::IdempotencyKey;
use petstore_testkit::{Backend, Op};

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
// tests/create_faults.rs, a_create_is_two_increments_and_one_set_many_and_never_touches_the_index.

/// A keyed create makes the same calls on an empty catalogue and on one of
/// 100 pets, and writes exactly these new keys: its record and, in the
/// counters layout, its pet and its slot (the first create of a store also
/// makes the counters); in the lanes layout the store of the pet its lane's
/// head held before (`pet:{id}` and its status entry), or, the first time,
/// the lanes' mark and the head. A replay is two calls and writes nothing.
#[test]
fn a_keyed_create_costs_a_constant_number_of_calls_and_writes_only_its_keys() {
    for setup in BACKENDS {
        for earlier in [0, 100] {
            let api = api(setup);
            for n in 0..earlier {
                api.create(&format!("p{n}"), "sold");
            }
            let keys_before: BTreeSet<String> = api.store.keys().into_iter().collect();
            api.store.reset_counts();
            let first = api.post_keyed("k", REX);
            let id = assert_created(&first);
            let record = record_key(&IdempotencyKey::parse(b"k").unwrap());
            // Counters: on SQLite the `get` of `ctr:id` first (its
            // `increment` must not meet another build's store); the read of
            // the key's word (an `increment` by 0; on Redis a `get`; on
            // DynamoDB the claim's own `new` and `current`), two
            // `increment`s (the id, the position), the stage, the claim (its
            // `new` and `current` unless the read began it, and its `swap`;
            // read back on Redis, which reports a conflict after writing),
            // the commit. Lanes: the record's `current`, the heads (the
            // first create of a store claims `ctr:id`: its `current` and
            // `swap`), the record's `swap` (the intent), the head's
            // `current`, the store of the pet it held, the head's `swap`.
            let (calls, mut expected) = match (setup.lanes(), setup.backend, earlier) {
                (true, _, 0) => (7, vec!["ctr:id".to_string(), "lane:0".to_string()]),
                // After 100 creates in turn, 32 lanes: lane 4 holds round
                // 3 (id 69, its third sold pet) and takes round 4.
                (true, _, _) => (6, vec!["pet:69".to_string(), "sx:sold:4:3".to_string()]),
                (false, backend, _) => {
                    let calls = match backend {
                        Backend::Redis => 8,
                        Backend::Dynamo => 6,
                        _ => 8,
                    };
                    let mut keys = vec![format!("pet:{id}"), format!("slot:sold:{}", earlier + 1)];
                    if earlier == 0 {
                        keys.extend(["ctr:id".to_string(), "ctr:sold".to_string()]);
                    }
                    (calls, keys)
                }
            };
            expected.push(record);
            let ops = api.store.ops();
            assert_eq!(ops.len(), calls, "{setup:?} after {earlier}: {ops:?}");
            let keys_after: BTreeSet<String> = api.store.keys().into_iter().collect();
            let new: BTreeSet<String> = keys_after.difference(&keys_before).cloned().collect();
            assert_eq!(
                new,
                expected.into_iter().collect(),
                "{setup:?} after {earlier}"
            );
            assert_eq!(json(&api.get(&format!("/v1/pets/{id}")))["name"], "Rex");
            api.store.reset_counts();
            let replay = api.post_keyed("k", REX);
            assert_eq!(replay.body, first.body);
            assert_eq!(replay.header("idempotent-replayed"), Some("true"));
            let ops = api.store.ops();
            let sqlite = setup.declared == "spin" && setup.backend != Backend::Dynamo;
            let calls = if sqlite { 3 } else { 2 };
            assert_eq!(
                ops.len(),
                calls,
                "a replay: (`ctr:id`,) the word, the pet: {ops:?}"
            );
            if setup.backend == Backend::Dynamo {
                assert!(
                    matches!(ops[0], Op::CasBegin(_)),
                    "read by the claim's compare-and-swap"
                );
            }
            let after_replay: BTreeSet<String> = api.store.keys().into_iter().collect();
            assert_eq!(after_replay, keys_after, "a replay stores nothing");
        }
    }
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
