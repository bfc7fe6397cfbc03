//! The API reference page, the app's second component, on real `spin up`:
//! `/` redirects to `/docs`, the page and every file it names are served
//! (the bundle gzipped to a client that takes it), with the page's
//! Content-Security-Policy; its own errors are the API's Error bodies; none
//! of it reaches the API component. The page in a browser:
//! `scripts/reference_check.py`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use petstore_e2e::stores::{Backend, Store};

/// The head (lower case) and body of one raw HTTP/1.1 exchange, the body
/// as bytes (`Content-Length` of them).
fn raw_get(port: u16, path: &str, headers: &str) -> (String, Vec<u8>) {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}\r\n");
    (&stream).write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line.to_lowercase());
    }
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (head, body)
}

#[test]
fn the_page_and_every_file_it_names_are_served_and_nothing_reaches_the_api() {
    let store = Store::new(Backend::Sqlite);
    let spin = store.start();
    let api = &spin.api;
    let root = api.send("GET", "/", None, &[], None);
    assert_eq!((root.status, root.header("location")), (302, Some("/docs")));

    let page = api.send("GET", "/docs", None, &[], None);
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = page.header("content-security-policy").unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    // Every file the page names, from this origin.
    let named: Vec<&str> = page
        .body
        .split(['"', '\''])
        .filter(|s| s.starts_with("/docs/"))
        .collect();
    assert!(named.len() >= 5, "{named:?}");
    for path in named {
        eprintln!("fetching {path:?}");
        let (head, body) = raw_get(spin.port, path, "");
        assert!(head.starts_with("http/1.1 200"), "{path}: {head}");
        assert!(!body.is_empty(), "{path}");
    }
    let js = api.send("GET", "/docs/reference.js", None, &[], None);
    assert!(js.body.contains("/v1/openapi.json"));
    assert!(js.body.contains("validatorUrl: null"));

    let (head, gzipped) = raw_get(
        spin.port,
        "/docs/viewer/swagger-ui-bundle.js",
        "accept-encoding: gzip, br\r\n",
    );
    assert!(head.contains("content-encoding: gzip"), "{head}");
    assert_eq!(&gzipped[..2], &[0x1f, 0x8b], "a gzip stream");
    let (head, plain) = raw_get(spin.port, "/docs/viewer/swagger-ui-bundle.js", "");
    assert!(!head.contains("content-encoding"), "{head}");
    assert!(
        plain.len() > 3 * gzipped.len(),
        "{} vs {}",
        plain.len(),
        gzipped.len()
    );

    let missing = api.send("GET", "/docs/viewer/index.html", None, &[], None);
    missing.assert_error(404, "not_found");
    let post = api.send("POST", "/docs", None, &[], Some(b"{}"));
    post.assert_error(405, "method_not_allowed");
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    // Spin's own 404 beyond the routes: no component runs.
    let favicon = api.send("GET", "/favicon.ico", None, &[], None);
    assert_eq!((favicon.status, favicon.body.as_str()), (404, ""));

    spin.assert_no_request_was_logged();
}
