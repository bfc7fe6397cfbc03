//! A page of a list: the walk along its positions, reading index pieces,
//! filling gaps from the truth within a budget, and writing back a piece the
//! truth added to.

use std::collections::HashMap;

use crate::errors::ApiError;
use crate::model::{Cursor, ListName, PetStatus};
use crate::store::KvStore;

use super::ahead::Reader;
use super::backend::Reads;
use super::keys::{
    counter_key, decode_counter, piece_key, piece_of, BATCHED_BUDGET, FALLBACK_BUDGET, PIECE_LEN,
};
use super::listed::Listed;
use super::piece::{Piece, Stored};
use super::record::Catalogue;
use super::sequences::{not_this_layout, survey_keys, Layout, Sequences, V3_MARK};

/// Pieces of the unfiltered list a status page of layout v3 reads (1,024
/// ids, fetched with the survey in one `get-many`): a status that holds a
/// tenth of the pets fills a page of 100 from them; a rarer one gets a
/// shorter page and a `next` link.
pub const FILTERED_PIECES: i64 = 32;

/// Pairs one `set-many` may write (DynamoDB's `BatchWriteItem` limit).
const BATCH_WRITES: usize = 25;

/// Where a list ends: the ids (or positions) handed out so far.
#[derive(Debug, Clone, Copy)]
pub(super) enum Frontier {
    /// Layout v2: one counter, every position up to it handed out.
    Counter(i64),
    /// Layout v3: the ids the sequences handed out.
    Sequences(Sequences),
}

impl Frontier {
    pub(super) fn issued(&self, position: i64) -> bool {
        match self {
            Frontier::Counter(last) => position <= *last,
            Frontier::Sequences(s) => s.issued(position),
        }
    }

    pub(super) fn end(&self) -> i64 {
        match self {
            Frontier::Counter(last) => *last,
            Frontier::Sequences(s) => s.last(),
        }
    }
}

/// One page of a list, where the walk goes on if more may follow, and what
/// the page did to the index (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub pets: Vec<Listed>,
    pub next: Option<Cursor>,
    pub notes: Vec<String>,
}

impl<S: KvStore> Catalogue<'_, S> {
    /// Up to `limit` pets of `list` from position `from` on, in list order
    /// (ascending id for `all`; for a status, the order pets entered its
    /// list, which in layout v3 is the unfiltered list's), each page sorted
    /// by id. In steps:
    ///
    /// 1. plan: the pieces the page may span;
    /// 2. read each piece (one `get`; [`Reads::Batched`]: the pieces the page
    ///    spans, in either layout, and the counters in one `get-many`, which
    ///    tells the layout: in v3 a status page reads the unfiltered list's
    ///    pieces and keeps that status's pets);
    /// 3. take its pets, filling gaps from the truth (`pet`, `slot`) within
    ///    the budget, stopping at the end of the list (batched: the truth of
    ///    all the gaps the page needs in one `get-many`, two on a status
    ///    list: slots, then pets);
    /// 4. repair: write back the pieces the truth added to (one `set`, or
    ///    one `set-many` for several);
    /// 5. decide the cursor.
    pub fn list(
        &self,
        list: ListName,
        from: i64,
        limit: usize,
        reads: Reads,
    ) -> Result<Page, ApiError> {
        let mut walk = Walk {
            reader: Reader::new(self.store, reads),
            list,
            filter: None,
            position: from,
            limit,
            pets: Vec::with_capacity(limit),
            budget: match reads {
                Reads::OneByOne => FALLBACK_BUDGET,
                Reads::Batched => BATCHED_BUDGET,
            },
            frontier: None,
            ended: false,
            more_held: false,
            plan_end: 0,
            ahead: HashMap::new(),
            repairs: Vec::new(),
            notes: Vec::new(),
        };
        walk.survey()?;
        let plan = walk.plan();
        walk.plan_end = plan.end * PIECE_LEN;
        for piece in plan {
            let stored = walk.read(piece)?;
            let missing = matches!(stored, Stored::Missing);
            let (held, added) = walk.take(piece, stored)?;
            walk.repair(piece, held, added, missing);
            if walk.stopped() {
                break;
            }
        }
        walk.write_repairs();
        walk.finish()
    }
}

