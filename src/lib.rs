//! Petstore v1 (`/v1/pets`) as a Spin HTTP component.
//!
//! The core — [`routes`], [`auth`], [`model`], [`catalogue`] over the
//! [`store::KvStore`] trait and the [`platform::Platform`] trait (variables,
//! clock, randomness) — knows nothing of Spin and is unit-tested natively.
//! `spin.rs`, compiled for wasm32 only, is the thin Spin layer.

pub mod auth;
pub mod catalogue;
pub mod conditional;
pub mod config;
pub mod cors;
pub mod errors;
pub mod hex;
pub mod idempotency;
pub mod log;
pub mod model;
pub mod platform;
pub mod request;
pub mod request_id;
pub mod response;
pub mod retry;
pub mod routes;
pub mod store;

#[cfg(target_arch = "wasm32")]
mod spin;
