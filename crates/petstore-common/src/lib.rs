//! What the Petstore app's components share, as one small crate rather than
//! files included by path: the retry policy of a create's calls ([`policy`]:
//! the API and the benchmarks' floor retry alike), and the writer that hands
//! a whole response to Spin (`send`, wasm32 only: the API and the reference
//! page answer alike).

pub mod policy;

#[cfg(target_arch = "wasm32")]
pub mod send;
