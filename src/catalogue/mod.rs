//! The catalogue in the key-value store, over any [`KvStore`]: one
//! interface ([`Catalogue`]: getPet's read, a page, a create, the health
//! report) over two layouts, each a module of its own: `counters` (one id
//! counter; every store of 1.0.0–1.2.0, SQLite, Redis) and `lanes` (32
//! logs of ids claimed by compare-and-swap; DynamoDB, where creates must
//! scale out). This file and `layout` are where the layouts meet: the store
//! says which it holds, the operator which it should. `lanes` knows one
//! thing of `counters`: an `Idempotency-Key` bound before the store moved,
//! which its keyed create follows as `counters::keyed` does.
//! docs/key-value-layout.md.

mod ahead;
pub mod backend;
mod counters;
mod created;
pub mod keys;
mod lanes;
pub mod layout;
mod listed;
mod pending;
mod piece;
mod record;

pub use backend::{Batches, ClaimBy, KvBackend, Reads};
pub use created::{Created, Keyed, Lease};
pub use keys::{decode_counter, ID_COUNTER, PIECE_LEN};
pub use layout::{Health, LayoutName, Mark, StoreLayout, CATALOGUE_LAYOUT};
pub use listed::{pets_body, Listed};
pub use pending::{Clock, COMMIT_WITHIN_MS, SEAL_AFTER_MS};
pub use record::{encode_pet, PetRecord};

use crate::errors::ApiError;
use crate::model::{Cursor, IdempotencyKey, ListName, NewPet, LANES, WIDTHS};
use crate::platform::Platform;
use crate::retry::Retrying;
use crate::store::KvStore;

use ahead::Reader;
use counters::End;
use keys::{head_key, pet_key, record_key};
use lanes::{Head, Lanes};

/// The pet with this id, if it exists: one `get` of `pet:{id}`. Where it
/// is absent and reads are batched (`reads`, asked only then), the heads of
/// the lanes it may be in too, in one `get-many`: a lanes store's newest
/// pets are held there before they are stored. A head found past the id's
/// round moved on since the first read, and a create stores the pet its
/// head held before it moves the head: the pet is read again, a third
/// call only then.
pub fn get_pet<S: KvStore>(
    store: &S,
    id: i64,
    reads: &dyn Fn() -> Result<Reads, ApiError>,
) -> Result<Option<Listed>, ApiError> {
    let key = pet_key(id);
    let mut heads_read = false;
    loop {
        let stored = store.get(&key)?;
        if stored.is_some() || heads_read || reads()? == Reads::OneByOne {
            return PetRecord::of(&key, stored)?.listed(&key);
        }
        heads_read = true;
        // The heads of the id's lane on a store of 16 lanes and of 32: the
        // one whose pet has this id holds it.
        let [narrow, wide] = lanes::lanes_of(id).map(head_key);
        let keys = if narrow == wide {
            vec![narrow]
        } else {
            vec![narrow, wide]
        };
        let mut moved_on = false;
        for (head, value) in store.get_many(&keys)? {
            if let Some(last) = Head::decode(&head, Some(&value))?.last {
                if last.id == id {
                    return record::listed(&key, last.json).map(Some);
                }
                // A later round of the id's lane (ids of one lane differ by
                // a multiple of its width, and of 16 whatever the store's).
                moved_on |= last.id > id && (last.id - id) % WIDTHS[0] as i64 == 0;
            }
        }
        if !moved_on {
            return Ok(None);
        }
    }
}

/// One page of a list, and where the walk goes on (`None`: the walk ends
/// here; a client that follows the list re-requests this page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    /// What the page did to the index, for the log.
    pub notes: Vec<String>,
}

/// The catalogue over a store of the declared backend.
pub struct Catalogue<'a, S: KvStore> {
    store: &'a S,
    backend: KvBackend,
}

