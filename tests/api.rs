//! Routes and authentication as a client sees them: the key before
//! anything else, rotation, unknown paths and methods, getPet's deprecation
//! headers, and the served OpenAPI document.

mod common;

use common::{assert_error, json, Api, AUTH};
use http::Method;

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
        // Store orders are not part of v1 (docs/decisions.md).
        "/v1/store/order",
        "/v1/store/order/1",
        "/v1/store/inventory",
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
fn the_openapi_document_is_public_and_served_as_the_files_json_compact() {
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
    assert_eq!(
        json(&r),
        serde_json::from_slice::<serde_json::Value>(&file).unwrap()
    );
    // Compact: the file less its white space between tokens (here, its
    // newlines and indentation; no string holds a raw newline).
    assert!(!r.body.contains(&b'\n') && r.body.len() < file.len() * 3 / 4);
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
