//! The suites that need the test host: the real release `.wasm`, served by
//! our Spin-compatible host on 127.0.0.1 and driven over HTTP, where the
//! host arms a fault at the N-th key-value call, loses a reply after applying
//! a call, or counts every call and byte exactly. Everything a client or an
//! operator can see without such control runs on real Spin (`on_spin`).

mod batches;
mod concurrency;
mod contract;
mod cost;
mod idempotency;
mod index;
mod quirks;
mod replicated;
mod size;
mod support;
