//! A lanes page: the lanes merged in id order, entries chosen while every
//! lane's next id is known, what the page lacks read in batches.

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

use super::head::Heads;
use super::pieces::Pieces;

use crate::catalogue::keys::{entry_key, pet_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::Piece;
use crate::catalogue::reader::{Reader, BATCH_KEYS};
use crate::catalogue::record::PetRecord;

/// What a page of the lanes found: its pets in id order, how far it went
/// in each lane, whether entries remain, what it writes back.
#[derive(Debug, Default)]
pub struct Part {
    pub pets: Vec<Listed>,
    pub lanes: Vec<u64>,
    pub more: bool,
    pub writes: Vec<(String, Vec<u8>)>,
    pub notes: Vec<String>,
}

/// Up to `limit` pets of `list` after `from` (per lane, what was listed):
/// entries chosen while every lane's next id is known, what the page lacks
/// read in batches, until the page is full or the lanes end (each batch
/// learns an entry at least).
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    lanes: &Heads,
    list: ListName,
    from: Vec<u64>,
    limit: usize,
) -> Result<Part, ApiError> {
    let end: Vec<u64> = lanes
        .all()
        .iter()
        .map(|h| list.status().map_or(h.round(), |s| h.count(s)))
        .collect();
    let next = from.iter().map(|n| n + 1).collect();
    let (known, chosen, pieces) = (BTreeMap::new(), Vec::new(), Pieces::default());
    let mut merge = Merge {
        reader,
        lanes,
        list,
        limit,
        next,
        end,
        known,
        chosen,
        pieces,
    };
    for (lane, head) in lanes.all().iter().enumerate() {
        // The head's pet: its lane's last entry (of its status's).
        if let Some(last) = head
            .last()
            .filter(|last| list.status().is_none_or(|s| s == last.status()))
        {
            let pet = Listed::from_json(last.json().to_vec());
            let pet =
                pet.ok_or_else(|| ApiError::Internal(format!("lane {lane}'s head holds no pet")))?;
            merge.known.insert((lane, merge.end[lane]), pet);
        }
        // The pieces the first `get-many` fetched.
        let mut index = merge.next[lane];
        while index <= merge.end[lane] {
            let key = merge.piece(lane, index);
            if !merge.pieces.has(&key) && !merge.take_piece(lane, &key) {
                break;
            }
            index = lanes.geometry().after_piece(list, lane, index);
        }
    }
    loop {
        let blocked = merge.choose();
        let (keys, asked) = merge.wanted(blocked);
        if keys.is_empty() {
            return Ok(merge.finish());
        }
        let learned = merge.known.len();
        merge.reader.fetch(keys)?;
        merge.take_fetched(asked)?;
        if merge.known.len() == learned {
            let list = list.as_str();
            return Err(ApiError::Internal(format!(
                "the lanes of {list} lack entries their heads count"
            )));
        }
    }
}

struct Merge<'m, 's, S: KvStore> {
    reader: &'m mut Reader<'s, S>,
    lanes: &'m Heads,
    list: ListName,
    limit: usize,
    /// Per lane: the next entry to consider, and the last.
    next: Vec<u64>,
    end: Vec<u64>,
    /// Entries whose pet is known, by lane and index.
    known: BTreeMap<(usize, u64), Listed>,
    /// Entries chosen for the page, in id order: lane, index.
    chosen: Vec<(usize, u64)>,
    pieces: Pieces,
}

impl<S: KvStore> Merge<'_, '_, S> {
    /// The id of entry `index` of `lane`, if known without a read.
    fn id_of(&self, lane: usize, index: u64) -> Option<i64> {
        match self.list {
            ListName::All => Some(self.lanes.geometry().id(lane, index)),
            ListName::Status(_) => self.known.get(&(lane, index)).map(|pet| pet.id),
        }
    }

    /// Chooses the next entries in id order while every lane's next id is
    /// known, up to the page's limit or the lanes' ends; whether a lane's
    /// next id, unknown, blocked the choice.
    fn choose(&mut self) -> bool {
        while self.chosen.len() < self.limit {
            let mut best: Option<(i64, usize)> = None;
            for lane in (0..self.end.len()).filter(|l| self.next[*l] <= self.end[*l]) {
                match self.id_of(lane, self.next[lane]) {
                    Some(id) if best.is_none_or(|(b, _)| id < b) => best = Some((id, lane)),
                    Some(_) => {}
                    None => return true,
                }
            }
            let Some((_, lane)) = best else {
                return false;
            };
            self.chosen.push((lane, self.next[lane]));
            self.next[lane] += 1;
        }
        false
    }