impl<'a, S: KvStore> Catalogue<'a, S> {
    pub fn new(store: &'a S, backend: KvBackend) -> Self {
        Catalogue { store, backend }
    }

    /// Up to `limit` pets of `list` after `cursor`, in id order, on the
    /// layout the store holds; where reads are batched, the first
    /// `get-many` reads the layout, the heads and the pieces of either.
    pub fn page(
        &self,
        clock: &Clock,
        list: ListName,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let start = cursor.cloned().unwrap_or_else(|| Cursor::at(1));
        let mut reader = Reader::new(self.store, self.backend.reads());
        let from = counters::Part {
            position: start.position.unwrap_or(i64::MAX),
            carried: start.carried.clone(),
            since_s: start.since_s,
            ..counters::Part::default()
        };
        if !reader.batched() {
            let part = counters::page(&mut reader, clock, list, from, limit, End::Counter)?;
            return Ok(counters_page(part));
        }
        // Which layout the store holds is read with the pieces: those of
        // either layout the cursor may be in (a counters cursor: the lanes
        // as if they began at id 1, where a new store's do).
        // A lanes cursor has a number per lane of its store; a page with
        // none reads the heads of 32 lanes, as many as a store may have.
        let lanes_from =
            (start.lanes.clone()).unwrap_or_else(|| lanes::rounds_below(1, start.position, LANES));
        let mut keys = vec![ID_COUNTER.to_string()];
        keys.extend(Lanes::head_keys(lanes_from.len()));
        if start.position.is_some() {
            keys.extend(counters::first_keys(list, &from, limit));
        }
        keys.extend(lanes::first_keys(list, &lanes_from, limit));
        reader.fetch(keys)?;
        match StoreLayout::of(reader.peek(ID_COUNTER))? {
            StoreLayout::Lanes(mark) => {
                let lanes = Lanes::read(mark, |key| reader.peek(key))?;
                moved_page(&mut reader, clock, &lanes, list, start, limit)
            }
            _ => {
                let part = counters::page(&mut reader, clock, list, from, limit, End::Counter)?;
                Ok(counters_page(part))
            }
        }
    }

    /// A create, on the layout the operator asked for (`wanted`), each call
    /// retried under the backend's policy; with an `Idempotency-Key`,
    /// exactly once per key. Asked for lanes, a store no create ran on is
    /// claimed for them, and one of the counters layout moves to them.
    pub fn create(
        &self,
        platform: &dyn Platform,
        wanted: LayoutName,
        new: NewPet,
        key: Option<(&IdempotencyKey, Lease)>,
    ) -> Result<Created, ApiError> {
        let mut store = Retrying::new(self.store, platform, self.backend.retry_policy());
        if self.backend.batches() == Batches::Atomic {
            store = store.escalating(backend::UNDECLARED_DYNAMODB);
        }
        let keyed = key.map(|(key, lease)| Keyed {
            record_key: record_key(key),
            new: new.clone(),
            lease,
        });
        let created = match (wanted, &keyed) {
            (LayoutName::Counters, None) => {
                counters::create(&store, new, self.backend.batches()).map(Created::Pet)
            }
            (LayoutName::Counters, Some(keyed)) => {
                counters::keyed::create(&store, keyed, self.backend.claim_by())
            }
            (LayoutName::Lanes, None) => {
                lanes::create(&store, self.lanes_for_create(&store)?, new).map(Created::Pet)
            }
            (LayoutName::Lanes, Some(keyed)) => {
                lanes::keyed::create(&store, keyed, &|| self.lanes_for_create(&store))
            }
        };
        match (created, keyed) {
            (Err(ApiError::StoreUnavailable(e) | ApiError::CreateOutcomeUnknown(e)), Some(_)) => {
                Err(ApiError::KeyedCreateUnavailable(e))
            }
            (created, _) => created,
        }
    }

