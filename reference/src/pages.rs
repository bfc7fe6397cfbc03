//! What each path answers: our page and its script and style (compiled in),
//! the viewer's files (read from the component's files), a redirect from
//! `/`, and the API's Error body for everything else. Pure: the Spin layer
//! hands in the request and a way to read files.

/// The viewer's files this page uses, as `scripts/build-reference` copies
/// them from the npm package: nothing else under `/docs/viewer/` exists.
pub const VIEWER_FILES: [&str; 6] = [
    "swagger-ui-bundle.js",
    "swagger-ui.css",
    "favicon-32x32.png",
    "LICENSE",
    "NOTICE",
    "swagger-ui-bundle.js.LICENSE.txt",
];

/// Where the component's files are mounted (spin.toml, `files`).
pub const VIEWER_DIR: &str = "/viewer";

const INDEX_HTML: &str = include_str!("../page/index.html");
const REFERENCE_JS: &str = include_str!("../page/reference.js");
const REFERENCE_CSS: &str = include_str!("../page/reference.css");

/// Scripts and styles from this origin only; requests to this origin only
/// (the API); images from this origin and `data:` (the viewer's icons are
/// inline SVG data URLs). `style-src 'unsafe-inline'`: the viewer sets
/// `style` attributes as it renders. Nothing may frame the page.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
     font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Our files change with a release, the viewer's with its pinned version:
/// a client may keep either a few minutes.
const CACHE: &str = "public, max-age=300";

/// Reads the component's mounted files.
pub trait Files {
    /// The whole file at `path`, if it can be read.
    fn read(&self, path: &str) -> Option<Vec<u8>>;
}

/// An answer, whole.
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    fn new(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![
                ("content-type", content_type.to_string()),
                ("x-content-type-options", "nosniff".to_string()),
                ("referrer-policy", "no-referrer".to_string()),
                (
                    "content-security-policy",
                    CONTENT_SECURITY_POLICY.to_string(),
                ),
            ],
            body,
        }
    }

    fn with(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    /// The API's Error body (`code`, `message`, `status`).
    fn error(status: u16, code: &str, message: &str) -> Reply {
        let body = format!(
            r#"{{"code":"{code}","message":{},"status":{status}}}"#,
            json_string(message)
        );
        Reply::new(status, "application/json", body.into_bytes()).with("cache-control", "no-store")
    }
}

/// A JSON string literal of `text`.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The answer to `method` on `path` (no query); `gzip`: the client accepts
/// `Content-Encoding: gzip`.
pub fn answer(method: &str, path: &str, gzip: bool, files: &dyn Files) -> Reply {
    let found = match path {
        "/" => Some(Found::Redirect("/docs")),
        "/docs" | "/docs/" => Some(Found::Ours(INDEX_HTML, "text/html; charset=utf-8")),
        "/docs/reference.js" => Some(Found::Ours(REFERENCE_JS, "text/javascript; charset=utf-8")),
        "/docs/reference.css" => Some(Found::Ours(REFERENCE_CSS, "text/css; charset=utf-8")),
        _ => path
            .strip_prefix("/docs/viewer/")
            .and_then(|name| VIEWER_FILES.iter().find(|f| **f == name))
            .map(|name| Found::Viewer(name)),
    };
    let Some(found) = found else {
        return Reply::error(404, "not_found", &format!("no page at {path}"));
    };
    if method != "GET" && method != "HEAD" {
        return Reply::error(
            405,
            "method_not_allowed",
            "method not allowed on this path; allowed: GET, HEAD",
        )
        .with("allow", "GET, HEAD");
    }
    match found {
        Found::Redirect(to) => Reply::new(302, "text/plain; charset=utf-8", Vec::new())
            .with("location", to)
            .with("cache-control", "no-cache"),
        Found::Ours(text, content_type) => {
            Reply::new(200, content_type, text.as_bytes().to_vec()).with("cache-control", CACHE)
        }
        Found::Viewer(name) => viewer_file(name, gzip, files),
    }
}

