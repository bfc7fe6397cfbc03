//! The contract (docs/contract.md) and every rule of docs/decisions.md, asserted on
//! what a client sees: status, headers, body, and what is stored afterwards.

mod common;

use common::{assert_error, json, next_target, Api, KEY};
use http::Method;
use serde_json::json;

const AUTH: &str = "Bearer test-key";

#[test]
fn create_returns_201_the_stored_pet_and_its_location() {
    let api = Api::new();
    let r = api.post(r#"{"name":"Rex","categoryId":7,"status":"sold"}"#);
    assert_eq!(r.status.as_u16(), 201);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("location"), Some("/v1/pets/1"));
    assert_eq!(
        json(&r),
        json!({"id":1,"name":"Rex","categoryId":7,"status":"sold"})
    );
    // Field order is the contract's.
    assert_eq!(
        r.body,
        br#"{"id":1,"name":"Rex","categoryId":7,"status":"sold"}"#
    );
    let fetched = api.get("/v1/pets/1");
    assert_eq!(fetched.status.as_u16(), 200);
    assert_eq!(fetched.body, r.body);
}

#[test]
fn omitted_status_is_stored_as_available() {
    let api = Api::new();
    let r = api.post(r#"{"name":"Rex","categoryId":7}"#);
    assert_eq!(json(&r)["status"], "available");
    assert_eq!(json(&api.get("/v1/pets/1"))["status"], "available");
    assert_eq!(api.walk("/v1/pets?status=available"), vec![1]);
}

#[test]
fn ids_count_up_from_one_and_client_ids_are_ignored() {
    let api = Api::new();
    for expected in 1..=5 {
        let r = api.post(r#"{"name":"x","categoryId":1,"id":999}"#);
        assert_eq!(json(&r)["id"], expected);
    }
    assert_error(&api.get("/v1/pets/999"), 404, "not_found");
}

#[test]
fn invalid_bodies_are_400_invalid_body_and_store_nothing() {
    let api = Api::new();
    let cases = [
        ("", "JSON"),
        ("{", "JSON"),
        ("[]", "object"),
        ("null", "object"),
        (r#"{"categoryId":1}"#, "name"),
        (r#"{"name":"a"}"#, "categoryId"),
        (r#"{"name":"","categoryId":1}"#, "name"),
        (r#"{"name":"   ","categoryId":1}"#, "name"),
        (r#"{"name":7,"categoryId":1}"#, "name"),
        (r#"{"name":"a","categoryId":1.5}"#, "categoryId"),
        (r#"{"name":"a","categoryId":"7"}"#, "categoryId"),
        (r#"{"name":"a","categoryId":1e3}"#, "categoryId"),
        (
            r#"{"name":"a","categoryId":9223372036854775808}"#,
            "categoryId",
        ),
        (r#"{"name":"a","categoryId":1,"status":"lost"}"#, "status"),
    ];
    for (body, field) in cases {
        let message = assert_error(&api.post(body), 400, "invalid_body");
        assert!(message.contains(field), "{body}: {message}");
    }
    let long = format!(r#"{{"name":"{}","categoryId":1}}"#, "n".repeat(201));
    assert!(assert_error(&api.post(&long), 400, "invalid_body").contains("name"));
    assert!(
        api.store.keys().is_empty(),
        "stored: {:?}",
        api.store.keys()
    );
}

#[test]
fn content_type_must_be_json_else_415() {
    let api = Api::new();
    let body = br#"{"name":"a","categoryId":1}"#;
    for ct in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut headers = vec![("Authorization", AUTH)];
        headers.extend(ct.map(|c| ("Content-Type", c)));
        let r = api.request(Method::POST, "/v1/pets", &headers, body);
        assert_error(&r, 415, "unsupported_media_type");
    }
    for ct in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/json;charset=UTF-8",
    ] {
        let r = api.request(
            Method::POST,
            "/v1/pets",
            &[("Authorization", AUTH), ("Content-Type", ct)],
            body,
        );
        assert_eq!(r.status.as_u16(), 201, "{ct}");
    }
}

#[test]
fn body_over_16_kib_is_413_and_exactly_16_kib_is_read() {
    let api = Api::new();
    let headers = [
        ("Authorization", AUTH),
        ("Content-Type", "application/json"),
    ];
    let big = vec![b' '; 16 * 1024 + 1];
    assert_error(
        &api.request(Method::POST, "/v1/pets", &headers, &big),
        413,
        "payload_too_large",
    );
    // 16 KiB exactly is read and judged as JSON (here: padded valid JSON).
    let mut exact = br#"{"name":"a","categoryId":1}"#.to_vec();
    exact.resize(16 * 1024, b' ');
    assert_eq!(
        api.request(Method::POST, "/v1/pets", &headers, &exact)
            .status
            .as_u16(),
        201
    );
}

#[test]
fn every_route_requires_the_key_before_anything_else() {
    let api = Api::new();
    api.create("a", "sold");
    for (method, target) in [
        (Method::GET, "/v1/pets"),
        (Method::POST, "/v1/pets"),
        (Method::GET, "/v1/pets/1"),
        (Method::GET, "/v1/pets/abc"),
        (Method::DELETE, "/v1/pets"),
        (Method::GET, "/v1/store/orders"),
        (Method::GET, "/v1/pets?limit=0"),
    ] {
        let r = api.request(method.clone(), target, &[], b"{");
        assert_error(&r, 401, "unauthorized");
        assert_eq!(
            r.header("www-authenticate"),
            Some(r#"Bearer realm="petstore""#)
        );
        assert_eq!(
            r.header("deprecation"),
            None,
            "nothing about the route leaks"
        );
        let wrong = api.request(method, target, &[("Authorization", "Bearer nope")], b"{");
        assert_error(&wrong, 401, "unauthorized");
        assert_eq!(
            wrong.header("www-authenticate"),
            Some(r#"Bearer realm="petstore", error="invalid_token""#)
        );
    }
    let malformed = api.request(
        Method::GET,
        "/v1/pets",
        &[("Authorization", "Basic dGVzdA==")],
        b"",
    );
    assert_error(&malformed, 401, "unauthorized");
    assert_eq!(
        malformed.header("www-authenticate"),
        Some(r#"Bearer realm="petstore""#)
    );
    let lower = api.request(
        Method::GET,
        "/v1/pets",
        &[("authorization", "bearer test-key")],
        b"",
    );
    assert_eq!(lower.status.as_u16(), 200);
}

#[test]
fn unauthenticated_create_stores_nothing() {
    let api = Api::new();
    let r = api.request(
        Method::POST,
        "/v1/pets",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer wrong"),
        ],
        br#"{"name":"a","categoryId":1}"#,
    );
    assert_error(&r, 401, "unauthorized");
    assert!(api.store.keys().is_empty());
}

#[test]
fn key_rotation_accepts_old_and_new_key() {
    let mut api = Api::new();
    api.set_variable("api_key", "old-key,new-key");
    for key in ["old-key", "new-key"] {
        let auth = format!("Bearer {key}");
        let r = api.request(Method::GET, "/v1/pets", &[("Authorization", &auth)], b"");
        assert_eq!(r.status.as_u16(), 200, "{key}");
    }
    api.set_variable("api_key", "new-key");
    let r = api.request(
        Method::GET,
        "/v1/pets",
        &[("Authorization", "Bearer old-key")],
        b"",
    );
    assert_error(&r, 401, "unauthorized");
}

#[test]
fn unreadable_key_variable_is_a_500_never_open_access() {
    let mut api = Api::new();
    api.fail_variable("api_key", "provider down");
    let r = api.get("/v1/pets");
    assert_error(&r, 500, "internal_error");
    assert!(!String::from_utf8_lossy(&r.body).contains("provider down"));
}

#[test]
fn unknown_paths_are_404_and_wrong_methods_405_with_allow() {
    let api = Api::new();
    for target in [
        "/v1",
        "/v1/",
        "/v1/pet",
        "/v1/petsx",
        "/v1/pets/1/x",
        "/v1/store/order/1",
        "/v2/pets",
        "/",
    ] {
        assert_error(&api.get(target), 404, "not_found");
    }
    for method in [
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::HEAD,
        Method::OPTIONS,
    ] {
        let r = api.request(method.clone(), "/v1/pets", &[("Authorization", AUTH)], b"");
        assert_error(&r, 405, "method_not_allowed");
        assert_eq!(r.header("allow"), Some("GET, POST"));
        let r = api.request(method, "/v1/pets/1", &[("Authorization", AUTH)], b"");
        assert_error(&r, 405, "method_not_allowed");
        assert_eq!(r.header("allow"), Some("GET"));
    }
    let r = api.request(Method::POST, "/v1/pets/1", &[("Authorization", AUTH)], b"");
    assert_eq!(r.header("allow"), Some("GET"));
}

#[test]
fn get_pet_is_deprecated_on_every_authenticated_answer() {
    let api = Api::new();
    api.create("a", "pending");
    for (target, status) in [
        ("/v1/pets/1", 200),
        ("/v1/pets/2", 404),
        ("/v1/pets/abc", 404),
        ("/v1/pets/0", 404),
        ("/v1/pets/-3", 404),
        ("/v1/pets/99999999999999999999", 404),
        ("/v1/pets/", 404),
        ("/v1/pets/1.0", 404),
    ] {
        let r = api.get(target);
        assert_eq!(r.status.as_u16(), status, "{target}");
        if status == 404 {
            assert_error(&r, 404, "not_found");
        }
        assert_eq!(r.header("deprecation"), Some("@1795219200"), "{target}");
        assert_eq!(r.header("sunset"), Some("Thu, 05 Dec 2030 00:00:00 GMT"));
        assert_eq!(
            r.header("link"),
            Some(r#"</v1/pets>; rel="successor-version""#)
        );
    }
    assert_eq!(api.get("/v1/pets").header("deprecation"), None);
}

#[test]
fn list_is_ascending_and_respects_limit_default_and_bounds() {
    let api = Api::new();
    for i in 0..25 {
        api.create(&format!("p{i}"), ["available", "pending", "sold"][i % 3]);
    }
    let r = api.get("/v1/pets");
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let ids: Vec<i64> = json(&r)
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        ids,
        (1..=20).collect::<Vec<_>>(),
        "default limit 20, ascending id"
    );
    assert_eq!(
        json(&api.get("/v1/pets?limit=1")).as_array().unwrap().len(),
        1
    );
    assert_eq!(
        json(&api.get("/v1/pets?limit=100"))
            .as_array()
            .unwrap()
            .len(),
        25
    );
    let first = &json(&api.get("/v1/pets?limit=1"))[0];
    assert_eq!(
        first,
        &json!({"id":1,"name":"p0","categoryId":1,"status":"available"})
    );
    for bad in ["0", "101", "-1", "abc", "1.5", ""] {
        let m = assert_error(
            &api.get(&format!("/v1/pets?limit={bad}")),
            400,
            "invalid_parameter",
        );
        assert!(m.contains("limit"), "{m}");
    }
    for bad in ["lost", "SOLD", ""] {
        let m = assert_error(
            &api.get(&format!("/v1/pets?status={bad}")),
            400,
            "invalid_parameter",
        );
        assert!(m.contains("status"), "{m}");
    }
    assert_eq!(
        json(&api.get("/v1/pets?foo=1&limit=2"))
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn empty_catalogue_lists_an_empty_array_without_link() {
    let api = Api::new();
    let r = api.get("/v1/pets");
    assert_eq!(r.body, b"[]");
    assert_eq!(r.header("link"), None);
    let r = api.get("/v1/pets?status=sold");
    assert_eq!(r.body, b"[]");
}

#[test]
fn status_filter_returns_only_that_status_in_ascending_order() {
    let api = Api::new();
    for i in 0..40 {
        api.create(
            &format!("p{i}"),
            if i % 4 == 0 { "sold" } else { "available" },
        );
    }
    let sold = api.walk("/v1/pets?status=sold&limit=3");
    assert_eq!(sold, (0..10).map(|i| i * 4 + 1).collect::<Vec<_>>());
    let r = api.get("/v1/pets?status=sold&limit=100");
    for pet in json(&r).as_array().unwrap() {
        assert_eq!(pet["status"], "sold");
    }
    assert!(api.walk("/v1/pets?status=pending").is_empty());
}

#[test]
fn link_next_carries_only_the_parameters_used_plus_cursor() {
    let api = Api::new();
    for _ in 0..5 {
        api.create("a", "sold");
    }
    let r = api.get("/v1/pets?limit=2&status=sold&foo=bar");
    assert_eq!(
        r.header("link"),
        Some(r#"</v1/pets?limit=2&status=sold&cursor=c3>; rel="next""#)
    );
    let r = api.get("/v1/pets?limit=2");
    assert_eq!(
        r.header("link"),
        Some(r#"</v1/pets?limit=2&cursor=c3>; rel="next""#)
    );
    for _ in 0..20 {
        api.create("b", "pending");
    }
    let r = api.get("/v1/pets");
    assert_eq!(
        r.header("link"),
        Some(r#"</v1/pets?cursor=c21>; rel="next""#)
    );
    let r = api.get(&next_target(r.header("link").unwrap()));
    assert_eq!(json(&r).as_array().unwrap().len(), 5);
    assert_eq!(r.header("link"), None, "last page has no next");
    // A page that ends exactly at the last pet has no next link either.
    assert_eq!(api.get("/v1/pets?limit=25").header("link"), None);
}

#[test]
fn walking_next_links_visits_every_pet_exactly_once() {
    let api = Api::new();
    let mut by_status = std::collections::BTreeMap::<&str, Vec<i64>>::new();
    for i in 0..230 {
        let status = ["available", "pending", "sold"][(i * 7 % 11) % 3];
        by_status
            .entry(status)
            .or_default()
            .push(api.create("w", status));
    }
    for limit in [1, 7, 20, 32, 33, 100] {
        assert_eq!(
            api.walk(&format!("/v1/pets?limit={limit}")),
            (1..=230).collect::<Vec<_>>()
        );
        for (status, ids) in &by_status {
            assert_eq!(
                &api.walk(&format!("/v1/pets?limit={limit}&status={status}")),
                ids
            );
        }
    }
}

#[test]
fn malformed_cursor_is_400() {
    let api = Api::new();
    api.create("a", "sold");
    for bad in ["x", "c0", "c-1", "", "1", "c1.5", "%ZZ", "c01"] {
        let m = assert_error(
            &api.get(&format!("/v1/pets?cursor={bad}")),
            400,
            "invalid_parameter",
        );
        assert!(m.contains("cursor") || m.contains("encoded"), "{bad}: {m}");
    }
    // A well-formed cursor past the end is an empty last page.
    let r = api.get("/v1/pets?cursor=c500");
    assert_eq!(
        (r.status.as_u16(), r.body.as_slice(), r.header("link")),
        (200, &b"[]"[..], None)
    );
}

#[test]
fn store_orders_are_not_part_of_v1() {
    let api = Api::new();
    for target in [
        "/v1/store/order",
        "/v1/store/order/1",
        "/v1/store/inventory",
    ] {
        assert_error(&api.get(target), 404, "not_found");
    }
}

#[test]
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
    assert!(!line.contains(KEY) && !line.contains("cursor"));
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

#[test]
fn the_openapi_document_is_public_and_served_byte_for_byte() {
    let mut api = Api::new();
    api.fail_variable("api_key", "no key configured");
    let r = api.request(Method::GET, "/v1/openapi.json", &[], b"");
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let file = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/openapi/petstore-v1.json"
    ))
    .unwrap();
    assert_eq!(r.body, file);
    assert_eq!(json(&r)["info"]["version"], "1.0.0");
    // Other methods on it are not public.
    let api = Api::new();
    let r = api.request(Method::POST, "/v1/openapi.json", &[], b"");
    assert_error(&r, 401, "unauthorized");
    let r = api.request(
        Method::DELETE,
        "/v1/openapi.json",
        &[("Authorization", AUTH)],
        b"",
    );
    assert_error(&r, 405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET"));
}
