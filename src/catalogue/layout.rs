//! The one interface every layout serves (`Layout`), a page, what the
//! catalogue asks of the deployment, and the refusals of a layout or format.

use crate::errors::{ApiError, Misconfiguration};
use crate::model::{Cursor, ListName, NewPet, Pet};
use crate::retry::Retrying;
use crate::store::KvStore;

use super::backend::KvBackend;
use super::created::{Created, Keyed};
use super::listed::Listed;
use super::pending::Clock;
use super::reader::Reader;

/// The variable that says which layout a store should hold.
pub const CATALOGUE_LAYOUT: &str = "catalogue_layout";

/// A layout of the store (the default build's; the edge build has one).
#[cfg_attr(feature = "edge", allow(dead_code))]
pub(super) trait Layout<S: KvStore> {
    /// The keys a page of `list` from `cursor` reads first, with `ctr:id`,
    /// where reads are batched: its layout's only. A cursor this layout did
    /// not make is a 400.
    fn first_keys(
        &self,
        list: ListName,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<String>, ApiError>;

    /// Up to `limit` pets of `list` after `cursor`, in id order.
    fn page(
        &self,
        reader: &mut Reader<'_, S>,
        clock: &Clock,
        list: ListName,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError>;

    /// A create, each call retried under the backend's policy.
    fn create(&self, store: &Retrying<'_, S>, new: NewPet) -> Result<Pet, ApiError>;

    /// A create under an `Idempotency-Key`: exactly one pet per key.
    fn keyed(&self, store: &Retrying<'_, S>, keyed: &Keyed) -> Result<Created, ApiError>;

    /// Where, beside `pet:{id}`, a pet may be that is not stored there yet
    /// (read with `ctr:id`, where reads are batched): nowhere, unless the
    /// layout keeps pets elsewhere first.
    fn unstored_keys(&self, _id: i64) -> Vec<String> {
        Vec::new()
    }

    /// The pet with this id that `pet:{id}` did not hold, if the layout
    /// holds it elsewhere.
    fn unstored(&self, _: &mut Reader<'_, S>, _id: i64) -> Result<Option<Listed>, ApiError> {
        Ok(None)
    }

    /// What `/v1/health` says of the store, after `"status":"ok",`:
    /// `"layout":…` and what follows; an error when this instance cannot
    /// serve it.
    fn health(&self, now_ms: u64) -> Result<String, ApiError>;
}

/// One page of a list, and where the walk goes on (`None`: the walk ends
/// here; a client that follows the list requests this page again).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    /// What the page did to the index, for the log.
    pub notes: Vec<String>,
}

/// What the catalogue asks of the deployment, each only when a request
/// needs it (on Spin every answer is a host call).
pub trait Deployment {
    /// The backend that holds the store (`key_value_backend`).
    fn backend(&self) -> Result<KvBackend, ApiError>;
    /// The layout the operator wants the store to hold (`catalogue_layout`).
    fn wanted(&self) -> Result<LayoutName, ApiError>;
    /// How long an unfinished keyed create keeps its key (ms).
    fn lease_ms(&self) -> Result<u64, ApiError>;
    /// How long a write may take to reach every replica, the clocks' skew
    /// included (ms): `replication_ms` + `clock_skew_ms`.
    #[cfg(feature = "edge")]
    fn settle_ms(&self) -> Result<u64, ApiError>;
}

/// A layout, as the operator names it (`catalogue_layout`).
#[cfg(not(feature = "edge"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutName {
    /// One id counter, a counter and slots per status (every store of
    /// 1.0.0–1.2.0; SQLite, Redis).
    Counters,
    /// Lanes of ids, each a log claimed by compare-and-swap (DynamoDB,
    /// where creates must scale out).
    Lanes,
}

/// The edge build's one layout (`catalogue::replicated`).
#[cfg(feature = "edge")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutName {
    /// Random ids, each create's own keys, pages of what has replicated:
    /// a store without atomics (Akamai Functions).
    Replicated,
}

/// Every layout: its name, and the backends it may be set on (lanes need a
/// compare-and-swap that is atomic on an absent key: only `aws_dynamo`
/// has one). Indexed by the layout itself.
#[cfg(not(feature = "edge"))]
const LAYOUTS: [(LayoutName, &str, &[KvBackend]); 2] = [
    (LayoutName::Counters, "counters", &KvBackend::ALL),
    (LayoutName::Lanes, "lanes", &[KvBackend::AwsDynamo]),
];
#[cfg(not(feature = "edge"))]
const NAMES: &str = "counters, lanes";

/// The edge build's: pages read with `get-many`, which fails every request
/// on Spin's Redis.
#[cfg(feature = "edge")]
const LAYOUTS: [(LayoutName, &str, &[KvBackend]); 1] = [(
    LayoutName::Replicated,
    "replicated",
    &[
        KvBackend::Spin,
        KvBackend::AwsDynamo,
        KvBackend::AzureCosmos,
    ],
)];
#[cfg(feature = "edge")]
const NAMES: &str = "replicated (this is the edge build)";

impl LayoutName {
    pub fn name(self) -> &'static str {
        LAYOUTS[self as usize].1
    }

