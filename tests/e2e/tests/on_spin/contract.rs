//! The contract and our decisions over HTTP, on each backend, and on a
//! DynamoDB store left undeclared (`key_value_backend` at its default).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use petstore_e2e::client::{KEY, ROTATED_KEY};
use petstore_e2e::stores::{Backend, Store, SETUPS};
use petstore_e2e::workspace;
use serde_json::json;

#[test]
fn create_then_fetch_and_list() {
    for backend in SETUPS {
        let store = Store::setup(backend);
        let spin = store.start();
        let s = &spin.api;
        let r = s.post(r#"{"name":"Rex","categoryId":7,"status":"sold","id":42}"#);
        assert_eq!(r.created_id(), 1, "{backend:?}");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        assert_eq!(
            r.json(),
            json!({"id":1,"name":"Rex","categoryId":7,"status":"sold"})
        );
        let g = s.get("/v1/pets/1");
        assert_eq!((g.status, g.body.as_str()), (200, r.body.as_str()));
        assert_eq!(g.header("deprecation"), Some("@1795219200"));
        assert_eq!(g.header("sunset"), Some("Thu, 05 Dec 2030 00:00:00 GMT"));
        assert_eq!(
            g.header("link"),
            Some(r#"</v1/pets>; rel="successor-version""#)
        );
        let d = s.post(r#"{"name":"Tom","categoryId":1}"#);
        assert_eq!(d.json()["status"], "available", "default status");
        assert_eq!(s.get("/v1/pets").ids(), vec![1, 2]);
        assert_eq!(s.get("/v1/pets?status=available").ids(), vec![2]);
        assert_eq!(s.get("/v1/pets?status=pending").body, "[]");
        // What is stored: the pet as answered (counters: `pet:1`; lanes:
        // the head of lane 0, after the line that names the create).
        let (key, stored) = match store.layout {
            "lanes" => ("lane:0", store.direct().peek("lane:0")),
            _ => ("pet:1", store.direct().peek("pet:1")),
        };
        let stored = stored.unwrap_or_else(|| panic!("{key} stored"));
        assert!(stored.ends_with(r.body.as_bytes()), "{backend:?}");
    }
}

#[test]
fn every_error_is_an_error_body_with_its_headers_and_stores_nothing() {
    for backend in SETUPS {
        let store = Store::setup(backend);
        let spin = store.start();
        let s = &spin.api;
        s.create("a", "sold");
        let keys_before = store.direct().key_count();
        let missing = s.send("GET", "/v1/pets", None, &[], None);
        missing.assert_error(401, "unauthorized");
        assert_eq!(
            missing.header("www-authenticate"),
            Some(r#"Bearer realm="petstore""#)
        );
        let wrong = s.send("GET", "/v1/pets/1", Some("nope"), &[], None);
        wrong.assert_error(401, "unauthorized");
        assert_eq!(
            wrong.header("www-authenticate"),
            Some(r#"Bearer realm="petstore", error="invalid_token""#)
        );
        assert_eq!(wrong.header("deprecation"), None, "401 before routing");
        s.send("GET", "/v1/store/order/1", None, &[], None)
            .assert_error(401, "unauthorized");
        s.get("/v1/store/order/1").assert_error(404, "not_found");
        s.get("/v1/nothing").assert_error(404, "not_found");
        let not_found = s.get("/v1/pets/999");
        not_found.assert_error(404, "not_found");
        assert_eq!(
            not_found.header("sunset"),
            Some("Thu, 05 Dec 2030 00:00:00 GMT")
        );
        for id in ["abc", "0", "-3", "99999999999999999999", "%2B5"] {
            s.get(&format!("/v1/pets/{id}"))
                .assert_error(404, "not_found");
        }
        let m = s.send("DELETE", "/v1/pets/1", Some(KEY), &[], None);
        m.assert_error(405, "method_not_allowed");
        assert_eq!(m.header("allow"), Some("GET"));
        let m = s.send("PUT", "/v1/pets", Some(KEY), &[], Some(b"{}"));
        m.assert_error(405, "method_not_allowed");
        assert_eq!(m.header("allow"), Some("GET, POST"));
        for q in [
            "limit=0",
            "limit=101",
            "limit=-1",
            "limit=abc",
            "limit=1.5",
            "limit=",
            "limit=1&limit=2",
            "status=lost",
            "cursor=zz",
            "cursor=c0",
        ] {
            s.get(&format!("/v1/pets?{q}"))
                .assert_error(400, "invalid_parameter");
        }
        for body in [
            "nope",
            "[]",
            r#"{"name":"a"}"#,
            r#"{"categoryId":1}"#,
            r#"{"name":" ","categoryId":1}"#,
            r#"{"name":"a","categoryId":1e3}"#,
            r#"{"name":"a","categoryId":"7"}"#,
            r#"{"name":"a","categoryId":1,"status":"x"}"#,
        ] {
            s.post(body).assert_error(400, "invalid_body");
        }
        let typed = |content_type: &str, body: &[u8]| {
            s.send(
                "POST",
                "/v1/pets",
                Some(KEY),
                &[("content-type", content_type)],
                Some(body),
            )
        };
        typed("text/plain", br#"{"name":"a","categoryId":1}"#)
            .assert_error(415, "unsupported_media_type");
        typed("application/json", &vec![b' '; 16 * 1024 + 1])
            .assert_error(413, "payload_too_large");
        // Nothing of that was stored.
        assert_eq!(store.direct().key_count(), keys_before, "{backend:?}");
        assert_eq!(s.walk("/v1/pets"), vec![1]);
        let c = typed(
            "application/json; charset=utf-8",
            br#"{"name":"b","categoryId":1}"#,
        );
        assert_eq!(c.status, 201, "{}", c.body);
    }
}

#[test]
fn pagination_walks_visit_every_pet_once_with_link_headers() {
    for backend in SETUPS {
        let store = Store::setup(backend);
        let spin = store.start();
        let s = &spin.api;
        let mut by_status: [Vec<i64>; 3] = Default::default();
        for i in 0..75 {
            let st = i % 3;
            by_status[st].push(s.create("p", ["available", "pending", "sold"][st]));
        }
        let first = s.get("/v1/pets?limit=10&status=pending&x=1");
        // A status cursor: the next position in that status's list
        // (counters), or how far the walk went in each lane (lanes; its
        // last pet, id 29, is in a round every lane had stored: the
        // cursor is exact, `_1`, and no block of 32 pending pets is there).
        let cursor = match store.layout {
            "lanes" => "l0.01001001001001001001001001001000_1",
            _ => "c11",
        };
        assert_eq!(
            first.header("link"),
            Some(
                format!("</v1/pets?limit=10&status=pending&cursor={cursor}>; rel=\"next\"")
                    .as_str()
            )
        );
        assert_eq!(s.get("/v1/pets").ids(), (1..=20).collect::<Vec<_>>());
        let cursor = match store.layout {
            // The walk's first page, read again: the block the first
            // read wrote holds ids 1 to 20, so it reads no head, and its
            // cursor says no round is held whole (`_1` when it reads
            // the heads: every lane had stored its first round).
            "lanes" => "l0.11111111111111111111000000000000",
            _ => "c21",
        };
        assert_eq!(
            s.get("/v1/pets").header("link"),
            Some(format!("</v1/pets?cursor={cursor}>; rel=\"next\"").as_str())
        );
        assert_eq!(s.get("/v1/pets?cursor=c999").body, "[]", "past the end");
        for limit in [1, 10, 33, 100] {
            assert_eq!(
                s.walk(&format!("/v1/pets?limit={limit}")),
                (1..=75).collect::<Vec<_>>()
            );
            for (st, ids) in ["available", "pending", "sold"].iter().zip(&by_status) {
                assert_eq!(&s.walk(&format!("/v1/pets?limit={limit}&status={st}")), ids);
            }
        }
    }
}

#[test]
fn both_keys_of_a_rotation_are_accepted_and_nothing_else() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    for key in [KEY, ROTATED_KEY] {
        let r = spin.api.send("GET", "/v1/pets", Some(key), &[], None);
        assert_eq!(r.status, 200, "{key}");
    }
    for wrong in ["e2e-key, rotated-key", "e2e-ke", "E2E-KEY"] {
        spin.api
            .send("GET", "/v1/pets", Some(wrong), &[], None)
            .assert_error(401, "unauthorized");
    }
}

#[test]
fn the_served_openapi_document_is_the_files_json_compact() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    let r = spin.api.send("GET", "/v1/openapi.json", None, &[], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let file = std::fs::read_to_string(workspace().join("openapi/petstore-v1.json")).unwrap();
    assert_eq!(
        r.json(),
        serde_json::from_str::<serde_json::Value>(&file).unwrap()
    );
    assert!(
        !r.body.contains('\n') && r.body.len() < file.len() * 3 / 4,
        "compact"
    );
}

/// The component declares a 256 KiB stack (build.rs): the deepest body a
/// client can send (16 KiB of nesting) is still a 400, never a trap.
#[test]
fn the_deepest_body_within_the_limit_is_a_400_on_the_small_stack() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    let deep = format!("{{\"name\":{}", "[".repeat(16 * 1024 - 8));
    spin.api.post(&deep).assert_error(400, "invalid_body");
    assert_eq!(spin.api.get("/v1/pets").status, 200);
}

#[test]
fn paths_outside_v1_are_spins_own_404_and_never_reach_the_component() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    let r = spin.api.send("GET", "/pets", Some(KEY), &[], None);
    assert_eq!((r.status, r.body.as_str()), (404, ""));
    spin.assert_no_request_was_logged();
}

/// Spin 4.0.2 answers a bare 500 to a request with a header value that is
/// not UTF-8, before the component runs (docs/spin-platform.md; docs/decisions.md, "Errors").
#[test]
fn a_header_that_is_not_utf8_is_spins_bare_500_before_the_component() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    let mut stream = TcpStream::connect(("127.0.0.1", spin.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = b"GET /v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-request-id: ".to_vec();
    request.extend_from_slice(b"\x80abc\r\nconnection: close\r\n\r\n");
    stream.write_all(&request).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    assert!(head.starts_with("HTTP/1.1 500"), "{answer}");
    assert_eq!(body, "", "no Error body: the component never ran");
    let lower = head.to_ascii_lowercase();
    assert!(!lower.contains("x-request-id"), "{answer}");
    // The same request with a valid id is the component's.
    let ok = spin
        .api
        .send("GET", "/v1/health", None, &[("x-request-id", "abc")], None);
    assert_eq!(ok.status, 200);
    spin.log_line("abc");
    assert_eq!(spin.log_lines().len(), 1, "{}", spin.log_text());
    assert!(spin.output().contains("invalid utf-8"), "{}", spin.output());
}
