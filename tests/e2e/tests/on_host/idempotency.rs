//! Safe retries under faults, on every backend: a fault at every key-value
//! call of a keyed create (a failure, or a reply lost after the call was
//! applied), then retries with the same key, always end in exactly one pet;
//! a create whose commit failed holds its key until the lease ends.

use std::collections::BTreeSet;

use petstore_e2e::client::Reply;
use petstore_host::kv::Fault;

use crate::support::{loaded, serve_app, Server, BACKENDS, LEASE_MS};

const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

/// Key-value calls a keyed create with a new key makes on this backend.
fn calls_of_a_keyed_create(server: &Server) -> u64 {
    let before = server.kv().stats().calls;
    server.api.post_keyed("probe", REX).created_id();
    server.kv().stats().calls - before
}

/// Retries until a 201, waiting out the lease on a 409 as a client that
/// honours `Retry-After` would: the host's clock moved past it, no wait.
fn retry_until_created(server: &Server, key: &str, body: &str) -> Reply {
    let api = &server.api;
    petstore_testkit::retry_until_created(
        20,
        || {
            let r = api.post_keyed(key, body);
            match r.status {
                409 => {
                    r.assert_error(409, "idempotency_key_in_use");
                    assert_eq!(r.header("retry-after"), Some("1"));
                }
                503 => r.assert_error(503, "store_unavailable"),
                _ => {}
            }
            let after = r.header("retry-after").and_then(|v| v.parse().ok());
            (r.status, after, r)
        },
        |_| server.host.advance_clock(LEASE_MS + 50),
    )
}

#[test]
fn a_create_whose_commit_failed_is_409_until_its_lease_ends_then_a_retry_finishes_it() {
    // A lease longer than the failed commit's retries take (on SQLite and
    // Redis, at most 56 ms of waiting), so that the next request finds it
    // running.
    const LONGER_LEASE_MS: u64 = 2_000;
    for backend in BACKENDS {
        let lease = LONGER_LEASE_MS.to_string();
        let declared = match backend {
            petstore_host::kv::Backend::Redis => "redis",
            _ => "spin",
        };
        let app = loaded().with_variables(&[
            ("idempotency_lease_ms", &lease),
            ("key_value_backend", declared),
        ]);
        let server = serve_app(app, backend);
        let calls = calls_of_a_keyed_create(&server);
        // The last call of a keyed create is its commit: every attempt fails
        // (the draws are random: as many faults as there can be attempts).
        let attempts = u64::from(petstore::retry::Policy::BRIEF.max_attempts);
        let commit: Vec<Fault> = (calls..calls + attempts).map(Fault::Fail).collect();
        server.kv().inject(&commit);
        let failed = server.api.post_keyed("k", REX);
        failed.assert_error(503, "store_unavailable");
        assert!(failed.json()["message"]
            .as_str()
            .unwrap()
            .contains("same Idempotency-Key"));
        server.kv().inject(&[]);
        let r = server.api.post_keyed("k", REX);
        r.assert_error(409, "idempotency_key_in_use");
        let wait: u64 = r.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=2).contains(&wait), "{wait}");
        server.host.advance_clock(wait * 1000);
        let finished = server.api.post_keyed("k", REX);
        let id = finished.created_id();
        assert_eq!(finished.header("idempotent-replayed"), None);
        assert_eq!(server.api.named("Rex", "sold"), (vec![1, id], vec![1, id]));
        let replay = server.api.post_keyed("k", REX);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(replay.body, finished.body);
    }
}

#[test]
fn a_fault_at_every_call_of_a_keyed_create_then_retries_make_exactly_one_pet() {
    // Each engine as operators declare it (Redis's word read by `get`),
    // and the ideal one declared DynamoDB, where a keyed create claims its
    // key by put-if-absent.
    let declared = |b| match b {
        petstore_host::kv::Backend::Redis => "redis",
        _ => "spin",
    };
    let setups = BACKENDS
        .map(|b| (b, declared(b)))
        .into_iter()
        .chain([(petstore_host::kv::Backend::Memory, "aws_dynamo")]);
    for (backend, declared) in setups {
        let app = loaded().with_variables(&[("key_value_backend", declared)]);
        let server = serve_app(app, backend);
        let calls = calls_of_a_keyed_create(&server);
        assert!(calls >= 7, "{backend:?}: {calls} calls");
        let mut expected = BTreeSet::from([1]);
        for n in 1..=calls {
            for (i, fault) in [Fault::Fail(n), Fault::LoseReply(n)]
                .into_iter()
                .enumerate()
            {
                let key = format!("k-{n}-{i}");
                let name = format!("pet-{n}-{i}");
                let body = format!(r#"{{"name":"{name}","categoryId":3,"status":"pending"}}"#);
                server.kv().inject(&[fault]);
                let first = server.api.post_keyed(&key, &body);
                server.kv().inject(&[]);
                let context = format!(
                    "{backend:?} ({declared}) {fault:?}: first {} {}",
                    first.status, first.body
                );
                assert!([201, 503].contains(&first.status), "{context}");
                let retried = retry_until_created(&server, &key, &body);
                let id = retried.created_id();
                if first.status == 201 {
                    assert_eq!(first.created_id(), id, "{context}");
                    assert_eq!(first.body, retried.body, "{context}");
                }
                assert_eq!(
                    server.api.named(&name, "pending"),
                    (vec![id], vec![id]),
                    "{context}"
                );
                let replay = server.api.post_keyed(&key, &body);
                assert_eq!(replay.created_id(), id, "{context}");
                assert_eq!(
                    replay.header("idempotent-replayed"),
                    Some("true"),
                    "{context}"
                );
                expected.insert(id);
            }
        }
        expected.insert(server.api.create("after", "pending"));
        server.api.assert_consistent(&expected, 1);
    }
}
