//! A lanes page: the lanes merged in id order, choosing entries while every
//! lane's next id is known and reading what it lacks in batches.
//! docs/key-value-layout.md, "The lanes layout", "A page".

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use crate::catalogue::keys::{entry_key, pet_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::{Reader, BATCH_KEYS};

use super::heads::Heads;
use super::part::Part;
use super::pieces::{after_piece, lane_of_piece, piece_of, stored_pet, Pieces};

/// Up to `limit` pets of `list` after `from` (per lane of the store, what
/// was listed).
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    lanes: &Heads,
    list: ListName,
    from: Vec<u64>,
    limit: usize,
) -> Result<Part, ApiError> {
    let mut merge = Merge::new(reader, lanes, list, from, limit)?;
    merge.take_pieces_fetched();
    // Until the page is full or the lanes end: every batch learns an
    // entry at least, so the page ends.
    loop {
        merge.choose();
        let wanted = merge.wanted();
        if wanted.is_empty() {
            break;
        }
        let learned = merge.known.len();
        merge.reader.fetch(wanted)?;
        merge.take_fetched()?;
        if merge.known.len() == learned {
            return Err(ApiError::Internal(format!(
                "the lanes of {} lack entries their heads count",
                list.as_str()
            )));
        }
    }
    merge.finish()
}

struct Merge<'m, 's, S: KvStore> {
    reader: &'m mut Reader<'s, S>,
    lanes: &'m Heads,
    list: ListName,
    limit: usize,
    /// Per lane: the last entry, and the next to consider.
    end: Vec<u64>,
    next: Vec<u64>,
    from: Vec<u64>,
    /// Entries whose pet is known, by lane and index.
    known: BTreeMap<(usize, u64), Listed>,
    /// Entries chosen for the page, in id order: lane, index, id.
    chosen: Vec<(usize, u64, i64)>,
    /// Entries whose pets the last batch asked for.
    asked: Vec<(usize, u64)>,
    /// A lane's next id is unknown: nothing further can be chosen.
    blocked: bool,
    pieces: Pieces,
}

impl<'m, 's, S: KvStore> Merge<'m, 's, S> {
    fn new(
        reader: &'m mut Reader<'s, S>,
        lanes: &'m Heads,
        list: ListName,
        from: Vec<u64>,
        limit: usize,
    ) -> Result<Self, ApiError> {
        let width = lanes.width();
        let mut merge = Merge {
            reader,
            lanes,
            list,
            limit,
            end: vec![0; width],
            next: vec![0; width],
            from,
            known: BTreeMap::new(),
            chosen: Vec::new(),
            asked: Vec::new(),
            blocked: false,
            pieces: Pieces::default(),
        };
        for (lane, head) in lanes.all().iter().enumerate() {
            merge.end[lane] = match list.status() {
                None => head.round(),
                Some(status) => head.count(status),
            };
            merge.next[lane] = merge.from[lane] + 1;
            // The head's pet: the last entry of its lane (of its status's).
            if let Some(last) = head.last() {
                if list.status().is_none_or(|s| s == last.status()) {
                    let pet = Listed::from_json(last.json().to_vec()).ok_or_else(|| {
                        ApiError::Internal(format!("lane {lane}'s head holds no pet"))
                    })?;
                    merge.known.insert((lane, merge.end[lane]), pet);
                }
            }
        }
        Ok(merge)
    }

    /// The id of entry `index` of `lane`, if known without a read.
    fn id_of(&self, lane: usize, index: u64) -> Option<i64> {
        match self.list {
            ListName::All => Some(self.lanes.id(lane, index)),
            ListName::Status(_) => self.known.get(&(lane, index)).map(|pet| pet.id),
        }
    }

    /// Chooses the next entries in id order while every lane's next id is
    /// known, up to the page's limit or the lanes' ends.
    fn choose(&mut self) {
        self.blocked = false;
        while self.chosen.len() < self.limit {
            let mut best: Option<(i64, usize)> = None;
            for lane in 0..self.lanes.width() {
                if self.next[lane] > self.end[lane] {
                    continue;
                }
                match self.id_of(lane, self.next[lane]) {
                    Some(id) if best.is_none_or(|(b, _)| id < b) => best = Some((id, lane)),
                    Some(_) => {}
                    None => {
                        self.blocked = true;
                        return;
                    }
                }
            }
            let Some((id, lane)) = best else {
                return;
            };
            self.chosen.push((lane, self.next[lane], id));
            self.next[lane] += 1;
        }
    }

