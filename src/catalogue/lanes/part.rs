//! What a page of the lanes found: its pets, how far it went in each
//! lane, and what it writes back (the index pieces it filled, the merged
//! blocks it passed), written in one call at the page's end.

use crate::catalogue::listed::Listed;
use crate::catalogue::reader::BATCH_WRITES;
use crate::store::KvStore;

/// A page of the lanes: its pets, in id order; how far the walk went in
/// each lane; whether entries remain; what it writes back, and what it did
/// to the pieces.
#[derive(Debug, Default)]
pub struct Part {
    pub pets: Vec<Listed>,
    pub lanes: Vec<u64>,
    pub more: bool,
    pub writes: Vec<(String, Vec<u8>)>,
    pub notes: Vec<String>,
}

impl Part {
    /// Writes what the page learned back, in one call (`set`, or a
    /// `set-many` of at most [`BATCH_WRITES`]: a page after a burst of
    /// creates touches a piece in each of 32 lanes, and a second write
    /// would be a round trip more). What is not written, or whose write
    /// failed, is only said: a later page that reads it writes it again.
    pub fn write<S: KvStore>(&mut self, store: &S) {
        let written = match &self.writes[..] {
            [] => Ok(()),
            [(key, text)] => store.set(key, text),
            many => store.set_many(&many[..many.len().min(BATCH_WRITES)]),
        };
        if let Err(e) = written {
            self.notes.push(format!("index pieces not written ({e})"));
        }
        if self.writes.len() > BATCH_WRITES {
            let left = self.writes.len() - BATCH_WRITES;
            self.notes.push(format!("{left} left for a later page"));
        }
    }
}
