//! What operators rely on: request ids on every response, the health probe,
//! loud misconfiguration, and keys at rest as digests.

mod common;

use common::{assert_error, json, Api, KEY};
use http::Method;
use petstore::auth::ApiKeys;
use petstore::response::Response;
use petstore_testkit::Fault;

fn health(api: &Api) -> Response {
    api.request(Method::GET, "/v1/health", &[], b"")
}

#[test]
fn every_response_carries_the_request_id() {
    let api = Api::new();
    let auth = format!("Bearer {KEY}");
    let generated = "07".repeat(16);
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], u16);
    let cases: [Case; 5] = [
        ("/v1/pets", &[("Authorization", &auth)], 200),
        ("/v1/pets", &[], 401),
        ("/v1/pets/9", &[("Authorization", &auth)], 404),
        ("/v1/openapi.json", &[], 200),
        ("/v1/health", &[], 200),
    ];
    for (target, headers, status) in cases {
        let r = api.request(Method::GET, target, headers, b"");
        assert_eq!(r.status.as_u16(), status, "{target}");
        assert_eq!(
            r.header("x-request-id"),
            Some(generated.as_str()),
            "{target}"
        );
        let mut with_id = headers.to_vec();
        with_id.push(("X-Request-Id", "client-id:42"));
        let r = api.request(Method::GET, target, &with_id, b"");
        assert_eq!(r.header("x-request-id"), Some("client-id:42"), "{target}");
        with_id.pop();
        with_id.push(("X-Request-Id", "not ok!"));
        let r = api.request(Method::GET, target, &with_id, b"");
        assert_eq!(
            r.status.as_u16(),
            status,
            "a bad id is replaced, not rejected"
        );
        assert_eq!(r.header("x-request-id"), Some(generated.as_str()));
    }
    // A 503 too.
    api.store.inject(Fault::Fail(api.store.calls() + 1));
    let r = api.request(
        Method::GET,
        "/v1/pets",
        &[("Authorization", &auth), ("X-Request-Id", "r-503")],
        b"",
    );
    assert_error(&r, 503, "store_unavailable");
    assert_eq!(r.header("x-request-id"), Some("r-503"));
}

