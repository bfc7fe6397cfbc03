//! The index pieces a counters page writes back, in one `set` or `set-many`s
//! (best effort: a failed write leaves the work to the next reader).

use crate::store::KvStore;

use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::BATCH_WRITES;

/// Pieces to write back: key, text, whether it was missing, entries added.
#[derive(Default)]
pub(super) struct Repairs(Vec<(String, Vec<u8>, bool, usize)>);

impl Repairs {
    /// What the truth `added` goes back into the piece `held` at `key`.
    pub(super) fn add(
        &mut self,
        key: String,
        mut held: Piece,
        added: Vec<(i64, Listed)>,
        missing: bool,
    ) {
        if added.is_empty() {
            return;
        }
        let count = added.len();
        held.add(added);
        self.0.push((key, held.encode(), missing, count));
    }

    /// Writes the pieces repaired. A piece that only lagged (pets created
    /// since it was written) is updated silently: that is how the index
    /// grows. A missing one is noted (an unreadable one was, when read),
    /// and so is a failed write.
    pub(super) fn write<S: KvStore>(&mut self, store: &S, notes: &mut Vec<String>) {
        let repairs = std::mem::take(&mut self.0);
        let written = match repairs.as_slice() {
            [] => return,
            [(key, text, _, _)] => store.set(key, text),
            many => many.chunks(BATCH_WRITES).try_for_each(|chunk| {
                let pairs: Vec<(String, Vec<u8>)> = chunk
                    .iter()
                    .map(|(key, text, _, _)| (key.clone(), text.clone()))
                    .collect();
                store.set_many(&pairs)
            }),
        };
        for (key, _, missing, count) in repairs {
            match &written {
                Ok(()) if missing => notes.push(format!(
                    "index piece {key} missing: rebuilt with {count} entries"
                )),
                Ok(()) => {}
                Err(e) => notes.push(format!("index piece {key}: repair not written ({e})")),
            }
        }
    }
}
