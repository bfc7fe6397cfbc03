//! Which layout a store holds, which one the operator asked for, and the
//! move from one to the other: what `ctr:id` holds says the first (a
//! counter: counters; the lanes mark: lanes; nothing: no create ran yet),
//! the variable `catalogue_layout` the second. docs/key-value-layout.md.

use crate::errors::{ApiError, Misconfiguration};
use crate::store::{KvStore, SwapReport};

use crate::model::LANES;

use super::keys::{decode_counter, ID_COUNTER};
use super::pending::SEAL_AFTER_MS;

/// The variable that says which layout a store should hold.
pub const CATALOGUE_LAYOUT: &str = "catalogue_layout";

/// A layout, as the operator names it (`catalogue_layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutName {
    /// One id counter, a counter and slots per status (every store of
    /// 1.0.0–1.2.0; SQLite, Redis).
    Counters,
    /// Lanes of ids (32; 16 on a store 1.3.0 moved), each a log claimed by
    /// compare-and-swap (DynamoDB, where creates must scale out).
    Lanes,
}

impl LayoutName {
    pub fn name(self) -> &'static str {
        match self {
            LayoutName::Counters => "counters",
            LayoutName::Lanes => "lanes",
        }
    }

    pub fn parse(text: &str) -> Result<LayoutName, String> {
        match text.trim() {
            "counters" => Ok(LayoutName::Counters),
            "lanes" => Ok(LayoutName::Lanes),
            other => Err(format!("'{other}' is not one of counters, lanes")),
        }
    }
}

/// What `ctr:id` says of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreLayout {
    /// No create ever ran.
    Unclaimed,
    /// The counters layout; the last id handed out.
    Counters(i64),
    Lanes(Mark),
}

/// The lanes layout's mark in `ctr:id`: text that no `increment` can
/// parse, so that a release that knows only counters fails its creates
/// on the store instead of writing ids its lists would never show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// The first id of the lanes (1, or past the ids the counter handed out
    /// before the move; always 1 more than a multiple of 32).
    pub base: i64,
    /// The last id the counter handed out before the move (0: none).
    pub legacy_last: i64,
    /// When the move ran (Unix ms; 0 for a store that began in lanes).
    pub moved_ms: u64,
    /// How many lanes the store has: 32, or 16 on a store 1.3.0 claimed.
    pub lanes: usize,
}

/// The mark's first words, by the store's lanes: `petstore-lanes 1` (16
/// lanes, written by 1.3.0) and `petstore-lanes 2` (32): 1.3.0 reads no
/// mark but its own, so it writes nothing on a store of 32 lanes.
const MARK_HEADERS: [(&str, usize); 2] = [("petstore-lanes 1", 16), ("petstore-lanes 2", 32)];

impl Mark {
    /// The mark of a store that moves when its counter stands at `last`:
    /// 32 lanes.
    pub fn after(last: i64, moved_ms: u64) -> Mark {
        Mark {
            base: (last + 31) / 32 * 32 + 1,
            legacy_last: last,
            moved_ms,
            lanes: LANES,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let header = MARK_HEADERS
            .iter()
            .find(|(_, lanes)| *lanes == self.lanes)
            .map_or("", |(header, _)| header);
        format!(
            "{header} {} {} {}",
            self.base, self.legacy_last, self.moved_ms
        )
        .into_bytes()
    }

    fn decode(bytes: &[u8]) -> Option<Mark> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (rest, lanes) = MARK_HEADERS
            .iter()
            .find_map(|(header, lanes)| Some((text.strip_prefix(header)?, *lanes)))?;
        let mut words = rest.split(' ').skip(1);
        let mark = Mark {
            base: words.next()?.parse().ok()?,
            legacy_last: words.next()?.parse().ok()?,
            moved_ms: words.next()?.parse().ok()?,
            lanes,
        };
        let sound = mark.base % 32 == 1 && mark.legacy_last < mark.base && mark.legacy_last >= 0;
        (sound && words.next().is_none()).then_some(mark)
    }
}

impl StoreLayout {
    /// What `ctr:id` holds (`None`: absent).
    pub fn of(word: Option<&[u8]>) -> Result<StoreLayout, ApiError> {
        let Some(bytes) = word else {
            return Ok(StoreLayout::Unclaimed);
        };
        if let Some(mark) = Mark::decode(bytes) {
            return Ok(StoreLayout::Lanes(mark));
        }
        match decode_counter(bytes) {
            Some(last) if last >= 0 => Ok(StoreLayout::Counters(last)),
            _ => Err(ApiError::Internal(format!(
                "stored counter '{ID_COUNTER}' is unreadable"
            ))),
        }
    }

