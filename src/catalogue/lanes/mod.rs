//! The lanes layout: 32 (or 16) lanes of ids, each a log whose next round a
//! create claims by compare-and-swap of its head; pages merge the lanes.
//! docs/key-value-layout.md, "The lanes layout".

mod choice;
mod claim;
mod cursor;
mod geometry;
mod head;
mod heads;
mod keyed;
mod merge;
mod merged;
mod part;
mod pieces;
mod store;

pub use cursor::Cursor;
pub use geometry::Geometry;

use crate::errors::ApiError;
use crate::model::{self, ListName, NewPet, Pet};
use crate::retry::Retrying;
use crate::store::KvStore;

use super::created::{Created, Keyed};
use super::keys::{head_key, pet_key};
use super::layout::{cursor_not_made_here, not_this_layout, Layout, LayoutName, Page};
use super::listed::Listed;
use super::pending::Clock;
use super::reader::{Reader, BATCH_KEYS};
use super::record::{self, PetRecord};

use head::Head;
use heads::Heads;
use part::Part;

/// A store of the lanes layout: its geometry (`None`: not claimed yet), and
/// whether this instance writes it (the operator asked for lanes).
pub struct Lanes {
    geometry: Option<Geometry>,
    writable: bool,
}

impl Lanes {
    pub fn new(geometry: Option<Geometry>, writable: bool) -> Lanes {
        Lanes { geometry, writable }
    }

    pub fn geometry(&self) -> Option<Geometry> {
        self.geometry
    }

    /// The keys a page of `list` from `from` (a number per lane) reads
    /// first: the heads, and the pieces it expects to need.
    pub fn walk_keys(list: ListName, from: &[u64], limit: usize) -> Vec<String> {
        let mut keys: Vec<String> = Heads::keys(from.len()).collect();
        keys.extend(pieces::first_keys(list, from, limit));
        keys
    }

    /// Up to `limit` pets of `list` after `from` (a number per lane), the
    /// lanes' part of a page: its pets, how far it went in each lane, and
    /// whether entries remain; and, in the unfiltered list, the rounds every
    /// lane had stored, as far as the page knows. A cursor of another width
    /// (a store of 16 lanes has never made one of 32, nor the reverse) is
    /// read for the lanes the store has, the others from their start: any
    /// cursor the document's pattern takes is answered.
    pub fn walk<S: KvStore>(
        &self,
        reader: &mut Reader<'_, S>,
        list: ListName,
        (mut from, stored): (Vec<u64>, u64),
        limit: usize,
    ) -> Result<(Part, u64), ApiError> {
        let Some(geometry) = self.geometry else {
            return Ok((Part::default(), 0));
        };
        // Rounds every lane had stored (a cursor of this width says up to
        // which) are in the pieces and stored: a page of the unfiltered
        // list within them reads no head. One that finds an entry absent
        // (a cursor not made here) reads the heads.
        let mut past =
            from.len() == geometry.width() && reach(list, &from, stored, limit).is_some();
        from.resize(geometry.width(), 0);
        loop {
            let heads = if past {
                Heads::past(geometry, stored)
            } else {
                reader.fetch(Lanes::walk_keys(list, &from, limit))?;
                Heads::read(geometry, |key| reader.peek(key))?
            };
            match merge::page(reader, &heads, list, from.clone(), limit) {
                Ok(part) if !past || part.pets.len() == limit => {
                    let stored = if past { stored } else { heads.stored_rounds() };
                    return Ok((part, stored));
                }
                Err(e) if !past || !matches!(e, ApiError::Internal(_)) => return Err(e),
                // Read within the stored rounds, it found them otherwise.
                _ => past = false,
            }
        }
    }

    /// Where a page from `from` begins in `list` and whether blocks of its
    /// positions are expected to hold it (`merged::start`), on a cursor of
    /// this store's width.
    fn start(&self, list: ListName, from: &[u64], word: u64) -> (Option<u64>, bool) {
        match self.geometry {
            Some(g) if g.width() == from.len() => merged::start(list, from, word),
            _ => (None, false),
        }
    }

