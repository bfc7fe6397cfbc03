//! Link settings of the component. A request runs in a fresh instance whose
//! linear memory the host resets afterwards (wasmtime's pooling allocator,
//! as `spin up` uses it, clears the whole accessible memory), so every
//! page the module declares costs every request. Rust's default 1 MiB stack
//! is most of it; the service never recurses deeply (serde_json stops at
//! 128 levels, bodies are at most 16 KiB), so 256 KiB is ample.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size=262144");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