    pub fn name(&self) -> Option<LayoutName> {
        match self {
            StoreLayout::Unclaimed => None,
            StoreLayout::Counters(_) => Some(LayoutName::Counters),
            StoreLayout::Lanes(_) => Some(LayoutName::Lanes),
        }
    }
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

/// Makes the store one of the lanes layout, as the operator asked: a store
/// no create ran on is claimed with a mark of base 1; one of the counters
/// layout moves, its counter replaced by a mark whose lanes begin past the
/// last id it handed out — one compare-and-swap, conditioned on the counter
/// it read, so that a counters create that drew an id meanwhile makes it
/// try again. Returns the mark the store holds then.
///
/// Only where a compare-and-swap conditioned on a key's absence is atomic
/// (DynamoDB): configuration refuses `lanes` elsewhere.
pub fn claim_lanes<S: KvStore>(
    store: &S,
    now_ms: u64,
    mut retry: impl FnMut() -> bool,
) -> Result<Mark, ApiError> {
    loop {
        let (cas, word) = store.cas_begin(ID_COUNTER)?;
        let mark = match StoreLayout::of(word.as_deref())? {
            StoreLayout::Lanes(mark) => return Ok(mark),
            StoreLayout::Unclaimed => Mark::after(0, 0),
            StoreLayout::Counters(last) => Mark::after(last, now_ms),
        };
        if let Ok(SwapReport::Swapped) = store.cas_swap(cas, &mark.encode()) {
            return Ok(mark);
        }
        // A conflict, or an error whose outcome is unknown: what the key
        // holds decides (another instance's move counts as ours).
        if let StoreLayout::Lanes(held) = StoreLayout::of(store.get(ID_COUNTER)?.as_deref())? {
            return Ok(held);
        }
        if !retry() {
            return Err(ApiError::StoreUnavailable(crate::store::StoreError(
                "the move to lanes did not land: the counter kept moving".into(),
            )));
        }
    }
}

/// What `/v1/health` says of the store: its layout, and a move's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub layout: StoreLayout,
    pub wanted: LayoutName,
}

impl Health {
    /// `{"status":"ok","layout":…}`, with `"lanes"` (how many) on a lanes
    /// store, and `"move"` when the operator asked for
    /// lanes on a counters store (it waits for the next create) or the store
    /// moved (`settling` while creates of the moment may still commit ids from
    /// before it, then `done`).
    pub fn json(&self, now_ms: u64) -> String {
        let layout = self.layout.name().map_or("none", LayoutName::name);
        let moving = match self.layout {
            StoreLayout::Counters(_) if self.wanted == LayoutName::Lanes => {
                r#","move":{"from":"counters","to":"lanes","state":"waiting for the next create"}"#
                    .to_string()
            }
            StoreLayout::Lanes(mark) if mark.moved_ms > 0 => {
                let state = if now_ms >= mark.moved_ms + SEAL_AFTER_MS {
                    "done"
                } else {
                    "settling"
                };
                format!(
                    r#","move":{{"from":"counters","to":"lanes","state":"{state}","ids_before":{},"at_ms":{}}}"#,
                    mark.legacy_last, mark.moved_ms
                )
            }
            _ => String::new(),
        };
        let lanes = match self.layout {
            StoreLayout::Lanes(mark) => format!(r#","lanes":{}"#, mark.lanes),
            _ => String::new(),
        };
        format!(r#"{{"status":"ok","layout":"{layout}"{lanes}{moving}}}"#)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_text_no_counter_parses_and_lanes_begin_on_a_block() {
        let mark = Mark::after(1000, 7);
        assert_eq!(mark.base, 1025);
        assert_eq!(
            String::from_utf8(mark.encode()).unwrap(),
            "petstore-lanes 2 1025 1000 7"
        );
        let narrow = StoreLayout::of(Some(b"petstore-lanes 1 33 20 5")).unwrap();
        let StoreLayout::Lanes(narrow) = narrow else {
            panic!("{narrow:?}")
        };
        assert_eq!((narrow.base, narrow.lanes), (33, 16), "1.3.0's mark");
        assert_eq!(narrow.encode(), b"petstore-lanes 1 33 20 5");
        assert_eq!(
            StoreLayout::of(Some(&mark.encode())).unwrap(),
            StoreLayout::Lanes(mark)
        );
        assert_eq!(Mark::after(0, 0).base, 1);
        assert_eq!(Mark::after(32, 0).base, 33);
        assert_eq!(Mark::after(33, 0).base, 65);
        assert!(std::str::from_utf8(&mark.encode())
            .unwrap()
            .parse::<i64>()
            .is_err());
        assert_eq!(StoreLayout::of(None).unwrap(), StoreLayout::Unclaimed);
        assert_eq!(
            StoreLayout::of(Some(b"41")).unwrap(),
            StoreLayout::Counters(41)
        );
        assert_eq!(
            StoreLayout::of(Some(&41i64.to_le_bytes())).unwrap(),
            StoreLayout::Counters(41)
        );
        for bad in [
            "petstore-lanes 1 1024 0 0",
            "petstore-lanes 1 33 40 0",
            "petstore-lanes 3 1 0 0",
            "petstore-lanes 2 1 0 0 32",
            "x",
        ] {
            assert!(StoreLayout::of(Some(bad.as_bytes())).is_err(), "{bad}");
        }
    }
}