/// One page's walk along a list.
pub(super) struct Walk<'s, S: KvStore> {
    pub(super) reader: Reader<'s, S>,
    /// The list whose pieces the walk reads.
    pub(super) list: ListName,
    /// Layout v3's status pages: the status whose pets the walk keeps.
    pub(super) filter: Option<PetStatus>,
    /// The next position to visit.
    pub(super) position: i64,
    pub(super) limit: usize,
    pub(super) pets: Vec<Listed>,
    /// Key-value calls left for this page's look-ups of the truth.
    pub(super) budget: usize,
    /// Where the list ends, read once if a gap needs it (batched: with the
    /// pieces).
    pub(super) frontier: Option<Frontier>,
    /// The walk passed the last position: nothing more to list.
    pub(super) ended: bool,
    /// The last piece read holds positions past the walk's: more follow.
    pub(super) more_held: bool,
    /// The last position of the pieces planned.
    pub(super) plan_end: i64,
    /// Pieces fetched ahead (batched reads), decoded, by number.
    pub(super) ahead: HashMap<i64, Stored>,
    /// Pieces to write back: key, text, whether it was missing, entries added.
    pub(super) repairs: Vec<(String, Vec<u8>, bool, usize)>,
    pub(super) notes: Vec<String>,
}

impl<S: KvStore> Walk<'_, S> {
    /// Step 1: a page spans at most this many pieces; holes (creates that
    /// failed before their commit) may end it early, with a `next` cursor.
    fn plan(&self) -> std::ops::Range<i64> {
        let first = piece_of(self.position);
        match self.filter {
            None => first..first + self.limit as i64 / PIECE_LEN + 2,
            Some(_) => first..first + FILTERED_PIECES,
        }
    }

    fn stopped(&self) -> bool {
        self.ended || self.pets.len() >= self.limit || self.budget == 0
    }

    /// Batched reads: in one `get-many`, the counters that tell the layout
    /// and where the list ends, and the pieces the page spans if it meets
    /// no hole, in either layout (pieces further on, which only holes make
    /// a page reach, are read when reached). Layout v3 turns a status page
    /// into a walk of the unfiltered list that keeps that status's pets.
    fn survey(&mut self) -> Result<(), ApiError> {
        if !self.reader.batched() {
            return Ok(());
        }
        let first = piece_of(self.position);
        let last = piece_of(self.position + self.limit.max(1) as i64 - 1);
        let mut keys = survey_keys();
        keys.extend((first..=last).map(|k| piece_key(self.list, k)));
        if let ListName::Status(_) = self.list {
            keys.push(counter_key(self.list));
            keys.extend((first..first + FILTERED_PIECES).map(|k| piece_key(ListName::All, k)));
        }
        self.reader.fetch(keys)?;
        let reader = &self.reader;
        if let Layout::Sequences(sequences) = Layout::of(|key| reader.peek(key))? {
            self.frontier = Some(Frontier::Sequences(sequences));
            if let ListName::Status(status) = self.list {
                self.filter = Some(status);
                self.list = ListName::All;
            }
        }
        for piece in self.plan() {
            if self.reader.holds(&piece_key(self.list, piece)) {
                let stored = self.read_stored(piece)?;
                self.ahead.insert(piece, stored);
            }
        }
        Ok(())
    }

    /// Whether the walk keeps `pet` (layout v3's status pages keep their
    /// status's pets).
    pub(super) fn wants(&self, pet: &Listed) -> bool {
        self.filter.is_none_or(|status| pet.has_status(status))
    }

    /// Step 2.
    fn read(&mut self, piece: i64) -> Result<Stored, ApiError> {
        match self.ahead.remove(&piece) {
            Some(stored) => Ok(stored),
            None => self.read_stored(piece),
        }
    }

    fn read_stored(&mut self, piece: i64) -> Result<Stored, ApiError> {
        let key = piece_key(self.list, piece);
        Ok(match self.reader.get(&key)? {
            None => Stored::Missing,
            Some(bytes) => match Piece::decode(bytes) {
                Ok(p) => Stored::Found(p),
                Err(e) => Stored::Unreadable(e),
            },
        })
    }

    /// Step 3: the piece's positions from the walk's on. Returns what the
    /// piece held and what the truth added.
    fn take(
        &mut self,
        piece: i64,
        stored: Stored,
    ) -> Result<(Piece, Vec<(i64, Listed)>), ApiError> {
        let held = match stored {
            Stored::Found(p) => p,
            Stored::Missing => Piece::default(),
            Stored::Unreadable(e) => {
                let key = piece_key(self.list, piece);
                self.notes
                    .push(format!("index piece {key} unreadable ({e}): rebuilt"));
                Piece::default()
            }
        };
        let mut added = Vec::new();
        let end = (piece + 1) * PIECE_LEN;
        // The common case: the piece holds every position the page wants
        // from it. Its pets go into the page; nothing to repair.
        let wanted = (self.limit - self.pets.len()) as i64;
        let last_wanted = end.min(self.position + wanted - 1);
        let run = held.range(self.position, last_wanted);
        if self.filter.is_none()
            && wanted > 0
            && run.len() as i64 == last_wanted - self.position + 1
        {
            self.pets.extend(run.iter().map(|(_, pet)| pet.clone()));
            self.position = last_wanted + 1;
            self.more_held = held.holds_after(last_wanted);
            return Ok((Piece::default(), added));
        }
        while self.position <= end && !self.stopped() {
            let position = self.position;
            if let Some(pet) = held.get(position) {
                if self.wants(pet) {
                    self.pets.push(pet.clone());
                }
            } else {
                let frontier = self.frontier()?;
                if position > frontier.end() {
                    self.ended = true;
                    break;
                }
                // Not handed out yet (layout v3: its sequence is behind):
                // neither a pet nor a hole.
                if frontier.issued(position) {
                    self.fetch_truth(position, &held)?;
                    if let Some(pet) = self.committed_at(position)? {
                        added.push((position, pet.clone()));
                        if self.wants(&pet) {
                            self.pets.push(pet);
                        }
                    }
                }
            }
            self.position += 1;
        }
        self.more_held = match self.filter {
            None => held.holds_after(self.position - 1),
            Some(_) => self.may_follow(&held, self.position, end)?,
        };
        Ok((held, added))
    }

    /// Layout v3's status pages: whether a pet of the status may sit at
    /// `from..=to` of the piece `held` (it holds one, or a position there
    /// was handed out and is not held yet).
    fn may_follow(&mut self, held: &Piece, from: i64, to: i64) -> Result<bool, ApiError> {
        let frontier = self.frontier()?;
        Ok((from..=to.min(frontier.end())).any(|p| match held.get(p) {
            Some(pet) => self.wants(pet),
            None => frontier.issued(p),
        }))
    }

    /// Step 4: what the truth added goes back into the piece, written with
    /// the others at the end of the page (best effort: a failed write only
    /// leaves the work to the next reader).
    fn repair(&mut self, piece: i64, mut held: Piece, added: Vec<(i64, Listed)>, missing: bool) {
        if added.is_empty() {
            return;
        }
        let count = added.len();
        held.add(added);
        let key = piece_key(self.list, piece);
        self.repairs.push((key, held.encode(), missing, count));
    }

    /// The pieces repaired, in one `set`, or one `set-many` for several. A
    /// piece that only lagged (pets created since it was written) is
    /// updated silently: that is how the index grows. A missing one is
    /// logged (an unreadable one was, when read), and so is a failed write.
    fn write_repairs(&mut self) {
        let repairs = std::mem::take(&mut self.repairs);
        // At most 25 pieces a `set-many` (DynamoDB's BatchWriteItem limit).
        let written = match repairs.as_slice() {
            [] => return,
            [(key, text, _, _)] => self.reader.store().set(key, text),
            many => many.chunks(BATCH_WRITES).try_for_each(|chunk| {
                let pairs: Vec<(String, Vec<u8>)> = chunk
                    .iter()
                    .map(|(key, text, _, _)| (key.clone(), text.clone()))
                    .collect();
                self.reader.store().set_many(&pairs)
            }),
        };
        for (key, _, missing, count) in repairs {
            match &written {
                Ok(()) if missing => self.notes.push(format!(
                    "index piece {key} missing: rebuilt with {count} entries"
                )),
                Ok(()) => {}
                Err(e) => self
                    .notes
                    .push(format!("index piece {key}: repair not written ({e})")),
            }
        }
    }

    /// Step 5: more follow if the piece holds them, or if the list's counter
    /// says positions remain (read only when the piece cannot tell). A
    /// status page of layout v3 looks at the pieces it fetched: more follow
    /// if they hold a pet of its status, or positions they lack.
    fn finish(mut self) -> Result<Page, ApiError> {
        let more = !self.ended
            && (self.more_held
                || match self.filter {
                    None => self.position <= self.frontier()?.end(),
                    Some(_) => self.more_fetched()?,
                });
        self.pets.sort_by_key(|p| p.id);
        Ok(Page {
            pets: self.pets,
            next: more.then_some(Cursor {
                position: self.position,
            }),
            notes: self.notes,
        })
    }

    /// The pieces after the one the walk stopped in (`more_held` told for
    /// that one).
    fn more_fetched(&mut self) -> Result<bool, ApiError> {
        let end = self.frontier()?.end();
        let mut piece = piece_of(self.position);
        if (self.position - 1) % PIECE_LEN != 0 {
            piece += 1;
        }
        while piece * PIECE_LEN < end {
            let from = (piece * PIECE_LEN + 1).max(self.position);
            let to = (piece + 1) * PIECE_LEN;
            match self.ahead.remove(&piece) {
                Some(Stored::Found(held)) => {
                    if self.may_follow(&held, from, to)? {
                        return Ok(true);
                    }
                }
                // Not fetched, or not usable: a pet may be there.
                _ => return Ok(true),
            }
            piece += 1;
        }
        Ok(false)
    }

    /// Where the list ends: fetched with the pieces (batched reads), or the
    /// list's counter, with one plain `get`.
    pub(super) fn frontier(&mut self) -> Result<Frontier, ApiError> {
        if let Some(frontier) = self.frontier {
            return Ok(frontier);
        }
        let key = counter_key(self.list);
        let last = match self.reader.get(&key)? {
            None => 0,
            Some(bytes) => decode_counter(&bytes).ok_or_else(|| {
                ApiError::Internal(format!("stored counter '{key}' is unreadable"))
            })?,
        };
        // A store of layout v3 read by an instance that reads only v2 (not
        // declared `aws_dynamo`): its `ctr:id` holds the mark, and it has
        // no status counter, so an empty status list asks `ctr:id` too.
        let marked = match self.list {
            _ if last >= V3_MARK => true,
            ListName::Status(_) if last == 0 => self
                .reader
                .get(&counter_key(ListName::All))?
                .and_then(|bytes| decode_counter(&bytes))
                .is_some_and(|id| id >= V3_MARK),
            _ => false,
        };
        if marked {
            return Err(not_this_layout());
        }
        let frontier = Frontier::Counter(last);
        self.frontier = Some(frontier);
        Ok(frontier)
    }
}
