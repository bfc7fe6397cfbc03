//! A lanes page: the lanes merged in id order, entries chosen while every
//! lane's next id is known, what the page lacks read in batches.

use std::collections::BTreeMap;

use super::geometry::Geometry;
use super::head::Heads;
use super::pieces::Pieces;
use crate::catalogue::created::Result;
use crate::catalogue::keys::{entry_key, pet_key};
use crate::catalogue::listed::Listed;
use crate::catalogue::piece::{write_back, Piece};
use crate::catalogue::reader::{Reader, BATCH_KEYS};
use crate::catalogue::record::PetRecord;
use crate::errors::ApiError;
use crate::model::ListName;
use crate::store::KvStore;

/// A page of the lanes: its pets, how far it went in each lane (as many as
/// it lists of each), whether entries remain, what it writes back.
#[derive(Debug, Default)]
pub struct Part {
    pub(super) pets: Vec<Listed>,
    pub(super) lanes: Vec<u64>,
    pub(super) more: bool,
    pub(super) writes: Vec<(String, Vec<u8>)>,
    notes: Vec<String>,
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

    /// Gives back its pets past `limit`: each lane's count follows.
    pub(super) fn give_back(&mut self, limit: usize, g: &Geometry) {
        for pet in self.pets.split_off(limit.min(self.pets.len())) {
            self.lanes[g.place(pet.id).0] -= 1;
            self.more = true;
        }
    }

    /// Its writes made (a failure noted): its pets, how far it went in
    /// each lane, whether entries remain, its notes.
    pub fn written(mut self, store: &impl KvStore) -> (Vec<Listed>, Vec<u64>, bool, Vec<String>) {
        self.notes.extend(write_back(store, &self.writes, false));
        (self.pets, self.lanes, self.more, self.notes)
    }
}

/// Up to `limit` pets after `from`: chosen while every lane's next id is
/// known, what is lacking read in batches (each learns one at least).
pub fn page<S: KvStore>(
    reader: &mut Reader<'_, S>,
    lanes: &Heads,
    list: ListName,
    from: Vec<u64>,
    limit: usize,
) -> Result<Part> {
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
        if let Some(last) = head
            .last()
            .filter(|last| list.status().is_none_or(|s| s == last.status()))
        {
            let pet = Listed::from_json(last.json().to_vec());
            let pet =
                pet.ok_or_else(|| ApiError::Internal(format!("lane {lane}'s head holds no pet")))?;
            merge.known.insert((lane, merge.end[lane]), pet);
        }
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
    known: BTreeMap<(usize, u64), Listed>,
    chosen: Vec<(usize, u64)>,
    pieces: Pieces,
}

impl<S: KvStore> Merge<'_, '_, S> {
    fn id_of(&self, lane: usize, index: u64) -> Option<i64> {
        match self.list {
            ListName::All => Some(self.lanes.geometry().id(lane, index)),
            ListName::Status(_) => self.known.get(&(lane, index)).map(|pet| pet.id),
        }
    }

    /// Chooses entries in id order while every lane's next id is known;
    /// whether one unknown blocked the choice.
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

    /// The keys that let the page go on: the chosen entries' pets, a
    /// blocking lane's next ones, their pieces; and those entries.
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

    fn truth_key(&self, lane: usize, index: u64) -> String {
        match self.list.status() {
            None => pet_key(self.lanes.geometry().id(lane, index)),
            Some(status) => entry_key(status, lane, index),
        }
    }

    fn piece(&self, lane: usize, index: u64) -> String {
        self.lanes.geometry().piece(self.list, lane, index)
    }

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

    /// What the last batch fetched: pieces, then pets below their heads.
    fn take_fetched(&mut self, asked: Vec<(usize, u64)>) -> Result<()> {
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

    fn finish(mut self) -> Part {
        let lanes: Vec<u64> = self.next.iter().map(|n| n - 1).collect();
        let more = lanes.iter().zip(&self.end).any(|(at, end)| at < end);
        let pets = self.chosen.iter().map(|entry| self.known[entry].clone());
        let mut part = Part::new(pets.collect(), lanes, more);
        for ((lane, index), pet) in &self.known {
            let position = match self.list {
                ListName::All => pet.id,
                ListName::Status(_) => *index as i64,
            };
            let piece = self.lanes.geometry().piece(self.list, *lane, *index);
            self.pieces.learn(&piece, position, pet);
        }
        part.writes = self.pieces.repairs();
        part.notes = std::mem::take(&mut self.pieces.notes);
        part
    }
}