enum Found {
    Redirect(&'static str),
    Ours(&'static str, &'static str),
    Viewer(&'static str),
}

/// A viewer file, gzipped when the client takes it and the build made one
/// (the bundle is 1.7 MB, 0.5 MB gzipped).
fn viewer_file(name: &str, gzip: bool, files: &dyn Files) -> Reply {
    let content_type = match name.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "text/plain; charset=utf-8",
    };
    let compressed = gzip
        .then(|| files.read(&format!("{VIEWER_DIR}/{name}.gz")))
        .flatten();
    let reply = match compressed {
        Some(bytes) => Reply::new(200, content_type, bytes).with("content-encoding", "gzip"),
        None => match files.read(&format!("{VIEWER_DIR}/{name}")) {
            Some(bytes) => Reply::new(200, content_type, bytes),
            None => {
                return Reply::error(
                    500,
                    "internal_error",
                    "the viewer's files are missing from this deployment: \
                     build it with scripts/build-reference (spin build)",
                )
            }
        },
    };
    reply
        .with("cache-control", CACHE)
        .with("vary", "Accept-Encoding")
}

/// Whether an `Accept-Encoding` value accepts gzip (a `q=0` refuses it).
pub fn accepts_gzip(accept_encoding: &str) -> bool {
    accept_encoding.split(',').any(|part| {
        let mut pieces = part.split(';').map(str::trim);
        let coding = pieces.next().unwrap_or("");
        let refused = pieces.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Mounted(HashMap<String, Vec<u8>>);

    impl Files for Mounted {
        fn read(&self, path: &str) -> Option<Vec<u8>> {
            self.0.get(path).cloned()
        }
    }

    fn mounted() -> Mounted {
        Mounted(HashMap::from([
            (
                "/viewer/swagger-ui-bundle.js".to_string(),
                b"bundle".to_vec(),
            ),
            (
                "/viewer/swagger-ui-bundle.js.gz".to_string(),
                b"gz".to_vec(),
            ),
            ("/viewer/swagger-ui.css".to_string(), b"css".to_vec()),
        ]))
    }

    #[test]
    fn the_page_and_its_files() {
        let files = mounted();
        let page = answer("GET", "/docs", true, &files);
        assert_eq!(page.status, 200);
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(
            page.header("content-security-policy"),
            Some(CONTENT_SECURITY_POLICY)
        );
        let html = String::from_utf8(page.body).unwrap();
        for src in [
            "/docs/viewer/swagger-ui-bundle.js",
            "/docs/viewer/swagger-ui.css",
            "/docs/reference.js",
            "/docs/reference.css",
        ] {
            assert!(html.contains(src), "{src}");
        }
        assert!(
            !html.contains("<script>"),
            "no inline script: CSP allows none"
        );
        assert_eq!(answer("GET", "/docs/", false, &files).status, 200);
        let js = answer("GET", "/docs/reference.js", true, &files);
        assert!(String::from_utf8(js.body)
            .unwrap()
            .contains("/v1/openapi.json"));
        let css = answer("HEAD", "/docs/viewer/swagger-ui.css", true, &files);
        assert_eq!((css.status, css.body.as_slice()), (200, b"css".as_slice()));
        assert_eq!(css.header("content-encoding"), None, "no .gz built for it");
    }

    #[test]
    fn the_bundle_is_gzipped_only_for_a_client_that_takes_it() {
        let files = mounted();
        let gz = answer("GET", "/docs/viewer/swagger-ui-bundle.js", true, &files);
        assert_eq!(gz.body, b"gz");
        assert_eq!(gz.header("content-encoding"), Some("gzip"));
        assert_eq!(gz.header("vary"), Some("Accept-Encoding"));
        let plain = answer("GET", "/docs/viewer/swagger-ui-bundle.js", false, &files);
        assert_eq!(plain.body, b"bundle");
        assert_eq!(plain.header("content-encoding"), None);
        assert!(accepts_gzip("gzip, deflate, br"));
        assert!(accepts_gzip("br;q=1.0, GZIP;q=0.5"));
        assert!(accepts_gzip("*"));
        assert!(!accepts_gzip("gzip;q=0, br"));
        assert!(!accepts_gzip("identity"));
    }

    #[test]
    fn root_redirects_to_the_page() {
        let r = answer("GET", "/", true, &mounted());
        assert_eq!(r.status, 302);
        assert_eq!(r.header("location"), Some("/docs"));
        assert!(r.body.is_empty());
    }

    #[test]
    fn other_paths_and_methods_are_the_apis_error_bodies() {
        let files = mounted();
        for path in [
            "/docs/nope",
            "/docs/viewer/index.html",
            "/docs/viewer/../../etc/passwd",
            "/docs/viewer/",
            "/docsx",
        ] {
            let r = answer("GET", path, true, &files);
            assert_eq!(r.status, 404, "{path}");
            assert_eq!(r.header("content-type"), Some("application/json"));
            let body = String::from_utf8(r.body).unwrap();
            assert!(
                body.starts_with(r#"{"code":"not_found","message":"no page at "#),
                "{body}"
            );
            assert!(body.ends_with(r#","status":404}"#), "{body}");
        }
        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            let r = answer(method, "/docs", true, &files);
            assert_eq!(r.status, 405, "{method}");
            assert_eq!(r.header("allow"), Some("GET, HEAD"));
            let body = String::from_utf8(r.body).unwrap();
            assert!(body.contains(r#""code":"method_not_allowed""#), "{body}");
        }
        let quoted = answer("GET", "/docs/\"x\\", true, &files);
        let body = String::from_utf8(quoted.body).unwrap();
        assert!(body.contains(r#"no page at /docs/\"x\\""#), "{body}");
    }

    #[test]
    fn a_deployment_without_the_viewers_files_says_so() {
        let r = answer("GET", "/docs/viewer/favicon-32x32.png", true, &mounted());
        assert_eq!(r.status, 500);
        assert!(String::from_utf8(r.body)
            .unwrap()
            .contains("scripts/build-reference"));
    }
}