    pub fn parse(text: &str) -> Result<LayoutName, String> {
        LAYOUTS
            .iter()
            .find(|(_, name, _)| *name == text.trim())
            .map(|(layout, _, _)| *layout)
            .ok_or_else(|| format!("'{}' is not one of {NAMES}", text.trim()))
    }

    /// Whether a store of this backend may hold this layout.
    pub fn runs_on(self, backend: KvBackend) -> bool {
        LAYOUTS[self as usize].2.contains(&backend)
    }

    /// The backends this layout may be set on, by name.
    pub fn backends(self) -> String {
        let mut names = String::new();
        for backend in LAYOUTS[self as usize].2 {
            if !names.is_empty() {
                names.push_str(", ");
            }
            names.push_str(backend.name());
        }
        names
    }
}

/// A cursor whose layout part no page of this store made.
pub fn cursor_not_made_here() -> ApiError {
    ApiError::InvalidParameter(
        "query parameter 'cursor' is not one a page of this store made: \
         use the one in the 'next' link"
            .into(),
    )
}

/// The store holds `held`, the instance was told `wanted`, and cannot move
/// it (lanes to counters is not a move this release makes).
pub fn not_this_layout(held: LayoutName, wanted: LayoutName) -> ApiError {
    ApiError::Unserviceable(Misconfiguration {
        variable: CATALOGUE_LAYOUT,
        why: format!(
            "'{}', but the store holds the {} layout, which this instance does not write: \
             set it to '{}' (docs/operations.md, \"Moving a store to lanes\")",
            wanted.name(),
            held.name(),
            held.name()
        ),
    })
}

/// `ctr:id` holds what no layout of this release reads: a later release's
/// format (refused loudly, never misread), or damage.
pub fn unknown_format(word: &[u8]) -> ApiError {
    let shown: String = word
        .iter()
        .take(40)
        .map(|b| match b.is_ascii_graphic() || *b == b' ' {
            true => *b as char,
            false => '?',
        })
        .collect();
    ApiError::Unserviceable(Misconfiguration {
        variable: CATALOGUE_LAYOUT,
        why: format!(
            "the store's 'ctr:id' holds '{shown}', a layout this release does not read: \
             serve it with the release that wrote it, or a later one (CHANGELOG.md)"
        ),
    })
}

// The default build's layouts only.
#[cfg(test)]
#[cfg(not(feature = "edge"))]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_layouts_is_indexed_by_the_layout_and_names_each_once() {
        for (i, (layout, name, _)) in LAYOUTS.iter().enumerate() {
            assert_eq!(*layout as usize, i);
            assert_eq!(LayoutName::parse(name), Ok(*layout));
            assert_eq!(layout.name(), *name);
        }
        assert!(LayoutName::parse("shards").is_err());
        assert!(LayoutName::Lanes.runs_on(KvBackend::AwsDynamo));
        assert!(!LayoutName::Lanes.runs_on(KvBackend::Spin));
        assert!(KvBackend::ALL
            .iter()
            .all(|b| LayoutName::Counters.runs_on(*b)));
    }
}
