//! What operators see on real Spin: the access log in Spin's own log file
//! (one JSON line per request, matched by its request id, never the query or
//! a key), request ids, the health probe, misconfigured variables failing
//! loudly, keys kept as digests.

use petstore_e2e::client::{Api, Reply, KEY};
use petstore_e2e::stores::{Backend, Store};

#[test]
fn one_json_log_line_per_request_in_spins_log_file_never_the_query_or_key() {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store.start();
        let s = &spin.api;
        let listed = s.send(
            "GET",
            "/v1/pets?limit=5&cursor=c1",
            Some(KEY),
            &[("x-request-id", "client-7")],
            None,
        );
        assert_eq!(listed.header("x-request-id"), Some("client-7"));
        let wrong = s.send("GET", "/v1/pets", Some("wrong-secret"), &[], None);
        let created = s.post_with(
            r#"{"name":"logged","categoryId":1}"#,
            &[("x-request-id", "create-1")],
        );
        assert_eq!(created.status, 201);

        let line = spin.log_line("client-7");
        assert_eq!(line["method"], "GET");
        assert_eq!(line["path"], "/v1/pets");
        assert_eq!(line["status"], 200);
        assert!(line["duration_ms"].as_f64().unwrap() > 0.0);
        assert!(line["kv_calls"].as_u64().unwrap() >= 1);
        let fields: Vec<_> = line.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            fields,
            [
                "duration_ms",
                "kv_calls",
                "method",
                "path",
                "request_id",
                "status"
            ],
            "no cause on a 2xx"
        );
        // A generated id: 128 random bits in hex, in the answer and the log.
        let id = wrong.header("x-request-id").unwrap();
        assert!(
            id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        let line = spin.log_line(id);
        assert_eq!(
            (line["status"].as_u64(), line["kv_calls"].as_u64()),
            (Some(401), Some(0))
        );
        let line = spin.log_line("create-1");
        assert_eq!(
            (line["method"].as_str(), line["status"].as_u64()),
            (Some("POST"), Some(201))
        );
        // Two increments and one set-many (on SQLite, `ctr:id` read first:
        // its `increment` panics Spin's host on a value not 8 bytes). On
        // DynamoDB (lanes), the store's first create: the heads' read, the
        // claim of `ctr:id` for the lanes (`new`, `current`, `swap`), the
        // claim of lane 0's head (`new`, `current`, `swap`; it held no pet to
        // store first).
        let calls = match backend {
            Backend::Dynamo => 7,
            Backend::Sqlite => 4,
            _ => 3,
        };
        assert_eq!(line["kv_calls"], calls, "{backend:?}: a create's calls");
        let text = spin.log_text();
        for secret in [KEY, "wrong-secret", "cursor", "limit=5"] {
            assert!(!text.contains(secret), "{secret} in the log: {text}");
        }
        assert_eq!(text.lines().count(), 3, "{text}");
    }
}

#[test]
fn request_ids_are_the_clients_when_usable_on_every_answer() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    let s = &spin.api;
    let r = s.send(
        "GET",
        "/v1/pets/77",
        Some(KEY),
        &[("x-request-id", "a.b:c-d_e")],
        None,
    );
    r.assert_error(404, "not_found");
    assert_eq!(r.header("x-request-id"), Some("a.b:c-d_e"));
    let long = "x".repeat(129);
    for bad in ["x y", long.as_str(), "é"] {
        let r = s.send("GET", "/v1/pets", None, &[("x-request-id", bad)], None);
        r.assert_error(401, "unauthorized");
        let id = r.header("x-request-id").unwrap();
        assert_eq!(id.len(), 32, "a bad client id is replaced, never rejected");
        assert_eq!(spin.log_line(id)["status"], 401);
    }
}

#[test]
fn health_answers_without_a_key_on_every_backend() {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store.start();
        let r = spin.probe("probe-1");
        assert_eq!(
            (r.status, r.body.as_str()),
            (200, r#"{"status":"ok","layout":"none"}"#),
            "{backend:?}: no create yet"
        );
        assert_eq!(r.header("cache-control"), Some("no-store"));
        // One read, and a second that checks the store is the declared one
        // (SQLite and Redis take an empty key, DynamoDB refuses it).
        assert_eq!(spin.log_line("probe-1")["kv_calls"], 2, "{backend:?}");
    }
}

