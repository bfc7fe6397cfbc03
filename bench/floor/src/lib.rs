//! Hello, world as a Spin HTTP component: the benchmarks' floor, i.e. what
//! the platform costs before a component does any work. Compiled for wasm32
//! only (natively it is empty, so `cargo test --workspace` links).
#![cfg(target_arch = "wasm32")]

use spin_sdk::http::{IntoResponse, Request, Response};

#[spin_sdk::http_component]
fn hello(_request: Request) -> impl IntoResponse {
    Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body("hello, world\n")
        .build()
}