    /// What health says of the store's lanes: `"layout":"lanes","lanes":w`.
    pub fn health_json(&self) -> Result<String, ApiError> {
        self.writes()?;
        Ok(match self.geometry {
            None => r#""layout":"none""#.into(),
            Some(g) => format!(r#""layout":"lanes","lanes":{}"#, g.width()),
        })
    }

    /// An instance set to `counters` does not write a lanes store.
    fn writes(&self) -> Result<(), ApiError> {
        match (self.writable, self.geometry) {
            (false, Some(_)) => Err(not_this_layout(LayoutName::Lanes, LayoutName::Counters)),
            _ => Ok(()),
        }
    }

    /// The lanes part of a whole cursor (none: the walk's start): per lane
    /// what was listed, and the rounds every lane had stored.
    fn ours(&self, cursor: Option<&model::Cursor>) -> Result<(Vec<u64>, u64), ApiError> {
        let width = self.geometry.map_or(0, |g| g.width());
        match Cursor::read(cursor.map_or("", model::Cursor::as_str)) {
            Some(Some(part)) => Ok((part.lanes().to_vec(), part.stored_rounds())),
            Some(None) => Ok((vec![0; width], 0)),
            None => Err(cursor_not_made_here()),
        }
    }
}

/// The last round a page of `limit` entries of `list` from `from` reaches,
/// if it lies in rounds up to `stored`: the unfiltered list has an entry
/// per lane and round (each round past the least of `from` adds one at
/// least, so the count ends within `limit` rounds).
fn reach(list: ListName, from: &[u64], stored: u64, limit: usize) -> Option<u64> {
    let least = from
        .iter()
        .copied()
        .min()
        .filter(|_| list == ListName::All)?;
    let mut entries = 0;
    (least + 1..=stored).find(|round| {
        entries += from.iter().filter(|done| *done < round).count();
        entries >= limit
    })
}

impl<S: KvStore> Layout<S> for Lanes {
    fn first_keys(
        &self,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Vec<String>, ApiError> {
        let (from, stored) = self.ours(cursor)?;
        let (at, blocks) = self.start(list, &from, stored);
        match at {
            Some(at) if blocks => return Ok(merged::keys(list, at, limit)),
            _ if list != ListName::All => {
                let wanted = merged::extended(list, at, limit);
                let mut keys = Lanes::walk_keys(list, &from, wanted);
                // From a known position, the blocks of its pets and of the
                // next page's, if they fit the first `get-many`: it writes
                // those absent, and its cursor says if the next are there.
                let blocks = at.map_or(Vec::new(), |at| merged::around(list, at, wanted, limit));
                if keys.len() + blocks.len() < BATCH_KEYS {
                    keys.extend(blocks);
                }
                return Ok(keys);
            }
            _ => {}
        }
        if let Some(last) = reach(list, &from, stored, limit) {
            // The blocks of the rounds the page reaches, no head.
            let least = from.iter().copied().min().unwrap_or(0);
            let mut keys: Vec<String> = Vec::new();
            for round in least + 1..=last {
                let key = pieces::piece_of(list, from.len(), 0, round);
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            return Ok(keys);
        }
        Ok(Lanes::walk_keys(list, &from, limit))
    }

    fn page(
        &self,
        reader: &mut Reader<'_, S>,
        _: &Clock,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let (from, word) = self.ours(cursor)?;
        let (at, blocks) = self.start(list, &from, word);
        let served = match self.geometry {
            Some(g) if blocks => merged::page(reader, g, list, from.clone(), limit),
            _ => None,
        };
        let (mut part, stored) = match (served, self.geometry) {
            (Some(served), _) => served,
            (None, Some(g)) if list != ListName::All => {
                let wanted = merged::extended(list, at, limit);
                let (mut part, rounds) = self.walk(reader, list, (from, 0), wanted)?;
                let word = merged::settle(reader, g, list, (at, rounds), &mut part, limit);
                (part, word)
            }
            _ => self.walk(reader, list, (from, word), limit)?,
        };
        part.write(reader.store());
        let next = (part.more || !part.pets.is_empty())
            .then(|| model::Cursor::made(Cursor::new(part.lanes).stored(stored).encode()));
        Ok(Page {
            pets: part.pets,
            next,
            notes: part.notes,
        })
    }

    fn create(&self, store: &Retrying<'_, S>, new: NewPet) -> Result<Pet, ApiError> {
        self.writes()?;
        claim::create(store, store::for_create(store)?, new)
    }

    fn keyed(&self, store: &Retrying<'_, S>, keyed: &Keyed) -> Result<Created, ApiError> {
        self.writes()?;
        keyed::create(store, keyed, &|| store::for_create(store))
    }

    /// The heads of the lanes the id may be in, on a store of either width.
    fn unstored_keys(&self, id: i64) -> Vec<String> {
        Geometry::lanes_of(id).into_iter().map(head_key).collect()
    }

    /// A pet its lane's head holds, not stored yet. A head past the id's
    /// round moved on since `pet:{id}` was read, and a create stores the pet
    /// its head held before it moves the head: the pet is read again then.
    fn unstored(&self, reader: &mut Reader<'_, S>, id: i64) -> Result<Option<Listed>, ApiError> {
        let Some(geometry) = self.geometry.filter(|g| id >= g.base()) else {
            return Ok(None);
        };
        let (lane, round) = geometry.place(id);
        let key = head_key(lane);
        let head = Head::decode(&key, reader.get(&key)?.as_deref())?;
        match (head.round(), head.into_last()) {
            (r, Some(last)) if r == round => record::listed(&key, last.into_json()).map(Some),
            (r, _) if r > round => {
                let key = pet_key(id);
                PetRecord::of(&key, reader.get(&key)?)?.listed(&key)
            }
            _ => Ok(None),
        }
    }

    fn health(&self, _: u64) -> Result<String, ApiError> {
        self.health_json()
    }
}