#[test]
fn health_is_public_reads_the_store_and_reveals_nothing() {
    let api = Api::new();
    api.create("a", "sold");
    api.store.reset_counts();
    let r = health(&api);
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.body, br#"{"status":"ok","layout":"counters"}"#);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("cache-control"), Some("no-store"));
    assert_eq!(
        api.store.calls(),
        2,
        "one read, and one of the empty key that SQLite and Redis take"
    );
    api.store.inject(Fault::Fail(api.store.calls() + 1));
    let r = health(&api);
    assert_error(&r, 503, "store_unavailable");
    assert_eq!(r.header("retry-after"), Some("1"));
    // Other methods are not public.
    assert_error(
        &api.request(Method::POST, "/v1/health", &[], b""),
        401,
        "unauthorized",
    );
    let auth = format!("Bearer {KEY}");
    let r = api.request(
        Method::DELETE,
        "/v1/health",
        &[("Authorization", &auth)],
        b"",
    );
    assert_error(&r, 405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET"));
}

/// A store declared SQLite or Redis that rejects an empty key, as DynamoDB
/// does, fails the probe: its creates would trust batches that are not
/// atomic. One declared DynamoDB that takes an empty key, as SQLite and
/// Redis do, fails it too: its pages would call `get-many`, which fails
/// every request on Redis.
#[test]
fn health_fails_a_store_whose_declared_backend_is_not_its_own() {
    let mut api = Api::new();
    api.store.reset_counts();
    api.store.inject(Fault::Fail(2));
    let handled = api.handle_health();
    assert_error(&handled.response, 503, "misconfigured");
    let detail = handled.detail.unwrap();
    assert!(
        detail
            .starts_with("variable key_value_backend: 'spin', but the store rejects an empty key"),
        "{detail}"
    );
    api.set_variable("key_value_backend", "aws_dynamo");
    let handled = api.handle_health();
    assert_error(&handled.response, 503, "misconfigured");
    let detail = handled.detail.unwrap();
    assert!(
        detail.starts_with(
            "variable key_value_backend: 'aws_dynamo', but the store takes an empty key"
        ),
        "{detail}"
    );
    // The empty key refused, as DynamoDB does: healthy, in two reads.
    api.store.reset_counts();
    api.store.inject(Fault::Fail(2));
    assert_eq!(health(&api).status.as_u16(), 200);
    assert_eq!(api.store.calls(), 2);
    // A value that names no backend (the runtime config's type is `spin`,
    // not `sqlite`) is unusable, whatever the store.
    api.set_variable("key_value_backend", "sqlite");
    let handled = api.handle_health();
    assert_error(&handled.response, 503, "misconfigured");
    assert_eq!(
        handled.detail.unwrap(),
        "variable key_value_backend: 'sqlite' is not one of spin, redis, aws_dynamo, azure_cosmos"
    );
}

#[test]
fn each_unusable_api_key_is_a_500_with_its_cause_and_fails_health() {
    for variable in [
        "",
        " , ",
        "good, bad key",
        "clé",
        "sha256:123",
        "k,sha256:xyz",
    ] {
        let mut api = Api::new();
        api.set_variable("api_key", variable);
        let cause = ApiKeys::parse(variable).unwrap_err();
        let auth = format!("Bearer {KEY}");
        for headers in [vec![], vec![("Authorization", auth.as_str())]] {
            let request = petstore::request::Request::new(
                Method::GET,
                "/v1/pets",
                headers
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                    .collect(),
                petstore::request::Body::Complete(vec![]),
            );
            let handled = api.handle(request);
            assert_error(&handled.response, 500, "internal_error");
            let detail = handled.detail.unwrap();
            assert_eq!(detail, format!("variable api_key: {cause}"), "{variable:?}");
            assert!(!detail.contains("bad key") && !detail.contains("clé"));
        }
        let r = health(&api);
        assert_error(&r, 503, "misconfigured");
        assert!(
            !String::from_utf8_lossy(&r.body).contains("api_key"),
            "not told to clients"
        );
        // The OpenAPI document stays public.
        let r = api.request(Method::GET, "/v1/openapi.json", &[], b"");
        assert_eq!(r.status.as_u16(), 200);
    }
}

#[test]
fn digest_keys_work_mixed_with_plain_keys_and_rotate() {
    // printf %s rotated | sha256sum
    let digest = "sha256:f42546d5ecdd452509808b2d6d0413b5a738c70a793b99ccf8ed6f423aac83d3";
    let mut api = Api::new();
    api.set_variable("api_key", &format!("{KEY}, {digest}"));
    let get = |key: &str| {
        let auth = format!("Bearer {key}");
        api.request(Method::GET, "/v1/pets", &[("Authorization", &auth)], b"")
    };
    assert_eq!(get(KEY).status.as_u16(), 200);
    assert_eq!(get("rotated").status.as_u16(), 200);
    let wrong = get("wrong");
    assert_error(&wrong, 401, "unauthorized");
    assert_eq!(
        wrong.header("www-authenticate"),
        Some(r#"Bearer realm="petstore", error="invalid_token""#)
    );
    assert_error(&get(&digest[7..]), 401, "unauthorized");
    // Rotation: drop the plain key.
    let mut api = Api::new();
    api.set_variable("api_key", digest);
    let auth = format!("Bearer {KEY}");
    let old = api.request(Method::GET, "/v1/pets", &[("Authorization", &auth)], b"");
    assert_error(&old, 401, "unauthorized");
    let new = api.request(
        Method::GET,
        "/v1/pets",
        &[("Authorization", "Bearer rotated")],
        b"",
    );
    assert_eq!(json(&new), serde_json::json!([]));
}

/// On Spin every variable read is a host call (about 12 µs for one that
/// comes from its default or the environment): each request reads only
/// the variables it needs, once; the probe reads them all.
#[test]
fn each_request_reads_only_the_variables_it_needs() {
    let api = Api::new();
    let auth = format!("Bearer {KEY}");
    let reads = |request: &dyn Fn()| {
        api.reads.borrow_mut().clear();
        request();
        api.reads.borrow().clone()
    };
    let none: [&str; 0] = [];
    let document = reads(&|| {
        api.request(Method::GET, "/v1/openapi.json", &[], b"");
    });
    assert_eq!(document, none, "the document");
    let create = reads(&|| {
        api.create("a", "sold");
    });
    assert_eq!(create, ["api_key", "key_value_backend", "catalogue_layout"]);
    assert_eq!(reads(&|| drop(api.get("/v1/pets/1"))), ["api_key"]);
    // A pet not stored may be the newest of a lane, held in its head,
    // where reads are batched: the backend says.
    let missing = reads(&|| drop(api.get("/v1/pets/2")));
    assert_eq!(missing, ["api_key", "key_value_backend"]);
    let keyed = reads(&|| drop(api.post_keyed("k", r#"{"name":"a","categoryId":1}"#)));
    assert_eq!(
        keyed,
        [
            "api_key",
            "key_value_backend",
            "catalogue_layout",
            "idempotency_lease_ms"
        ]
    );
    let browser = reads(&|| {
        let headers = [
            ("Authorization", auth.as_str()),
            ("Origin", "https://app.test"),
        ];
        api.request(Method::GET, "/v1/pets", &headers, b"");
    });
    assert_eq!(browser, ["cors_origins", "api_key", "key_value_backend"]);
    let probe = reads(&|| drop(health(&api)));
    assert_eq!(
        probe,
        [
            "api_key",
            "idempotency_lease_ms",
            "cors_origins",
            "key_value_backend",
            "catalogue_layout"
        ]
    );
}

#[test]
/// What `access_line` makes of a handled request: every field, a send
/// error, the method escaped, the cause of a 5xx only. (That the Spin layer
/// logs the path without its query, and never a key, is asserted on real
/// `spin up`: `on_spin/operations.rs`.)
fn the_log_line_is_json_with_every_field_and_the_cause_of_a_5xx() {
    use petstore::log::access_line;
    use petstore::request::{Body, Request};
    use petstore_testkit::Fault;
    let api = Api::new();
    let auth = format!("Bearer {KEY}");
    let request = Request::new(
        Method::GET,
        "/v1/pets?limit=5&cursor=c1",
        vec![
            ("authorization".into(), auth.into_bytes()),
            ("x-request-id".into(), b"req-1".to_vec()),
        ],
        Body::Complete(vec![]),
    );
    let handled = api.handle(request.clone());
    let line = access_line("GET", &request.path, &handled, 1234, 2, &Ok(()));
    assert_eq!(
        line,
        r#"{"request_id":"req-1","method":"GET","path":"/v1/pets","status":200,"duration_ms":1.234,"kv_calls":2}"#
    );
    // A request that carries a W3C traceparent: its trace id is logged,
    // right after the request id; the answer is the same.
    let mut traced = request.clone();
    traced.headers.push((
        "traceparent".into(),
        b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".to_vec(),
    ));
    let traced_handled = api.handle(traced.clone());
    assert_eq!(traced_handled.response.status, handled.response.status);
    let line = access_line("GET", &traced.path, &traced_handled, 1234, 2, &Ok(()));
    assert!(
        line.starts_with(
            r#"{"request_id":"req-1","trace_id":"0af7651916cd43dd8448eb211c80319c","method""#
        ),
        "{line}"
    );
    // A response that could not be sent says so, with the status attempted.
    let unsent = Err("stream closed".to_string());
    let line = access_line("GET", &request.path, &handled, 1234, 2, &unsent);
    assert_eq!(json_line(&line)["send_error"], "stream closed");
    // The method is logged as received, escaped as JSON.
    let line = access_line("BR\nEW", &request.path, &handled, 1, 0, &Ok(()));
    assert_eq!(json_line(&line)["method"], "BR\nEW");
    assert!(!line.contains('\n'));
    api.store.inject(Fault::Fail(api.store.calls() + 1));
    let handled = api.handle(request.clone());
    let line = access_line("GET", &request.path, &handled, 5, 1, &Ok(()));
    let fields = json_line(&line);
    assert_eq!(fields["status"], 503);
    assert_eq!(fields["cause"], "key-value store: injected failure of get");
    assert_eq!(fields["duration_ms"], 0.005);
    // A 4xx has no cause: the client got it in the body. A wrong key is
    // never logged.
    let wrong = Request::new(
        Method::GET,
        "/v1/pets",
        vec![("authorization".into(), b"Bearer wrong-secret".to_vec())],
        Body::Complete(vec![]),
    );
    let handled = api.handle(wrong.clone());
    let line = access_line("GET", &wrong.path, &handled, 5, 0, &Ok(()));
    let fields = json_line(&line);
    assert_eq!(fields["status"], 401);
    assert!(fields.get("cause").is_none());
    assert!(!line.contains("secret"));
    assert_eq!(fields["request_id"], "07".repeat(16), "generated");
}

fn json_line(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}