    /// The heads, on a store that holds lanes, or made to (claimed, or
    /// moved from counters): one `get-many`, and the move's calls once.
    fn lanes_for_create(&self, store: &Retrying<'_, S>) -> Result<Lanes, ApiError> {
        let mut keys = vec![ID_COUNTER.to_string()];
        keys.extend(Lanes::head_keys(LANES));
        let found = store.get_many(&keys)?;
        let value = |key: &str| {
            found
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_slice())
        };
        let mark = match StoreLayout::of(value(ID_COUNTER))? {
            StoreLayout::Lanes(mark) => mark,
            _ => {
                let mut backoff = store.backoff();
                layout::claim_lanes(store, store.now_ms(), || backoff.wait())?
            }
        };
        Lanes::read(mark, value)
    }

    /// The store's layout (one `get` of `ctr:id`), against the operator's.
    pub fn health(&self, wanted: LayoutName) -> Result<Health, ApiError> {
        let layout = StoreLayout::of(self.store.get(ID_COUNTER)?.as_deref())?;
        if let StoreLayout::Lanes(_) = layout {
            if wanted == LayoutName::Counters {
                return Err(layout::not_this_layout(LayoutName::Lanes, wanted));
            }
        }
        Ok(Health { layout, wanted })
    }
}

/// A page of a counters store.
fn counters_page(part: counters::Part) -> Page {
    let more = !part.ended;
    let next = (more || !part.pets.is_empty()).then_some(Cursor {
        position: Some(part.position),
        carried: part.carried,
        since_s: part.since_s,
        lanes: None,
    });
    Page {
        pets: part.pets,
        next,
        notes: part.notes,
    }
}

/// A page of a lanes store: first its ids from before a move (read as the
/// counters layout reads them, up to the last its counter handed out; a
/// status list's up to its counter, which creates of the moment of the
/// move may still raise until [`SEAL_AFTER_MS`] after it), then the lanes.
fn moved_page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    clock: &Clock,
    lanes: &Lanes,
    list: ListName,
    start: Cursor,
    limit: usize,
) -> Result<Page, ApiError> {
    let mark = lanes.mark;
    let settled = clock.now_ms >= mark.moved_ms + SEAL_AFTER_MS;
    let mut page = Page {
        pets: Vec::new(),
        next: None,
        notes: Vec::new(),
    };
    let (mut position, mut carried, mut since_s, mut more) = (None, Vec::new(), 0, false);
    if let (Some(at), true) = (start.position, mark.legacy_last > 0) {
        let from = counters::Part {
            position: at,
            carried: start.carried.clone(),
            since_s: start.since_s,
            ..counters::Part::default()
        };
        let end = match list {
            ListName::All => End::Fixed(mark.legacy_last),
            ListName::Status(_) => End::Counter,
        };
        let part = counters::page(reader, clock, list, from, limit, end)?;
        let done = part.ended && (list == ListName::All || settled) && part.carried.is_empty();
        more = !part.ended;
        position = (!done).then_some(part.position);
        (carried, since_s) = (part.carried, part.since_s);
        page.pets = part.pets;
        page.notes = part.notes;
    }
    let from = match start.lanes {
        Some(from) if from.len() == lanes.width() => from,
        Some(_) => {
            return Err(ApiError::InvalidParameter(
                "query parameter 'cursor' names lanes this store does not have: \
                 use the one in the 'next' link"
                    .into(),
            ))
        }
        None => lanes::rounds_below(mark.base, start.position, lanes.width()),
    };
    let mut walked = from.clone();
    if !more && page.pets.len() < limit {
        let part = lanes::page(reader, lanes, list, from, limit - page.pets.len())?;
        more = part.more;
        walked = part.lanes;
        page.pets.extend(part.pets);
        page.notes.extend(part.notes);
    } else {
        more = true;
    }
    if more || !page.pets.is_empty() {
        page.next = Some(Cursor {
            position,
            carried,
            since_s,
            lanes: Some(walked),
        });
    }
    Ok(page)
}
