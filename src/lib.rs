//! Petstore v1 (`/v1/pets`) as a Spin HTTP component.
//!
//! The core knows nothing of Spin: it runs over the [`store::KvStore`] trait
//! and the [`platform::Platform`] trait (variables, clock, randomness),
//! natively in the unit tests and in the component alike. `spin.rs`,
//! compiled for wasm32 only, is the thin Spin layer.
//!
//! The floors, from the ground up. A module uses only modules on floors
//! below its own (`tests/layers.rs` checks it, and that the files of a
//! folder import each other without a circle):
//!
//! 1. `hex`, `platform`, `store`, `response`: what the host gives (a store,
//!    variables, a clock), a response as the core builds it;
//! 2. `request`, `retry`: a request as the core reads it; retries of a
//!    store's calls;
//! 3. `errors`: the one error type, and its HTTP answer;
//! 4. `model`, `auth`, `cors`, `request_id`, `trace`, `conditional`: the boundary,
//!    where a request becomes typed values or an error, once;
//! 5. `catalogue`: the storage layer, every key and call of the layout;
//! 6. `config`: the Spin variables, parsed into the types of the floors below;
//! 7. `health`: the health probe's answer;
//! 8. `handlers`: each operation, from a routed request to its response;
//! 9. `routes`: routing and authentication, every answer from one place;
//! 10. `log`: the access line of a handled request;
//! 11. `spin`: the Spin layer.

pub mod auth;
pub mod catalogue;
pub mod conditional;
pub mod config;
pub mod cors;
pub mod errors;
pub mod handlers;
pub mod health;
pub mod hex;
pub mod log;
pub mod model;
pub mod platform;
pub mod request;
pub mod request_id;
pub mod response;
pub mod retry;
pub mod routes;
pub mod store;
pub mod trace;

#[cfg(target_arch = "wasm32")]
mod spin;