    /// The keys that would let the page go on: the pets of chosen entries
    /// not known yet, and, if a lane blocks the choice, its next entries;
    /// each with the piece it belongs to, if not read yet.
    fn wanted(&mut self) -> Vec<String> {
        let mut asked = Vec::new();
        for (lane, index, _) in &self.chosen {
            asked.push((*lane, *index));
        }
        if self.blocked {
            // The lanes whose next entry is unknown share what the page
            // still lacks: a status held by one lane gets one batch.
            let width = self.lanes.width();
            let blocking = (0..width).filter(|lane| self.blocks(*lane)).count();
            let per_lane = ((self.limit - self.chosen.len()) / blocking.max(1) + 2) as u64;
            for lane in 0..width {
                if self.blocks(lane) {
                    let last = self.end[lane].min(self.next[lane] + per_lane - 1);
                    asked.extend((self.next[lane]..=last).map(|index| (lane, index)));
                }
            }
        }
        asked.retain(|entry| !self.known.contains_key(entry));
        let mut keys: Vec<String> = Vec::new();
        for (lane, index) in &asked {
            let piece = self.piece_of(*lane, *index);
            if !self.pieces.has(&piece) && !keys.contains(&piece) {
                keys.push(piece);
            }
            let truth = self.truth_key(*lane, *index);
            if !self.reader.holds(&truth) {
                keys.push(truth);
            }
            if keys.len() >= BATCH_KEYS {
                break;
            }
        }
        keys.truncate(BATCH_KEYS);
        self.asked = asked;
        keys
    }

    /// Whether `lane` has entries left whose next one is not known.
    fn blocks(&self, lane: usize) -> bool {
        self.next[lane] <= self.end[lane] && !self.known.contains_key(&(lane, self.next[lane]))
    }

    /// Where entry `index` of `lane` was stored: `pet:{id}`, or its status entry.
    fn truth_key(&self, lane: usize, index: u64) -> String {
        match self.list.status() {
            None => pet_key(self.lanes.id(lane, index)),
            Some(status) => entry_key(status, lane, index),
        }
    }

    /// The key of the piece that holds entry `index` of `lane`.
    fn piece_of(&self, lane: usize, index: u64) -> String {
        piece_of(self.list, self.lanes.width(), lane, index)
    }

    /// The pieces the first `get-many` fetched (with the heads).
    fn take_pieces_fetched(&mut self) {
        for lane in 0..self.lanes.width() {
            let mut index = self.next[lane];
            while index <= self.end[lane] {
                let key = self.piece_of(lane, index);
                match (self.pieces.has(&key), self.reader.holds(&key)) {
                    (false, true) => self.take_piece(&key),
                    (false, false) => break,
                    (true, _) => {}
                }
                index = after_piece(self.list, self.lanes.width(), index);
            }
        }
    }

    fn take_piece(&mut self, key: &str) {
        let stored = Piece::stored(self.reader.peek(key).map(<[u8]>::to_vec));
        let entries: Vec<(i64, Listed)> = self.pieces.absorb(key, stored).to_vec();
        for (position, pet) in entries {
            let place = match self.list {
                ListName::All if position >= self.lanes.geometry().base() => {
                    self.lanes.geometry().place(position)
                }
                ListName::All => continue,
                ListName::Status(_) => (lane_of_piece(key), position as u64),
            };
            if place.1 >= 1 && place.1 <= self.end[place.0] {
                self.known.entry(place).or_insert(pet);
            }
        }
    }

    /// What the last batch fetched: pieces, then stored pets.
    fn take_fetched(&mut self) -> Result<(), ApiError> {
        for (lane, index) in std::mem::take(&mut self.asked) {
            let piece = self.piece_of(lane, index);
            if !self.pieces.has(&piece) && self.reader.holds(&piece) {
                self.take_piece(&piece);
            }
            let truth = self.truth_key(lane, index);
            if !self.known.contains_key(&(lane, index)) && self.reader.holds(&truth) {
                let pet = stored_pet(
                    self.list,
                    &truth,
                    self.reader.peek(&truth).map(<[u8]>::to_vec),
                )?;
                self.known.insert((lane, index), pet);
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Part, ApiError> {
        let mut part = Part {
            lanes: std::mem::take(&mut self.from),
            ..Part::default()
        };
        for (lane, index, _) in std::mem::take(&mut self.chosen) {
            let pet = self.known[&(lane, index)].clone();
            part.lanes[lane] = index;
            part.pets.push(pet);
        }
        part.more = part.lanes.iter().zip(&self.end).any(|(at, end)| at < end);
        // What the page learned goes back into the pieces it read.
        let learned: Vec<((usize, u64), Listed)> =
            self.known.iter().map(|(k, v)| (*k, v.clone())).collect();
        for ((lane, index), pet) in learned {
            let position = match self.list {
                ListName::All => pet.id,
                ListName::Status(_) => index as i64,
            };
            let piece = self.piece_of(lane, index);
            self.pieces.learn(&piece, position, &pet);
        }
        part.writes = self.pieces.repairs();
        part.notes = std::mem::take(&mut self.pieces.notes);
        Ok(part)
    }
}
