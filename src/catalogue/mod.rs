//! The catalogue in the key-value store: each request's layout decided in
//! `layout.rs`, from what the store holds, and served by its module: the
//! default build's counters and lanes, the edge build's replicated.
//! docs/key-value-layout.md.

#[cfg(not(feature = "edge"))]
mod atomic;
pub mod backend;
#[cfg_attr(feature = "edge", allow(dead_code, unused_imports))]
mod counters;
mod created;
mod cursor;
#[cfg(feature = "edge")]
mod edge;
pub mod formats;
pub mod keys;
// Each build reads the other's mark, and serves none of its pages.
#[cfg_attr(feature = "edge", allow(dead_code, unused_imports))]
mod lanes;
mod layout;
mod listed;
#[cfg_attr(feature = "edge", allow(dead_code, unused_imports))]
mod moved;
mod parts;
#[cfg_attr(feature = "edge", allow(dead_code, unused_imports))]
mod piece;
#[cfg_attr(feature = "edge", allow(dead_code, unused_imports))]
mod reader;
mod record;
mod refusal;
#[cfg_attr(not(feature = "edge"), allow(dead_code, unused_imports))]
mod replicated;

pub use created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page, CATALOGUE_LAYOUT};
pub use listed::{pets_body, Listed};
pub use record::{encode_pet, PetRecord, COMMIT_WITHIN_MS, SEAL_AFTER_MS};
pub use {backend::KvBackend, keys::decode_counter, keys::PIECE_LEN, layout::BUILT};

/// This build's catalogue: the edge build imports no atomics.
#[cfg(not(feature = "edge"))]
pub use atomic::Catalogue;
#[cfg(feature = "edge")]
pub use edge::Catalogue;
