//! A Spin-compatible test host for the petstore component: wasmtime with
//! `wasi:http`, and Spin's `wasi:keyvalue` and `fermyon:spin/variables`
//! interfaces, with the measured behaviour of Spin's backends on demand.

pub mod building;
pub mod component;
pub mod floor;
pub mod helpers;
pub mod interfaces;
pub mod kv;
pub mod manifest;
pub mod preload;
pub mod serve;
