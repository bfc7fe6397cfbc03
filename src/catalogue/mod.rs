//! The catalogue in the key-value store: how a pet is written, indexed and
//! read, over any [`KvStore`]. The layout and why it is correct on every
//! backend's quirks: docs/key-value-layout.md. One job per file:
//!
//! - [`backend`]: Spin's backends, and what each decides here;
//! - [`keys`]: the key names, and the counter encodings of Spin's backends;
//! - [`ahead`]: how a page reads: a `get` at a time, or batches fetched ahead;
//! - [`create`]: reserving an id and a position, and the commit;
//! - [`keyed`]: a create under an `Idempotency-Key`, exactly once per key;
//! - [`pending`]: the pending record a keyed create stages before its claim;
//! - [`piece`]: the index piece, a cache of 32 positions of a list, as text;
//! - [`list`]: a page's walk along a list, healing the pieces it reads;
//! - [`listed`]: a pet as a list holds it, a span of a piece's text;
//! - [`record`]: the [`Catalogue`] handle, what `pet:{id}` holds, getPet;
//! - [`sequences`]: layout v3's ids, from 16 sequences, and which layout a
//!   store holds;
//! - `truth`: a page's look-ups of what its pieces lack.
//!
//! A create of layout v2 (SQLite, Redis, and stores written before 1.3.0) is
//! two `increment`s and one `set-many` (one transaction, one `MSET`; on
//! DynamoDB two `set`s); of layout v3 (DynamoDB) one `get-many`, one
//! `increment` of one of 16 sequences and one `set`. It never touches the
//! index. The pieces are a cache over data that
//! never changes (`pet`, `slot`): a reader takes what a piece holds, fills
//! gaps from that truth, and writes the piece back, so a missing, stale or
//! unreadable piece costs reads once and never changes an answer.

pub mod ahead;
pub mod backend;
pub mod create;
pub mod keyed;
pub mod keys;
pub mod list;
pub mod listed;
pub mod pending;
pub mod piece;
pub mod record;
pub mod sequences;
mod truth;

pub use backend::{Batches, ClaimBy, KvBackend, Reads};
pub use create::Reserved;
pub use keyed::{Created, Lease};
pub use keys::{decode_counter, encode_counter_like, FALLBACK_BUDGET, ID_COUNTER, PIECE_LEN};
pub use list::Page;
pub use listed::{pets_body, Listed};
pub use pending::Pending;
pub use record::{encode_pet, Catalogue, PetRecord};
pub use sequences::{Layout, Sequences, SEQUENCES, V3_MARK};

use crate::errors::ApiError;
use crate::model::{IdempotencyKey, NewPet};
use crate::platform::Platform;
use crate::retry::Retrying;
use crate::store::KvStore;

/// A create as the API asks for it, on the deployment's backend: each call
/// retried under the backend's policy, committed as its batches allow, and
/// with an `Idempotency-Key` (and the lease its unfinished creates keep it
/// for), exactly once per key.
///
/// On a store declared `aws_dynamo` the create first reads which layout the
/// store holds (`sequences`); a store no create ran on becomes layout v3.
///
/// A store declared SQLite or Redis that shows it is DynamoDB (a contended
/// `increment` fails as only DynamoDB's does) is from then on treated as
/// DynamoDB by this request: its retry policy, and a commit that writes the
/// slot before the pet. The success path makes the same calls either way;
/// `/v1/health` still answers 503 `misconfigured` until the declaration is
/// fixed (docs/operations.md).
pub fn create_pet<S: KvStore>(
    store: &S,
    platform: &dyn Platform,
    backend: KvBackend,
    new: NewPet,
    key: Option<(&IdempotencyKey, Lease)>,
) -> Result<Created, ApiError> {
    let mut store = Retrying::new(store, platform, backend.retry_policy());
    if backend.batches() == Batches::Atomic {
        store = store.escalating(backend::UNDECLARED_DYNAMODB);
    }
    match key {
        None => {
            let catalogue = Catalogue::new(&store);
            if backend == KvBackend::AwsDynamo {
                if let Layout::Sequences(sequences) = catalogue.layout_for_create()? {
                    return catalogue
                        .create_sequenced(&sequences, new)
                        .map(Created::Pet);
                }
            }
            let reserved = catalogue.reserve(new.status)?;
            let batches = if store.escalated() {
                Batches::Unordered
            } else {
                backend.batches()
            };
            catalogue
                .create_reserved(reserved, new, batches)
                .map(Created::Pet)
        }
        Some((key, lease)) => keyed::create(&store, key, new, lease, backend.claim_by()),
    }
}
