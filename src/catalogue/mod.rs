//! The catalogue in the key-value store, over any `KvStore`: the default
//! build's layouts (`counters`, `lanes`, `moved`) behind one dispatcher, or the
//! edge build's `replicated`. docs/key-value-layout.md.

pub mod backend;
#[cfg(not(feature = "edge"))]
mod bound;
#[cfg(not(feature = "edge"))]
mod counters;
mod created;
#[cfg(not(feature = "edge"))]
mod dispatch;
pub mod keys;
#[cfg(not(feature = "edge"))]
mod lanes;
pub mod layout;
mod listed;
#[cfg(not(feature = "edge"))]
mod moved;
mod pending;
#[cfg(not(feature = "edge"))]
mod piece;
// The edge build takes only its bound on a `get-many`.
#[cfg_attr(feature = "edge", allow(dead_code))]
mod reader;
mod record;
#[cfg(feature = "edge")]
mod replicated;
#[cfg(not(feature = "edge"))]
pub use dispatch::Catalogue;
#[cfg(feature = "edge")]
pub use replicated::Catalogue;

pub use backend::{Batches, ClaimBy, KvBackend, Reads};
pub use created::{Created, Keyed, Lease};
pub use keys::{decode_counter, ID_COUNTER, PIECE_LEN};
pub use layout::{Deployment, LayoutName, Page, CATALOGUE_LAYOUT};
pub use listed::{pets_body, Listed};
pub use pending::{Clock, COMMIT_WITHIN_MS, SEAL_AFTER_MS};
pub use record::{encode_pet, PetRecord};