#[test]
fn a_store_spin_cannot_open_is_503_on_every_store_call_and_fails_health() {
    let store = Store::new(Backend::Sqlite);
    // Where Spin keeps its SQLite file, a directory: it cannot be opened.
    std::fs::create_dir_all(store.state_dir().join("sqlite_key_value.db")).unwrap();
    let spin = store.start();
    let s = &spin.api;
    let health = s.send("GET", "/v1/health", None, &[("x-request-id", "h")], None);
    health.assert_error(503, "store_unavailable");
    assert_eq!(health.header("retry-after"), Some("1"));
    let cause = spin.log_line("h")["cause"].as_str().unwrap().to_string();
    assert!(cause.contains("key-value store"), "{cause}");
    for r in [
        s.get("/v1/pets"),
        s.get("/v1/pets/1"),
        s.post(r#"{"name":"a","categoryId":1}"#),
    ] {
        r.assert_error(503, "store_unavailable");
        assert_eq!(r.header("retry-after"), Some("1"));
    }
    // Requests that need no store still answer.
    s.send("GET", "/v1/pets", None, &[], None)
        .assert_error(401, "unauthorized");
}

/// A request that needs an unusable variable is a 500 whose log line says
/// which and why (never a key); the probe fails on any of them; a request
/// that does not need the variable is answered as usual.
#[test]
fn each_misconfiguration_fails_the_requests_that_need_it_and_the_probe() {
    let digest_of_nothing = format!("sha256:{}", "0".repeat(63));
    let signed_digest = format!("sha256:+{}", "0".repeat(63));
    let cases = [
        ("api_key", "", "holds no key"),
        ("api_key", " ,, ", "holds no key"),
        ("api_key", "ok, has blank", "entry 2 has blanks inside"),
        ("api_key", "naïve", "entry 1 is not ASCII"),
        (
            "api_key",
            digest_of_nothing.as_str(),
            "entry 1 is not 'sha256:'",
        ),
        (
            "api_key",
            signed_digest.as_str(),
            "entry 1 is not 'sha256:'",
        ),
        (
            "idempotency_lease_ms",
            "soon",
            "is not a number of milliseconds",
        ),
        (
            "idempotency_lease_ms",
            "0",
            "is not a number of milliseconds",
        ),
        (
            "cors_origins",
            "https://app.test/",
            "entry 1 ('https://app.test/')",
        ),
        (
            "key_value_backend",
            "dynamo",
            "'dynamo' is not one of spin, redis",
        ),
        (
            "catalogue_layout",
            "lanes",
            "'lanes' needs the aws_dynamo backend, not 'spin'",
        ),
    ];
    let store = Store::new(Backend::Sqlite);
    for (name, value, cause) in cases {
        let spin = store.launch().variable(name, value).start();
        let s = &spin.api;
        for (id, r) in requests_needing(s, name) {
            assert_eq!(r.status, 500, "{name}={value:?}, {id}: {}", r.body);
            r.assert_error(500, "internal_error");
            let line = spin.log_line(&id);
            let logged = line["cause"].as_str().unwrap();
            assert!(
                logged.starts_with(&format!("variable {name}: ")),
                "{logged}"
            );
            assert!(logged.contains(cause), "{name}={value:?}: {logged}");
            if name == "api_key" && !value.trim().is_empty() {
                assert!(!logged.contains(value.trim()), "a key in the log: {logged}");
            }
        }
        // What does not need the variable is answered as usual: pages need
        // all but the lease, CORS and the layout (they read the backend
        // declared, and the store's layout from the store); getPet needs
        // only the key, and the backend when no pet is stored at that id
        // (a lanes store holds its newest pets in its heads).
        if !["api_key", "key_value_backend"].contains(&name) {
            assert_eq!(
                s.get("/v1/pets").status,
                200,
                "{name}: not needed, not read"
            );
            assert_eq!(s.get("/v1/pets/1").status, 404, "{name}: not needed");
        }
        let health = s.send("GET", "/v1/health", None, &[], None);
        health.assert_error(503, "misconfigured");
        assert!(!health.body.contains(name), "{}", health.body);
        assert_eq!(store.direct().key_count(), 0, "nothing stored");
    }
}

/// The requests that need variable `name`, each with its request id.
fn requests_needing(api: &Api, name: &str) -> Vec<(String, Reply)> {
    let (a, b) = (format!("needs-{name}-0"), format!("needs-{name}-1"));
    const ID: &str = "x-request-id";
    match name {
        "api_key" => {
            let without_key = api.send("GET", "/v1/pets", None, &[(ID, &a)], None);
            let with_key = api.get_with("/v1/pets", &[(ID, &b)]);
            vec![(a, without_key), (b, with_key)]
        }
        "catalogue_layout" => {
            let create = api.post_with(r#"{"name":"a","categoryId":1}"#, &[(ID, &a)]);
            vec![(a, create)]
        }
        "idempotency_lease_ms" => {
            let body = r#"{"name":"a","categoryId":1}"#;
            let keyed = api.post_with(body, &[(ID, &a), ("idempotency-key", "k")]);
            vec![(a, keyed)]
        }
        "key_value_backend" => {
            let create = api.post_with(r#"{"name":"a","categoryId":1}"#, &[(ID, &a)]);
            let page = api.get_with("/v1/pets", &[(ID, &b)]);
            vec![(a, create), (b, page)]
        }
        _ => {
            let origin = ("origin", "https://app.test");
            let browser = api.get_with("/v1/pets", &[(ID, &a), origin]);
            vec![(a, browser)]
        }
    }
}

#[test]
fn digest_keys_mix_with_plain_keys() {
    // printf %s e2e-key | sha256sum
    let digest = "sha256:a781b3e13d2b80957d1b925804148f666cc87adb35c1481686a9687f27f8d8a0";
    let store = Store::new(Backend::Sqlite);
    let spin = store
        .launch()
        .variable("api_key", &format!("other-key, {digest}"))
        .start();
    let s = &spin.api;
    assert_eq!(
        s.get("/v1/pets").status,
        200,
        "the key whose digest is listed"
    );
    assert_eq!(
        s.send("GET", "/v1/pets", Some("other-key"), &[], None)
            .status,
        200
    );
    let digest_itself = &digest["sha256:".len()..];
    for wrong in ["wrong", digest, digest_itself] {
        let r = s.send("GET", "/v1/pets", Some(wrong), &[], None);
        r.assert_error(401, "unauthorized");
        assert_eq!(
            r.header("www-authenticate"),
            Some(r#"Bearer realm="petstore", error="invalid_token""#)
        );
    }
}
