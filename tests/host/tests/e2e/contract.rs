//! The contract and decisions.md over real HTTP, against the real component.

use serde_json::json;

use crate::support::{loaded, serve, ROTATED_KEY};
use petstore_host::kv::Backend;

#[test]
fn the_component_imports_only_what_a_spin_host_provides() {
    let imports = loaded().imports();
    assert!(
        imports
            .iter()
            .any(|i| i.starts_with("wasi:keyvalue/atomics@0.2.0-draft2")),
        "{imports:?}"
    );
    let allowed = |name: &str| {
        let (interface, version) = name.split_once('@').unwrap_or((name, ""));
        match interface {
            "wasi:keyvalue/store" | "wasi:keyvalue/atomics" | "wasi:keyvalue/batch" => {
                version == "0.2.0-draft2"
            }
            "fermyon:spin/variables" => version == "2.0.0",
            i if i.starts_with("wasi:http/") || i.starts_with("wasi:io/") => {
                version.starts_with("0.2.")
            }
            // What the preview1 adapter needs: WASI CLI, clocks, filesystem, random.
            i if [
                "wasi:cli/",
                "wasi:clocks/",
                "wasi:filesystem/",
                "wasi:random/",
            ]
            .iter()
            .any(|p| i.starts_with(p)) =>
            {
                version.starts_with("0.2.")
            }
            _ => false,
        }
    };
    let unexpected: Vec<&String> = imports.iter().filter(|i| !allowed(i)).collect();
    assert!(
        unexpected.is_empty(),
        "imports a Spin host may not provide: {unexpected:?}"
    );
    // `batch` is imported for set-many; that get-many is never called is
    // counted by the host (concurrency.rs).
}

#[test]
fn create_then_fetch_and_list_over_http() {
    let s = serve(Backend::Memory);
    let r = s.post(r#"{"name":"Rex","categoryId":7,"status":"sold","id":42}"#);
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("location"), Some("/v1/pets/1"));
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
}