    /// Whether `lane` has entries left whose next one is not known.
    fn blocks(&self, lane: usize) -> bool {
        self.next[lane] <= self.end[lane] && !self.known.contains_key(&(lane, self.next[lane]))
    }

    /// The keys that let the page go on, and their entries: the pets of
    /// chosen entries not known yet and, if a lane blocks the choice, its
    /// next entries; each with its piece, if not read yet.
    fn wanted(&self, blocked: bool) -> (Vec<String>, Vec<(usize, u64)>) {
        let mut asked = self.chosen.clone();
        if blocked {
            // The lanes whose next entry is unknown share what the page
            // still lacks: a status held by one lane gets one batch.
            let blocking: Vec<usize> = (0..self.end.len())
                .filter(|lane| self.blocks(*lane))
                .collect();
            let per_lane = ((self.limit - self.chosen.len()) / blocking.len().max(1) + 2) as u64;
            for lane in blocking {
                let last = self.end[lane].min(self.next[lane] + per_lane - 1);
                asked.extend((self.next[lane]..=last).map(|index| (lane, index)));
            }
        }
        asked.retain(|entry| !self.known.contains_key(entry));
        let mut keys: Vec<String> = Vec::new();
        for (lane, index) in &asked {
            let piece = self.piece(*lane, *index);
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
        (keys, asked)
    }

    /// Where entry `index` of `lane` was stored: `pet:{id}`, a status entry.
    fn truth_key(&self, lane: usize, index: u64) -> String {
        match self.list.status() {
            None => pet_key(self.lanes.geometry().id(lane, index)),
            Some(status) => entry_key(status, lane, index),
        }
    }

    fn piece(&self, lane: usize, index: u64) -> String {
        self.lanes.geometry().piece(self.list, lane, index)
    }

    /// Takes the piece at `key` of `lane`, if it was fetched.
    fn take_piece(&mut self, lane: usize, key: &str) -> bool {
        if !self.reader.holds(key) {
            return false;
        }
        let (g, read) = (*self.lanes.geometry(), Piece::read(self.reader.peek(key)));
        for (position, pet) in self.pieces.absorb(key, read).to_vec() {
            let place = match self.list {
                ListName::All if position >= g.base() => g.place(position),
                ListName::All => continue,
                ListName::Status(_) => (lane, position as u64),
            };
            if place.1 >= 1 && place.1 <= self.end[place.0] {
                self.known.entry(place).or_insert(pet);
            }
        }
        true
    }

    /// What the last batch fetched for `asked`: pieces, then stored pets
    /// (below their lane's head, so they must be there).
    fn take_fetched(&mut self, asked: Vec<(usize, u64)>) -> Result<(), ApiError> {
        for (lane, index) in asked {
            let piece = self.piece(lane, index);
            if !self.pieces.has(&piece) {
                self.take_piece(lane, &piece);
            }
            let truth = self.truth_key(lane, index);
            if self.known.contains_key(&(lane, index)) || !self.reader.holds(&truth) {
                continue;
            }
            let value = self.reader.peek(&truth).map(<[u8]>::to_vec);
            let json = match self.list.status() {
                None => match PetRecord::of(&truth, value)? {
                    PetRecord::Committed { json, .. } => Some(json),
                    _ => None,
                },
                Some(_) => value,
            };
            let pet = json.and_then(Listed::from_json);
            let below =
                || ApiError::Internal(format!("{truth} is below its lane's head and not stored"));
            self.known.insert((lane, index), pet.ok_or_else(below)?);
        }
        Ok(())
    }

    /// The page, and what it learned written into the pieces it read.
    fn finish(mut self) -> Part {
        let lanes = self.next.iter().map(|n| n - 1).collect();
        let mut part = Part {
            lanes,
            ..Part::default()
        };
        part.pets = self
            .chosen
            .iter()
            .map(|entry| self.known[entry].clone())
            .collect();
        part.more = part.lanes.iter().zip(&self.end).any(|(at, end)| at < end);
        for ((lane, index), pet) in &self.known {
            let position = if self.list == ListName::All {
                pet.id
            } else {
                *index as i64
            };
            let piece = self.lanes.geometry().piece(self.list, *lane, *index);
            self.pieces.learn(&piece, position, pet);
        }
        part.writes = self.pieces.repairs();
        part.notes = std::mem::take(&mut self.pieces.notes);
        part
    }
}
