//! Conditional reads and CORS over HTTP, through the test host: what caches
//! and browsers get on the wire.

use petstore_host::kv::Backend;

use crate::support::{loaded, serve, serve_app, KEY};

#[test]
fn if_none_match_in_every_form_and_the_tag_following_the_page() {
    for backend in crate::support::BACKENDS {
        let s = serve(backend);
        s.create("a", "sold");
        let page = s.get("/v1/pets?limit=2");
        let tag = page.header("etag").unwrap().to_string();
        assert_eq!(page.header("cache-control"), Some("private, no-cache"));
        let weak = format!("W/{tag}");
        let listed = format!("\"x\", {tag}");
        for form in [tag.as_str(), &weak, &listed, "*"] {
            let r = s.send(
                "GET",
                "/v1/pets?limit=2",
                Some(KEY),
                &[("if-none-match", form)],
                None,
            );
            assert_eq!(r.status, 304, "{backend:?} {form}");
            assert_eq!(r.body, "");
            assert_eq!(r.header("etag"), Some(tag.as_str()));
            assert_eq!(r.header("cache-control"), Some("private, no-cache"));
            assert_eq!(r.header("content-type"), None);
            assert!(r.header("x-request-id").is_some());
        }
        let stale = s.send(
            "GET",
            "/v1/pets?limit=2",
            Some(KEY),
            &[("if-none-match", "\"0\"")],
            None,
        );
        assert_eq!(
            (stale.status, stale.body.as_str()),
            (200, page.body.as_str())
        );
        s.create("b", "pending");
        let grown = s.send(
            "GET",
            "/v1/pets?limit=2",
            Some(KEY),
            &[("if-none-match", &tag)],
            None,
        );
        assert_eq!(grown.status, 200, "{backend:?}: the page gained a pet");
        assert_ne!(grown.header("etag"), Some(tag.as_str()));
        // getPet: cacheable, and its 304 keeps the deprecation headers.
        let pet = s.get("/v1/pets/1");
        assert_eq!(pet.header("cache-control"), Some("private, max-age=86400"));
        let r = s.send(
            "GET",
            "/v1/pets/1",
            Some(KEY),
            &[("if-none-match", pet.header("etag").unwrap())],
            None,
        );
        assert_eq!(r.status, 304);
        assert_eq!(r.header("deprecation"), pet.header("deprecation"));
        assert_eq!(r.header("sunset"), pet.header("sunset"));
        // Errors are not stored.
        assert_eq!(
            s.get("/v1/pets/9").header("cache-control"),
            Some("no-store")
        );
    }
}

#[test]
fn preflights_from_allowed_and_other_origins_and_no_cors_when_empty() {
    let origin = "http://127.0.0.1:9";
    let s = serve_app(
        loaded().with_variables(&[("cors_origins", origin)]),
        Backend::Memory,
    );
    let preflight = |from: &str| {
        s.send(
            "OPTIONS",
            "/v1/pets",
            None,
            &[("origin", from), ("access-control-request-method", "POST")],
            None,
        )
    };
    let ok = preflight(origin);
    assert_eq!(ok.status, 204);
    assert_eq!(ok.header("access-control-allow-origin"), Some(origin));
    assert_eq!(ok.header("access-control-allow-methods"), Some("GET, POST"));
    assert!(ok
        .header("access-control-allow-headers")
        .unwrap()
        .contains("Idempotency-Key"));
    let other = preflight("http://127.0.0.1:10");
    other.assert_error(401, "unauthorized");
    assert_eq!(other.header("access-control-allow-origin"), None);
    let real = s.send("GET", "/v1/pets", Some(KEY), &[("origin", origin)], None);
    assert_eq!(real.header("access-control-allow-origin"), Some(origin));
    assert!(real
        .header("access-control-expose-headers")
        .unwrap()
        .contains("ETag"));
    assert_eq!(real.header("vary"), Some("Origin"));

    // The default: no CORS header at all.
    let plain = serve(Backend::Memory);
    for r in [
        plain.send(
            "OPTIONS",
            "/v1/pets",
            None,
            &[("origin", origin), ("access-control-request-method", "GET")],
            None,
        ),
        plain.send("GET", "/v1/pets", Some(KEY), &[("origin", origin)], None),
    ] {
        assert!(
            r.headers
                .keys()
                .all(|n| !n.starts_with("access-control-") && n != "vary"),
            "{:?}",
            r.headers
        );
    }
}