#[test]
fn every_error_is_an_error_body_with_its_headers() {
    let s = serve(Backend::Memory);
    s.create("a", "sold");
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
    assert_eq!(
        wrong.header("deprecation"),
        None,
        "401 comes before routing"
    );
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
    s.get("/v1/pets/abc").assert_error(404, "not_found");
    let m = s.send("DELETE", "/v1/pets/1", Some(crate::support::KEY), &[], None);
    m.assert_error(405, "method_not_allowed");
    assert_eq!(m.header("allow"), Some("GET"));
    let m = s.send(
        "PUT",
        "/v1/pets",
        Some(crate::support::KEY),
        &[],
        Some(b"{}"),
    );
    m.assert_error(405, "method_not_allowed");
    assert_eq!(m.header("allow"), Some("GET, POST"));
    for q in [
        "limit=0",
        "limit=101",
        "limit=abc",
        "limit=1.5",
        "limit=",
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
        r#"{"name":"a","categoryId":1,"status":"x"}"#,
    ] {
        s.post(body).assert_error(400, "invalid_body");
    }
    let key = Some(crate::support::KEY);
    s.send(
        "POST",
        "/v1/pets",
        key,
        &[("content-type", "text/plain")],
        Some(br#"{"name":"a","categoryId":1}"#),
    )
    .assert_error(415, "unsupported_media_type");
    let big = vec![b' '; 16 * 1024 + 1];
    s.send(
        "POST",
        "/v1/pets",
        key,
        &[("content-type", "application/json")],
        Some(&big),
    )
    .assert_error(413, "payload_too_large");
    // Nothing of that was stored: still one pet.
    assert_eq!(s.walk("/v1/pets"), vec![1]);
    let c = s.send(
        "POST",
        "/v1/pets",
        key,
        &[("content-type", "application/json; charset=utf-8")],
        Some(br#"{"name":"b","categoryId":1}"#),
    );
    assert_eq!(c.status, 201);
}

#[test]
fn pagination_walks_visit_every_pet_once_with_link_headers() {
    let s = serve(Backend::Memory);
    let mut by_status: [Vec<i64>; 3] = Default::default();
    for i in 0..75 {
        let st = i % 3;
        by_status[st].push(s.create("p", ["available", "pending", "sold"][st]));
    }
    let first = s.get("/v1/pets?limit=10&status=pending&x=1");
    assert_eq!(
        first.header("link"),
        Some(r#"</v1/pets?limit=10&status=pending&cursor=c11>; rel="next""#)
    );
    assert_eq!(
        s.get("/v1/pets").ids(),
        (1..=20).collect::<Vec<_>>(),
        "default limit 20"
    );
    assert_eq!(
        s.get("/v1/pets").header("link"),
        Some(r#"</v1/pets?cursor=c21>; rel="next""#)
    );
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

#[test]
fn both_keys_of_a_rotation_are_accepted() {
    let s = serve(Backend::Memory);
    for key in [crate::support::KEY, ROTATED_KEY] {
        let r = s.send("GET", "/v1/pets", Some(key), &[], None);
        assert_eq!(r.status, 200, "{key}");
    }
    s.send("GET", "/v1/pets", Some("e2e-key, rotated-key"), &[], None)
        .assert_error(401, "unauthorized");
}

/// The log lines so far, once there are `n` (the host prints a line after
/// the response is sent).
fn log_lines(s: &crate::support::Server, n: usize) -> Vec<serde_json::Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let lines = s.log.lock().unwrap().clone();
        if lines.len() >= n || std::time::Instant::now() > deadline {
            return lines
                .iter()
                .map(|l| {
                    assert!(
                        !l.contains("secret")
                            && !l.contains(crate::support::KEY)
                            && !l.contains('?'),
                        "{l}"
                    );
                    serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
                })
                .collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn one_json_log_line_per_request_with_its_id_never_the_query_or_key() {
    let s = serve(Backend::Memory);
    let listed = s.send(
        "GET",
        "/v1/pets?limit=5&cursor=c1",
        Some(crate::support::KEY),
        &[("x-request-id", "client-7")],
        None,
    );
    let wrong = s.send("GET", "/v1/pets", Some("wrong-secret"), &[], None);
    s.create("logged", "sold");
    let lines = log_lines(&s, 3);
    assert_eq!(lines.len(), 3, "{lines:?}");
    let first = &lines[0];
    assert_eq!(first["request_id"], "client-7");
    assert_eq!(listed.header("x-request-id"), Some("client-7"));
    assert_eq!(first["method"], "GET");
    assert_eq!(first["path"], "/v1/pets");
    assert_eq!(first["status"], 200);
    assert!(first["duration_ms"].as_f64().unwrap() > 0.0);
    assert!(first["kv_calls"].as_u64().unwrap() >= 1);
    let second = &lines[1];
    assert_eq!(second["status"], 401);
    assert_eq!(second["kv_calls"], 0);
    // A generated id: 128 random bits in hex, echoed.
    let id = wrong.header("x-request-id").unwrap();
    assert_eq!(second["request_id"], id);
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(lines[2]["method"], "POST");
    assert_eq!(lines[2]["status"], 201);
    assert_eq!(lines[2]["kv_calls"], 3);
    let fields: Vec<_> = first.as_object().unwrap().keys().cloned().collect();
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
}

#[test]
fn health_answers_without_a_key_and_fails_with_the_store() {
    for backend in crate::support::BACKENDS {
        let s = serve(backend);
        let r = s.send(
            "GET",
            "/v1/health",
            None,
            &[("x-request-id", "probe-1")],
            None,
        );
        assert_eq!(
            (r.status, r.body.as_str()),
            (200, r#"{"status":"ok"}"#),
            "{backend:?}"
        );
        assert_eq!(r.header("x-request-id"), Some("probe-1"));
        s.host.kv().inject(&[petstore_host::kv::Fault::Fail(1)]);
        let r = s.send("GET", "/v1/health", None, &[], None);
        s.host.kv().inject(&[]);
        r.assert_error(503, "store_unavailable");
        let lines = log_lines(&s, 2);
        assert_eq!(lines[1]["status"], 503);
        assert!(
            lines[1]["cause"]
                .as_str()
                .unwrap()
                .contains("key-value store"),
            "{:?}",
            lines[1]
        );
    }
}

#[test]
fn paths_outside_the_route_never_reach_the_component() {
    let s = serve(Backend::Memory);
    let r = s.send("GET", "/pets", Some(crate::support::KEY), &[], None);
    assert_eq!(r.status, 404);
    assert!(s.log.lock().unwrap().is_empty());
}

#[test]
fn the_served_openapi_document_is_the_file_byte_for_byte() {
    let s = serve(Backend::Memory);
    let r = s.send("GET", "/v1/openapi.json", None, &[], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let file =
        std::fs::read_to_string(crate::support::workspace().join("openapi/petstore-v1.json"))
            .unwrap();
    assert_eq!(r.body, file);
}

/// The component declares a 256 KiB stack (build.rs): the deepest body a
/// client can send (16 KiB of nesting) is still a 400, never a trap.
#[test]
fn the_deepest_body_within_the_limit_is_a_400_on_the_small_stack() {
    let s = serve(Backend::Memory);
    let deep = format!("{{\"name\":{}", "[".repeat(16 * 1024 - 8));
    s.post(&deep).assert_error(400, "invalid_body");
    assert_eq!(s.get("/v1/pets").status, 200);
}
