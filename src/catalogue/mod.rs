//! The catalogue in the key-value store: the default build's layouts,
//! chosen per request in `layout.rs`, or the edge build's `replicated`.
//! docs/key-value-layout.md.

pub mod atomic;
pub mod backend;
mod counters;
mod created;
mod cursor;
pub mod formats;
pub mod keys;
mod lanes;
mod layout;
mod listed;
mod moved;
mod piece;
mod reader;
mod record;
pub mod replicated;

pub use backend::KvBackend;
pub use created::{Clock, Created, Deployment, Keyed, LayoutName, Lease, Page, CATALOGUE_LAYOUT};
pub use keys::{decode_counter, ID_COUNTER, PIECE_LEN};
pub use listed::{pets_body, Listed};
pub use record::{encode_pet, PetRecord, COMMIT_WITHIN_MS, SEAL_AFTER_MS};

/// This build's catalogue and layouts: the edge build imports no atomics.
#[cfg(not(feature = "edge"))]
pub use atomic::{Catalogue, BUILT};
#[cfg(feature = "edge")]
pub use replicated::{Catalogue, BUILT};
