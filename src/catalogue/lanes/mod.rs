//! The lanes layout (DynamoDB, `catalogue_layout = lanes`): ids come from
//! lanes (32; 16 on a store 1.3.0 claimed), each a log of rounds (its
//! `geometry`). A create claims the next round of a lane by a
//! compare-and-swap of the lane's head, which holds that round's pet, after
//! storing the pet the head held before (`claim`): so every round up to the
//! head's is a pet, stored or in the head, and there are no holes and no
//! create half-done. Pages merge the lanes (`merge`); a cursor keeps one
//! number per lane. docs/key-value-layout.md, "The lanes layout".

mod choice;
mod claim;
mod cursor;
mod geometry;
mod head;
mod heads;
mod keyed;
mod merge;
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
use super::reader::Reader;
use super::record::{self, PetRecord};

use head::Head;
use heads::Heads;

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
    /// whether entries remain.
    /// A cursor of another width (a store of 16 lanes has never made one
    /// of 32, nor the reverse) is read for the lanes the store has, the
    /// others from their start: any cursor the document's pattern takes
    /// is answered.
    pub fn walk<S: KvStore>(
        &self,
        reader: &mut Reader<'_, S>,
        list: ListName,
        mut from: Vec<u64>,
        limit: usize,
    ) -> Result<merge::Part, ApiError> {
        let Some(geometry) = self.geometry else {
            return Ok(merge::Part::default());
        };
        from.resize(geometry.width(), 0);
        let heads = Heads::read(geometry, |key| reader.peek(key))?;
        merge::page(reader, &heads, list, from, limit)
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

    /// The lanes part of a whole cursor (none: the walk's start).
    fn ours(&self, cursor: Option<&model::Cursor>) -> Result<Vec<u64>, ApiError> {
        let width = self.geometry.map_or(0, |g| g.width());
        match Cursor::read(cursor.map_or("", model::Cursor::as_str)) {
            Some(Some(part)) => Ok(part.lanes().to_vec()),
            Some(None) => Ok(vec![0; width]),
            None => Err(cursor_not_made_here()),
        }
    }
}

impl<S: KvStore> Layout<S> for Lanes {
    fn first_keys(
        &self,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Vec<String>, ApiError> {
        Ok(Lanes::walk_keys(list, &self.ours(cursor)?, limit))
    }

    fn page(
        &self,
        reader: &mut Reader<'_, S>,
        _: &Clock,
        list: ListName,
        cursor: Option<&model::Cursor>,
        limit: usize,
    ) -> Result<Page, ApiError> {
        let part = self.walk(reader, list, self.ours(cursor)?, limit)?;
        let next = (part.more || !part.pets.is_empty())
            .then(|| model::Cursor::made(Cursor::new(part.lanes).encode()));
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
