//! Link settings of the component, and the OpenAPI document it serves.
//!
//! A request runs in a fresh instance whose linear memory the host resets
//! afterwards (wasmtime's pooling allocator, as `spin up` uses it, clears
//! the whole accessible memory), so every page the module declares costs
//! every request. Rust's default 1 MiB stack is most of it; the service
//! never recurses deeply (serde_json stops at 128 levels, bodies are at
//! most 16 KiB), so 256 KiB is ample.
//!
//! `openapi/petstore-v1.json` is embedded without the white space between
//! its tokens (`OUT_DIR/openapi.json`): the same document, 14 KB less of
//! module and of every answer that serves it. The edge build's
//! (`--features edge`) first takes `openapi/edge-overlay.txt`'s sentences
//! where the default build's say what the edge build does not do.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size=262144");
    }
    let mut document =
        std::fs::read_to_string("openapi/petstore-v1.json").expect("openapi/petstore-v1.json");
    if std::env::var_os("CARGO_FEATURE_EDGE").is_some() {
        let overlay =
            std::fs::read_to_string("openapi/edge-overlay.txt").expect("openapi/edge-overlay.txt");
        document = overlaid(&document, &overlay);
    }
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(format!("{out}/openapi.json"), compact(document.as_bytes()))
        .expect("the compact document");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=openapi/petstore-v1.json");
    println!("cargo:rerun-if-changed=openapi/edge-overlay.txt");
}

/// `document` with each `- ` line of `overlay` replaced by the `+ ` line
/// after it; a `- ` text that is not in the document exactly once stops
/// the build (the two files drifted apart).
fn overlaid(document: &str, overlay: &str) -> String {
    let mut document = document.to_string();
    let mut lines = overlay
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    while let Some(line) = lines.next() {
        let was = line.strip_prefix("- ").expect("a `- ` line");
        let now = lines
            .next()
            .and_then(|l| l.strip_prefix("+ "))
            .expect("a `+ ` line after each `- ` line");
        assert_eq!(
            document.matches(was).count(),
            1,
            "openapi/edge-overlay.txt: not once in the document: {was}"
        );
        document = document.replace(was, now);
    }
    document
}

/// JSON text without the white space between its tokens (inside strings
/// every byte stays).
fn compact(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in json {
        if in_string {
            out.push(b);
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if !b.is_ascii_whitespace() {
            in_string = b == b'"';
            out.push(b);
        }
    }
    out
}
