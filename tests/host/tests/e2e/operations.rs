//! What operators see end to end: misconfigured variables fail loudly (500
//! with the cause in the log, health 503), digest keys, request ids on
//! every kind of answer.

use petstore_host::kv::{Backend, Fault};

use crate::support::{loaded, serve_app, Server, KEY};

fn with(variables: &[(&str, &str)]) -> Server {
    serve_app(loaded().with_variables(variables), Backend::Memory)
}

fn last_log(s: &Server) -> serde_json::Value {
    for _ in 0..500 {
        if let Some(line) = s.log.lock().unwrap().last() {
            return serde_json::from_str(line).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no log line");
}

#[test]
fn each_misconfiguration_is_a_500_with_its_cause_and_fails_health() {
    let digest_of_key = format!("sha256:{}", "0".repeat(63));
    let cases = [
        ("api_key", "", "holds no key"),
        ("api_key", " ,, ", "holds no key"),
        ("api_key", "ok, has blank", "entry 2 has blanks inside"),
        ("api_key", "naïve", "entry 1 is not ASCII"),
        (
            "api_key",
            digest_of_key.as_str(),
            "entry 1 is not 'sha256:'",
        ),
        (
            "idempotency_lease_ms",
            "soon",
            "variable idempotency_lease_ms",
        ),
        (
            "cors_origins",
            "https://app.test/",
            "variable cors_origins: entry 1",
        ),
    ];
    for (name, value, cause) in cases {
        let s = with(&[(name, value)]);
        for auth in [None, Some(KEY)] {
            let r = s.send("GET", "/v1/pets", auth, &[], None);
            r.assert_error(500, "internal_error");
            let line = last_log(&s);
            assert_eq!(line["status"], 500);
            let logged = line["cause"].as_str().unwrap();
            assert!(logged.contains(cause), "{name}={value:?}: {logged}");
            assert!(logged.contains(name), "{logged}");
            // Never a key (the lease, not a secret, is quoted).
            if name == "api_key" && !value.trim().is_empty() {
                assert!(!logged.contains(value.trim()), "{logged}");
            }
        }
        let health = s.send("GET", "/v1/health", None, &[], None);
        health.assert_error(503, "misconfigured");
        assert!(!health.body.contains(name));
    }
}

#[test]
fn digest_keys_mix_with_plain_keys_and_a_wrong_key_is_401() {
    // printf %s e2e-key | sha256sum
    let digest = "sha256:a781b3e13d2b80957d1b925804148f666cc87adb35c1481686a9687f27f8d8a0";
    let s = with(&[("api_key", &format!("other-key, {digest}"))]);
    assert_eq!(
        s.get("/v1/pets").status,
        200,
        "the key whose digest is listed"
    );
    let other = s.send("GET", "/v1/pets", Some("other-key"), &[], None);
    assert_eq!(other.status, 200);
    let wrong = s.send("GET", "/v1/pets", Some("wrong"), &[], None);
    wrong.assert_error(401, "unauthorized");
    assert_eq!(
        wrong.header("www-authenticate"),
        Some(r#"Bearer realm="petstore", error="invalid_token""#)
    );
}

#[test]
fn request_ids_on_404_and_503() {
    let s = serve_app(loaded(), Backend::Sqlite);
    let r = s.send(
        "GET",
        "/v1/pets/77",
        Some(KEY),
        &[("x-request-id", "a.b:c-d_e")],
        None,
    );
    r.assert_error(404, "not_found");
    assert_eq!(r.header("x-request-id"), Some("a.b:c-d_e"));
    s.host.kv().inject(&[Fault::Fail(1)]);
    let r = s.send(
        "GET",
        "/v1/pets/1",
        Some(KEY),
        &[("x-request-id", "x y")],
        None,
    );
    s.host.kv().inject(&[]);
    r.assert_error(503, "store_unavailable");
    let id = r.header("x-request-id").unwrap().to_string();
    assert_eq!(id.len(), 32, "a bad client id is replaced");
    assert_eq!(last_log(&s)["request_id"], id);
}
