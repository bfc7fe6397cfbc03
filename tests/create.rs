//! createPet as a client sees it (docs/contract.md, docs/decisions.md):
//! 201 with the stored pet and its location, defaults, ids, and each
//! rejected body or media type answered with its Error body, storing nothing.

mod common;

use common::{assert_error, json, Api, AUTH};
use http::Method;
use serde_json::json;

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
