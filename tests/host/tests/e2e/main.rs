//! End-to-end tests: the real release `.wasm`, served by the Spin-compatible
//! test host on 127.0.0.1, driven over HTTP. One binary, so the component is
//! built and compiled once per run.

mod clients;
mod concurrency;
mod contract;
mod cost;
mod idempotency;
mod index;
mod operations;
mod quirks;
mod support;
