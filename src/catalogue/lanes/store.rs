//! A lanes store as a create reads it: `ctr:id` and every head in one
//! `get-many`; a store not of the lanes layout yet made one first, by one
//! compare-and-swap of `ctr:id` (claimed new, or moved from counters).

use crate::errors::ApiError;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use crate::catalogue::keys::{decode_counter, ID_COUNTER};
use crate::catalogue::layout::unknown_format;

use super::geometry::Geometry;
use super::heads::Heads;

/// The store's mark and heads, making it a lanes store first if it is not.
pub fn for_create<S: KvStore>(store: &Retrying<'_, S>) -> Result<Heads, ApiError> {
    heads(store, None)
}

/// The heads of the store's lanes, with its mark where its geometry is not
/// known yet: one `get-many`.
pub fn heads<S: KvStore>(
    store: &Retrying<'_, S>,
    known: Option<Geometry>,
) -> Result<Heads, ApiError> {
    let width = known.unwrap_or(Geometry::assumed(None)).width();
    let mark = known.is_none().then(|| ID_COUNTER.to_string());
    let keys: Vec<String> = mark.into_iter().chain(Heads::keys(width)).collect();
    let found = store.get_many(&keys)?;
    let value = |key: &str| found.iter().find(|(k, _)| k == key).map(|(_, v)| &v[..]);
    let geometry = match known.or_else(|| value(ID_COUNTER).and_then(Geometry::from_mark)) {
        Some(geometry) => geometry,
        None => claim(store)?,
    };
    Heads::read(geometry, value)
}

/// Makes the store one of the lanes layout, as the operator asked: a store
/// no create ran on is claimed with a mark of base 1; one of the counters
/// layout moves, its counter replaced by a mark whose lanes begin past the
/// last id it handed out: one compare-and-swap, conditioned on the counter
/// it read, so that a counters create that drew an id meanwhile makes it
/// try again. Returns the geometry the store holds then.
///
/// Only where a compare-and-swap conditioned on a key's absence is atomic
/// (DynamoDB): configuration refuses `lanes` elsewhere.
fn claim<S: KvStore>(store: &Retrying<'_, S>) -> Result<Geometry, ApiError> {
    let mut backoff = store.backoff();
    loop {
        let (cas, word) = store.cas_begin(ID_COUNTER)?;
        let geometry = match word.as_deref() {
            None => Geometry::new(),
            Some(bytes) => match Geometry::from_mark(bytes) {
                Some(held) => return Ok(held),
                None => match decode_counter(bytes).filter(|last| *last >= 0) {
                    Some(last) => Geometry::after(last, store.now_ms()),
                    None => return Err(unknown_format(bytes)),
                },
            },
        };
        if let Ok(SwapReport::Swapped) = store.cas_swap(cas, &geometry.mark()) {
            return Ok(geometry);
        }
        // A conflict, or an error whose outcome is unknown: what the key
        // holds decides (another instance's move counts as ours).
        if let Some(held) = store
            .get(ID_COUNTER)?
            .as_deref()
            .and_then(Geometry::from_mark)
        {
            return Ok(held);
        }
        if !backoff.wait() {
            return Err(ApiError::StoreUnavailable(StoreError(
                "the move to lanes did not land: the counter kept moving".into(),
            )));
        }
    }
}
