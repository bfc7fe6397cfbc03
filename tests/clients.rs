//! What HTTP clients and browsers rely on: conditional reads (ETag,
//! If-None-Match, 304, Cache-Control) and CORS, asserted on what a client
//! sees and on the key-value calls they cost.

mod common;

use common::{assert_error, Api, KEY};
use http::Method;
use petstore::cors::{ALLOW_HEADERS, EXPOSE_HEADERS};
use petstore::response::Response;

const ORIGIN: &str = "http://app.test:8080";

fn get_if(api: &Api, target: &str, if_none_match: &str) -> Response {
    let auth = format!("Bearer {KEY}");
    api.request(
        Method::GET,
        target,
        &[("Authorization", &auth), ("If-None-Match", if_none_match)],
        b"",
    )
}

#[test]
fn get_pet_revalidates_to_a_304_with_the_deprecation_headers() {
    let api = Api::new();
    api.create("Rex", "sold");
    let ok = api.get("/v1/pets/1");
    let tag = ok.header("etag").unwrap().to_string();
    assert!(
        tag.starts_with('"') && tag.ends_with('"') && tag.len() == 18,
        "{tag}"
    );
    assert_eq!(ok.header("cache-control"), Some("private, max-age=86400"));
    let weak = format!("W/{tag}");
    let listed = format!("\"stale\", {tag}");
    for matching in [tag.as_str(), &weak, &listed, "*"] {
        let r = get_if(&api, "/v1/pets/1", matching);
        assert_eq!(r.status.as_u16(), 304, "{matching}");
        assert!(r.body.is_empty());
        assert_eq!(r.header("etag"), Some(tag.as_str()));
        assert_eq!(r.header("cache-control"), Some("private, max-age=86400"));
        assert_eq!(r.header("content-type"), None);
        assert_eq!(r.header("deprecation"), ok.header("deprecation"));
        assert_eq!(r.header("sunset"), ok.header("sunset"));
        assert!(r.header("deprecation").is_some());
    }
    let stale = get_if(&api, "/v1/pets/1", "\"0123\", W/\"4567\"");
    assert_eq!(stale.status.as_u16(), 200);
    assert_eq!(stale.body, ok.body);
    // `*` on a pet that does not exist: the 404, never a 304.
    let r = get_if(&api, "/v1/pets/2", "*");
    assert_error(&r, 404, "not_found");
    assert_eq!(r.header("cache-control"), Some("no-store"));
}

#[test]
fn a_page_tag_changes_when_the_page_gains_a_pet_and_a_304_costs_what_the_200_does() {
    let api = Api::new();
    api.create("a", "sold");
    let first = api.get("/v1/pets?limit=2");
    let tag = first.header("etag").unwrap().to_string();
    assert_eq!(first.header("cache-control"), Some("private, no-cache"));
    api.store.reset_counts();
    api.get("/v1/pets?limit=2");
    let calls_200 = api.store.calls();
    api.store.reset_counts();
    let r = get_if(&api, "/v1/pets?limit=2", &tag);
    assert_eq!(r.status.as_u16(), 304);
    assert_eq!(
        api.store.calls(),
        calls_200,
        "a 304 costs what the 200 costs"
    );
    assert_eq!(r.header("cache-control"), Some("private, no-cache"));
    // The page gains a pet: a new body, a new tag.
    api.create("b", "sold");
    let second = get_if(&api, "/v1/pets?limit=2", &tag);
    assert_eq!(second.status.as_u16(), 200);
    let new_tag = second.header("etag").unwrap();
    assert_ne!(new_tag, tag);
    // A page with pets links on (a client following the list resumes
    // there): a 304 repeats the `Link` of the page it stands for.
    api.create("c", "sold");
    let r = get_if(&api, "/v1/pets?limit=2", new_tag);
    assert_eq!(r.status.as_u16(), 304);
    assert_eq!(
        r.header("link"),
        Some(r#"</v1/pets?limit=2&cursor=c3>; rel="next""#)
    );
    // Other pages and filters have their own tags.
    let sold = api.get("/v1/pets?limit=2&status=sold");
    assert_eq!(sold.header("etag"), Some(new_tag));
    let other = api.get("/v1/pets?limit=1");
    assert_ne!(other.header("etag"), Some(new_tag));
}

#[test]
fn errors_are_never_stored_by_caches() {
    let api = Api::new();
    for r in [
        api.request(Method::GET, "/v1/pets", &[], b""),
        api.get("/v1/pets?limit=0"),
        api.get("/v1/nothing"),
        api.post("{"),
    ] {
        assert!(r.status.as_u16() >= 400);
        assert_eq!(r.header("cache-control"), Some("no-store"), "{}", r.status);
    }
}

fn with_cors(origins: &str) -> Api {
    let mut api = Api::new();
    api.set_variable("cors_origins", origins);
    api
}

fn preflight(api: &Api, target: &str, origin: &str) -> Response {
    api.request(
        Method::OPTIONS,
        target,
        &[
            ("Origin", origin),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "authorization, content-type",
            ),
        ],
        b"",
    )
}

