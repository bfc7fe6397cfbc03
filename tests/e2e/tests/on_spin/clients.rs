//! What caches and browsers get on the wire from real Spin: conditional
//! reads (`ETag`, `If-None-Match`, 304) and CORS for the origins of
//! `cors_origins`, none at all by default.

use petstore_e2e::client::KEY;
use petstore_e2e::stores::{Backend, Store};

#[test]
fn if_none_match_in_every_form_and_the_tag_following_the_page() {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store.start();
        let s = &spin.api;
        s.create("a", "sold");
        let page = s.get("/v1/pets?limit=2");
        let tag = page.header("etag").unwrap().to_string();
        assert_eq!(page.header("cache-control"), Some("private, no-cache"));
        let weak = format!("W/{tag}");
        let listed = format!("\"x\", {tag}");
        for form in [tag.as_str(), &weak, &listed, "*"] {
            let r = s.get_with("/v1/pets?limit=2", &[("if-none-match", form)]);
            assert_eq!(r.status, 304, "{backend:?} {form}");
            assert_eq!(r.body, "");
            assert_eq!(r.header("etag"), Some(tag.as_str()));
            assert_eq!(r.header("cache-control"), Some("private, no-cache"));
            assert_eq!(r.header("content-type"), None);
            assert!(r.header("x-request-id").is_some());
        }
        let stale = s.get_with("/v1/pets?limit=2", &[("if-none-match", "\"0\"")]);
        assert_eq!(
            (stale.status, stale.body.as_str()),
            (200, page.body.as_str())
        );
        s.create("b", "pending");
        let grown = s.get_with("/v1/pets?limit=2", &[("if-none-match", &tag)]);
        assert_eq!(grown.status, 200, "{backend:?}: the page gained a pet");
        assert_ne!(grown.header("etag"), Some(tag.as_str()));
        // A 304 of a page repeats its next link.
        s.create("c", "pending");
        let full = s.get("/v1/pets?limit=2");
        let same = s.get_with(
            "/v1/pets?limit=2",
            &[("if-none-match", full.header("etag").unwrap())],
        );
        assert_eq!(same.status, 304);
        assert_eq!(same.header("link"), full.header("link"));
        assert!(same.header("link").is_some());
        // getPet: cacheable for a day, and its 304 keeps the deprecation.
        let pet = s.get("/v1/pets/1");
        assert_eq!(pet.header("cache-control"), Some("private, max-age=86400"));
        let r = s.get_with(
            "/v1/pets/1",
            &[("if-none-match", pet.header("etag").unwrap())],
        );
        assert_eq!(r.status, 304);
        assert_eq!(r.header("deprecation"), pet.header("deprecation"));
        assert_eq!(r.header("sunset"), pet.header("sunset"));
        // Errors are never stored.
        let missing = s.get("/v1/pets/9");
        missing.assert_error(404, "not_found");
        assert_eq!(missing.header("cache-control"), Some("no-store"));
    }
}

#[test]
fn preflights_from_allowed_and_other_origins_and_no_cors_when_empty() {
    let origin = "http://127.0.0.1:9";
    let store = Store::new(Backend::Sqlite);
    let spin = store.launch().variable("cors_origins", origin).start();
    let s = &spin.api;
    let preflight = |from: &str, path: &str| {
        s.send(
            "OPTIONS",
            path,
            None,
            &[
                ("origin", from),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "authorization, content-type",
                ),
            ],
            None,
        )
    };
    let ok = preflight(origin, "/v1/pets");
    assert_eq!((ok.status, ok.body.as_str()), (204, ""));
    assert_eq!(ok.header("access-control-allow-origin"), Some(origin));
    assert_eq!(ok.header("access-control-allow-methods"), Some("GET, POST"));
    assert_eq!(ok.header("access-control-max-age"), Some("600"));
    assert_eq!(ok.header("vary"), Some("Origin"));
    let allowed = ok.header("access-control-allow-headers").unwrap();
    for name in [
        "Authorization",
        "Content-Type",
        "Idempotency-Key",
        "If-None-Match",
    ] {
        assert!(allowed.contains(name), "{allowed}");
    }
    let pet = preflight(origin, "/v1/pets/1");
    assert_eq!(pet.status, 204);
    assert_eq!(pet.header("access-control-allow-methods"), Some("GET"));
    // Another origin, or a route that does not exist: no grant, handled
    // like any request (authentication first).
    for r in [
        preflight("http://127.0.0.1:10", "/v1/pets"),
        preflight(origin, "/v1/nope"),
    ] {
        r.assert_error(401, "unauthorized");
        assert_eq!(r.header("access-control-allow-origin"), None);
    }
    let real = s.send("GET", "/v1/pets", Some(KEY), &[("origin", origin)], None);
    assert_eq!(real.status, 200);
    assert_eq!(real.header("access-control-allow-origin"), Some(origin));
    let exposed = real.header("access-control-expose-headers").unwrap();
    for name in [
        "Link",
        "Location",
        "ETag",
        "X-Request-Id",
        "Idempotent-Replayed",
    ] {
        assert!(exposed.contains(name), "{exposed}");
    }
    assert_eq!(real.header("vary"), Some("Origin"));
    let error = s.send("GET", "/v1/pets/77", Some(KEY), &[("origin", origin)], None);
    error.assert_error(404, "not_found");
    assert_eq!(error.header("access-control-allow-origin"), Some(origin));

    // The default (cors_origins empty): no CORS header at all; every answer
    // still varies by Origin.
    let plain = Store::new(Backend::Sqlite);
    let plain = plain.start();
    let preflight = plain.api.send(
        "OPTIONS",
        "/v1/pets",
        None,
        &[("origin", origin), ("access-control-request-method", "GET")],
        None,
    );
    preflight.assert_error(401, "unauthorized");
    let real = plain
        .api
        .send("GET", "/v1/pets", Some(KEY), &[("origin", origin)], None);
    assert_eq!(real.status, 200);
    let plain_get = plain.api.get("/v1/pets");
    for r in [preflight, real, plain_get] {
        assert!(
            r.headers.keys().all(|n| !n.starts_with("access-control-")),
            "{:?}",
            r.headers
        );
        assert_eq!(r.header("vary"), Some("Origin"));
    }
}
