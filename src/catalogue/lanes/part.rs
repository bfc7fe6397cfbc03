//! A lanes page's part: its pets, how far it went in each lane, whether
//! entries remain, and what it writes back, made by the merge
//! (`merge.rs`) and settled (`settle.rs`).

use crate::catalogue::listed::Listed;
use crate::catalogue::piece::write_back;
use crate::store::KvStore;

/// A page of the lanes: its pets, how far it went in each lane (as many as
/// it lists of each), whether entries remain, what it writes back.
#[derive(Debug, Default)]
pub struct Part {
    pub(super) pets: Vec<Listed>,
    pub(super) lanes: Vec<u64>,
    pub(super) more: bool,
    pub(super) writes: Vec<(String, Vec<u8>)>,
    pub(super) notes: Vec<String>,
    /// The lane each pet was taken from (of a merge's part).
    pub(super) taken: Vec<usize>,
}

impl Part {
    pub fn new(pets: Vec<Listed>, lanes: Vec<u64>, more: bool) -> Part {
        Part {
            pets,
            lanes,
            more,
            ..Part::default()
        }
    }

    /// Its writes made (a failure noted): its pets, how far it went in
    /// each lane, whether entries remain, its notes.
    pub fn written(mut self, store: &impl KvStore) -> (Vec<Listed>, Vec<u64>, bool, Vec<String>) {
        self.notes.extend(write_back(store, &self.writes, false));
        (self.pets, self.lanes, self.more, self.notes)
    }
}
