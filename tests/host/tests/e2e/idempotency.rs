//! Safe retries of createPet end to end, on every backend: replays, reuse,
//! a fault at every key-value call of a keyed create followed by retries,
//! and 16 clients at once with one key and with distinct keys.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use petstore_host::kv::Fault;

use crate::support::{serve, Reply, Server, BACKENDS, LEASE_MS};

const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

fn created_id(r: &Reply) -> i64 {
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/v1/pets/{id}").as_str())
    );
    id
}

/// The ids of pets named `name` in the unfiltered walk and in `status`'s.
fn named(server: &Server, name: &str, status: &str) -> (Vec<i64>, Vec<i64>) {
    let of = |path: &str| {
        server
            .walk(path)
            .into_iter()
            .filter(|id| server.get(&format!("/v1/pets/{id}")).json()["name"] == name)
            .collect::<Vec<_>>()
    };
    (
        of("/v1/pets?limit=100"),
        of(&format!("/v1/pets?limit=100&status={status}")),
    )
}

/// Key-value calls a keyed create with a new key makes on this backend.
fn calls_of_a_keyed_create(server: &Server) -> u64 {
    let before = server.host.kv().stats().calls;
    created_id(&server.post_keyed("probe", REX));
    server.host.kv().stats().calls - before
}

/// Retries until a 201, waiting out the lease on a 409 as a client that
/// honours `Retry-After` would (the tests' lease is shorter than a second).
fn retry_until_created(server: &Server, key: &str, body: &str) -> i64 {
    for _ in 0..20 {
        let r = server.post_keyed(key, body);
        match r.status {
            201 => return created_id(&r),
            409 => {
                r.assert_error(409, "idempotency_key_in_use");
                assert_eq!(r.header("retry-after"), Some("1"));
                std::thread::sleep(Duration::from_millis(LEASE_MS + 50));
            }
            503 => r.assert_error(503, "store_unavailable"),
            other => panic!("{other}: {}", r.body),
        }
    }
    panic!("no 201 after 20 retries");
}

#[test]
fn replays_reuse_and_validation_on_every_backend() {
    for backend in BACKENDS {
        let server = serve(backend);
        // Validation errors bind nothing.
        server
            .post_keyed("order-1", r#"{"name":"","categoryId":7}"#)
            .assert_error(400, "invalid_body");
        server
            .post_keyed("a b", REX)
            .assert_error(400, "invalid_header");
        let first = server.post_keyed("order-1", REX);
        let id = created_id(&first);
        assert_eq!(first.header("idempotent-replayed"), None);
        let keys = server.host.kv().key_count();
        let replay = server.post_keyed(
            "\"order-1\"",
            r#"{"categoryId":7,"status":"sold","name":"Rex"}"#,
        );
        assert_eq!(created_id(&replay), id, "{backend:?}");
        assert_eq!(replay.body, first.body, "byte-identical");
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        server
            .post_keyed(
                "order-1",
                r#"{"name":"Rex","categoryId":8,"status":"sold"}"#,
            )
            .assert_error(422, "idempotency_key_reused");
        assert_eq!(
            server.host.kv().key_count(),
            keys,
            "{backend:?}: nothing stored"
        );
        assert_eq!(named(&server, "Rex", "sold"), (vec![id], vec![id]));
        // No stored key holds the client's text.
        let record = petstore::idempotency::IdempotencyKey::parse(b"order-1")
            .unwrap()
            .record_key();
        assert!(server.host.kv().peek(&record).is_some());
    }
}

#[test]
fn an_unfinished_create_is_409_until_its_lease_ends_then_a_retry_finishes_it() {
    for backend in BACKENDS {
        let server = serve(backend);
        let calls = calls_of_a_keyed_create(&server);
        // The last call of a keyed create is its commit.
        server.host.kv().inject(&[Fault::Fail(calls)]);
        server
            .post_keyed("k", REX)
            .assert_error(503, "store_unavailable");
        server.host.kv().inject(&[]);
        let r = server.post_keyed("k", REX);
        r.assert_error(409, "idempotency_key_in_use");
        assert_eq!(r.header("retry-after"), Some("1"));
        std::thread::sleep(Duration::from_millis(LEASE_MS + 50));
        let finished = server.post_keyed("k", REX);
        let id = created_id(&finished);
        assert_eq!(finished.header("idempotent-replayed"), None);
        assert_eq!(named(&server, "Rex", "sold"), (vec![1, id], vec![1, id]));
        assert_eq!(
            server.post_keyed("k", REX).header("idempotent-replayed"),
            Some("true")
        );
    }
}

#[test]
fn a_fault_at_every_call_of_a_keyed_create_then_retries_make_exactly_one_pet() {
    for backend in BACKENDS {
        let server = serve(backend);
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
                server.host.kv().inject(&[fault]);
                let first = server.post_keyed(&key, &body);
                server.host.kv().inject(&[]);
                let context = format!(
                    "{backend:?} {fault:?}: first {} {}",
                    first.status, first.body
                );
                assert!([201, 503].contains(&first.status), "{context}");
                let id = retry_until_created(&server, &key, &body);
                if first.status == 201 {
                    assert_eq!(created_id(&first), id, "{context}");
                }
                assert_eq!(
                    named(&server, &name, "pending"),
                    (vec![id], vec![id]),
                    "{context}"
                );
                let replay = server.post_keyed(&key, &body);
                assert_eq!(created_id(&replay), id, "{context}");
                assert_eq!(
                    replay.header("idempotent-replayed"),
                    Some("true"),
                    "{context}"
                );
                expected.insert(id);
            }
        }
        expected.insert(server.create("after", "pending"));
        server.assert_consistent(&expected, 1);
    }
}

/// `threads` clients post at once; each client's key is `key(t)`.
fn at_once(server: &Arc<Server>, threads: usize, key: fn(usize) -> String) -> Vec<Reply> {
    let barrier = Arc::new(std::sync::Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (server, barrier) = (server.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                server.post_keyed(&key(t), REX)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn sixteen_clients_with_one_key_make_one_pet() {
    for backend in BACKENDS {
        let server = Arc::new(serve(backend));
        let replies = at_once(&server, 16, |_| "same".to_string());
        let mut ids = BTreeSet::new();
        for r in &replies {
            match r.status {
                201 => {
                    ids.insert(created_id(r));
                }
                409 => r.assert_error(409, "idempotency_key_in_use"),
                other => panic!("{backend:?}: {other} {}", r.body),
            }
        }
        assert_eq!(ids.len(), 1, "{backend:?}: {ids:?}");
        let id = *ids.first().unwrap();
        let replay = server.post_keyed("same", REX);
        assert_eq!(created_id(&replay), id);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(
            named(&server, "Rex", "sold"),
            (vec![id], vec![id]),
            "{backend:?}"
        );
    }
}

#[test]
fn sixteen_clients_with_distinct_keys_make_sixteen_pets() {
    for backend in BACKENDS {
        let server = Arc::new(serve(backend));
        let replies = at_once(&server, 16, |t| format!("key-{t}"));
        let ids: BTreeSet<i64> = replies.iter().map(created_id).collect();
        assert_eq!(ids.len(), 16, "{backend:?}");
        server.assert_consistent(&ids, 1);
        for (t, first) in replies.iter().enumerate() {
            let replay = server.post_keyed(&format!("key-{t}"), REX);
            assert_eq!(created_id(&replay), created_id(first));
        }
    }
}