#[test]
fn a_preflight_from_an_allowed_origin_is_answered_without_a_key() {
    let api = with_cors(&format!("https://other.test, {ORIGIN}"));
    for (target, methods) in [
        ("/v1/pets", "GET, POST"),
        ("/v1/pets/1", "GET"),
        ("/v1/health", "GET"),
        ("/v1/openapi.json", "GET"),
    ] {
        let r = preflight(&api, target, ORIGIN);
        assert_eq!(r.status.as_u16(), 204, "{target}");
        assert!(r.body.is_empty());
        assert_eq!(r.header("access-control-allow-origin"), Some(ORIGIN));
        assert_eq!(r.header("access-control-allow-methods"), Some(methods));
        assert_eq!(
            r.header("access-control-allow-headers"),
            Some(ALLOW_HEADERS)
        );
        assert_eq!(r.header("access-control-max-age"), Some("600"));
        assert_eq!(r.header("vary"), Some("Origin"));
        assert!(r.header("x-request-id").is_some());
    }
    assert!(api.store.keys().is_empty());
}

#[test]
fn any_other_options_request_is_handled_as_before_without_cors_headers() {
    let api = with_cors(ORIGIN);
    for r in [
        preflight(&api, "/v1/pets", "http://evil.test"),
        preflight(&api, "/v1/nowhere", ORIGIN),
        api.request(Method::OPTIONS, "/v1/pets", &[("Origin", ORIGIN)], b""),
    ] {
        assert_error(&r, 401, "unauthorized");
        for (name, _) in &r.headers {
            assert!(!name.starts_with("access-control-"), "{name}");
        }
    }
    let evil = preflight(&api, "/v1/pets", "http://evil.test");
    assert_eq!(evil.header("access-control-allow-origin"), None);
    // Authenticated, a plain OPTIONS is a 405 as before.
    let auth = format!("Bearer {KEY}");
    let r = api.request(
        Method::OPTIONS,
        "/v1/pets",
        &[("Authorization", &auth)],
        b"",
    );
    assert_error(&r, 405, "method_not_allowed");
}

#[test]
fn real_responses_name_an_allowed_origin_and_expose_headers() {
    let api = with_cors(ORIGIN);
    let auth = format!("Bearer {KEY}");
    let r = api.request(
        Method::GET,
        "/v1/pets",
        &[("Authorization", &auth), ("Origin", ORIGIN)],
        b"",
    );
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.header("access-control-allow-origin"), Some(ORIGIN));
    assert_eq!(
        r.header("access-control-expose-headers"),
        Some(EXPOSE_HEADERS)
    );
    assert_eq!(r.header("vary"), Some("Origin"));
    // Errors too: a browser script must be able to read them.
    let r = api.request(Method::GET, "/v1/pets", &[("Origin", ORIGIN)], b"");
    assert_error(&r, 401, "unauthorized");
    assert_eq!(r.header("access-control-allow-origin"), Some(ORIGIN));
    // Another origin: no grant, but caches are told the answer varies.
    let r = api.request(
        Method::GET,
        "/v1/pets",
        &[("Authorization", &auth), ("Origin", "http://evil.test")],
        b"",
    );
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.header("access-control-allow-origin"), None);
    assert_eq!(r.header("access-control-expose-headers"), None);
    assert_eq!(r.header("vary"), Some("Origin"));
}

#[test]
fn with_the_variable_empty_no_cors_header_is_ever_sent_and_every_answer_varies_by_origin() {
    let api = with_cors("");
    let auth = format!("Bearer {KEY}");
    let responses = [
        (preflight(&api, "/v1/pets", ORIGIN), 401),
        (
            api.request(
                Method::GET,
                "/v1/pets",
                &[("Authorization", &auth), ("Origin", ORIGIN)],
                b"",
            ),
            200,
        ),
        (api.get("/v1/pets"), 200),
        (api.get("/v1/pets/7"), 404),
    ];
    for (r, status) in responses {
        assert_eq!(r.status.as_u16(), status);
        for (name, _) in &r.headers {
            assert!(!name.starts_with("access-control-"), "{name}");
        }
        // A cache must not hand an answer to a request from another origin,
        // should an operator turn CORS on while it still holds it.
        assert_eq!(r.header("vary"), Some("Origin"));
    }
}

#[test]
fn a_malformed_cors_origins_fails_every_browser_request_and_the_probe() {
    let api = with_cors("https://ok.test, https://bad.test/");
    let auth = format!("Bearer {KEY}");
    let handled = api.handle(petstore::request::Request::new(
        Method::GET,
        "/v1/pets",
        vec![
            ("authorization".into(), auth.into_bytes()),
            ("origin".into(), b"https://ok.test".to_vec()),
        ],
        petstore::request::Body::Complete(vec![]),
    ));
    assert_error(&handled.response, 500, "internal_error");
    assert!(handled
        .detail
        .unwrap()
        .starts_with("variable cors_origins: entry 2"));
    let r = api.request(Method::GET, "/v1/health", &[], b"");
    assert_error(&r, 503, "misconfigured");
    // Not even a preflight is granted.
    assert_error(
        &preflight(&api, "/v1/pets", "https://ok.test"),
        500,
        "internal_error",
    );
    // A request that is not a browser's (no Origin) does not need the
    // variable, and does not read it.
    api.reads.borrow_mut().clear();
    assert_eq!(api.get("/v1/pets").status.as_u16(), 200);
    assert_eq!(*api.reads.borrow(), ["api_key", "key_value_backend"]);
}
