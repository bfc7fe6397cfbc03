//! A lanes page's merge: the lanes merged in id order from what the page's
//! batches found (the heads, unless within the rounds stored; the pieces
//! and pets below them), entries chosen while every lane's next id is
//! known, and what it lacks next; the index pieces it read; and the part it
//! makes ([`Part`]: its pets, how far it went in each lane, whether entries
//! remain, what it writes back), settled in `settle.rs`. It reads nothing:
//! `lanes::walk` does. docs/key-value-layout.md, "The lanes layout".

use std::collections::BTreeMap;

use super::{geometry::Geometry, head::Claimed, head::Head, head::Heads};
use crate::catalogue::{created::Result, keys::entry_key, keys::pet_key, listed::Listed};
use crate::catalogue::{piece::write_back, piece::Piece, reader::Fetched, reader::BATCH_KEYS};
use crate::{catalogue::record::PetRecord, errors::ApiError, model::ListName, store::KvStore};

/// The lanes merged in id order, from what a page's batches found: it says
/// what it lacks ([`Merge::lacking`]), takes what the next batch found,
/// and chooses entries while every lane's next id is known.
pub struct Merge {
    g: Geometry,
    list: ListName,
    limit: usize,
    from: Vec<u64>,
    /// The rounds every lane had stored, while the page lies in them: no
    /// head is read. Else `None`, and the rounds the heads say, once read.
    stored: Option<u64>,
    rounds: u64,
    /// Per lane: the next entry to consider, and the last (none before the
    /// heads are known).
    next: Vec<u64>,
    end: Vec<u64>,
    known: BTreeMap<(usize, u64), Listed>,
    chosen: Vec<(usize, u64)>,
    pieces: Pieces,
    /// What its next batch reads, and the entries that batch is for.
    lacking: Vec<String>,
    asked: Vec<(usize, u64)>,
}

impl Merge {
    /// Up to `limit` pets of `list` (`of`) after `from`; first the heads
    /// (with the pieces it expects to need), unless the page lies in the
    /// rounds `stored`.
    pub fn new(g: Geometry, of: (ListName, usize), from: &[u64], stored: Option<u64>) -> Merge {
        let (list, limit) = of;
        Merge {
            lacking: stored.map_or_else(|| g.read_keys(list, from, limit), |_| Vec::new()),
            g,
            list,
            limit,
            from: from.to_vec(),
            stored,
            rounds: 0,
            next: Vec::new(),
            end: Vec::new(),
            known: BTreeMap::new(),
            chosen: Vec::new(),
            pieces: Pieces::default(),
            asked: Vec::new(),
        }
    }

    /// The keys its next batch reads.
    pub fn lacking(&mut self) -> Vec<String> {
        std::mem::take(&mut self.lacking)
    }

    /// Whether it begins with the heads (none within the rounds stored).
    pub fn reads_heads(&self) -> bool {
        self.end.is_empty() && self.stored.is_none()
    }

    /// Takes what the batches `found`, and the `heads` if it reads them
    /// ([`Merge::reads_heads`]); whether merged ([`Merge::part`]). Within
    /// the rounds stored, an entry absent there (or a page short) reads
    /// the heads.
    pub fn take(&mut self, found: &Fetched, heads: Option<Heads>) -> Result<bool> {
        match (self.merged(found, heads), self.stored) {
            (Ok(true), Some(_)) if self.chosen.len() < self.limit => {}
            (Err(ApiError::Internal(_)), Some(_)) => {}
            (merged, _) => return merged,
        }
        *self = Merge::new(self.g, (self.list, self.limit), &self.from, None);
        Ok(false)
    }

    /// Whether it lacks nothing more ([`Merge::lacking`]): the heads
    /// first, then the pieces and pets below them.
    fn merged(&mut self, found: &Fetched, heads: Option<Heads>) -> Result<bool> {
        if self.end.is_empty() {
            self.begin(found, heads)?;
        } else {
            let (learned, list) = (self.known.len(), self.list.as_str());
            self.take_fetched(found)?;
            if self.known.len() == learned {
                let lack = format!("the lanes of {list} lack entries their heads count");
                return Err(ApiError::Internal(lack));
            }
        }
        let blocked = self.choose();
        self.wanted(blocked, found);
        // Done once every entry chosen is known (`part` takes each): one a
        // batch before this merge fetched is taken on the next call.
        Ok(self.asked.is_empty())
    }

    /// The heads (past the rounds stored, if the page lies in them): where
    /// each lane ends, what its head holds; the pieces fetched of its next
    /// entries.
    fn begin(&mut self, found: &Fetched, heads: Option<Heads>) -> Result<()> {
        let (list, g) = (self.list, self.g);
        let heads = heads.unwrap_or_else(|| Heads::past(g, self.stored.unwrap_or(0)));
        self.rounds = self.stored.unwrap_or_else(|| heads.stored_rounds());
        // Its end, and its head's pet if of the list.
        let end = |h: &Head| list.status().map_or(h.round(), |s| h.count(s));
        let listed = |last: &&Claimed| list.status().is_none_or(|s| s == last.status());
        self.end = heads.all().iter().map(end).collect();
        self.next = self.from.iter().map(|n| n + 1).collect();
        for (lane, head) in heads.all().iter().enumerate() {
            if let Some(last) = head.last().filter(listed) {
                let none = || ApiError::Internal(format!("lane {lane}'s head holds no pet"));
                let pet = Listed::from_json(last.json().to_vec()).ok_or_else(none)?;
                self.known.insert((lane, self.end[lane]), pet);
            }
            let mut index = self.next[lane];
            while index <= self.end[lane] && self.take_piece(lane, index, found) {
                index = g.after_piece(list, lane, index);
            }
        }
        Ok(())
    }

    fn id_of(&self, lane: usize, index: u64) -> Option<i64> {
        match self.list {
            ListName::All => Some(self.g.id(lane, index)),
            ListName::Status(_) => self.known.get(&(lane, index)).map(Listed::id),
        }
    }

    /// Chooses entries in id order while every lane's next id is known;
    /// whether one unknown blocked the choice.
    fn choose(&mut self) -> bool {
        while self.chosen.len() < self.limit {
            let mut best: Option<(i64, usize)> = None;
            for lane in (0..self.end.len()).filter(|l| self.next[*l] <= self.end[*l]) {
                let Some(id) = self.id_of(lane, self.next[lane]) else {
                    return true;
                };
                // The least next id; on a tie the lane met first keeps it.
                best = best.filter(|(b, _)| *b <= id).or(Some((id, lane)));
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

    /// What lets the page go on: the chosen entries' pets, a blocking
    /// lane's next ones, their pieces; the keys of those not `found`.
    fn wanted(&mut self, blocked: bool, found: &Fetched) {
        let mut asked = self.chosen.clone();
        if blocked {
            // The lanes whose next entry is unknown share what the page
            // still lacks: a status held by one lane gets one batch.
            let blocking: Vec<usize> = (0..self.end.len()).filter(|l| self.blocks(*l)).collect();
            let per_lane = ((self.limit - self.chosen.len()) / blocking.len().max(1) + 2) as u64;
            for lane in blocking {
                let last = self.end[lane].min(self.next[lane] + per_lane - 1);
                asked.extend((self.next[lane]..=last).map(|index| (lane, index)));
            }
        }
        asked.retain(|entry| !self.known.contains_key(entry));
        let mut keys: Vec<String> = Vec::new();
        for (lane, index) in &asked {
            let piece = self.g.piece(self.list, *lane, *index);
            if !self.pieces.has(&piece) && !keys.contains(&piece) {
                keys.push(piece);
            }
            let truth = self.truth_key(*lane, *index);
            if !found.holds(&truth) {
                keys.push(truth);
            }
            if keys.len() >= BATCH_KEYS {
                break;
            }
        }
        keys.truncate(BATCH_KEYS);
        (self.lacking, self.asked) = (keys, asked);
    }

    fn truth_key(&self, lane: usize, index: u64) -> String {
        match self.list.status() {
            None => pet_key(self.g.id(lane, index)),
            Some(status) => entry_key(status, lane, index),
        }
    }

    /// Takes the piece of `lane`'s entry `index`, if fetched and not taken;
    /// whether it is taken.
    fn take_piece(&mut self, lane: usize, index: u64, found: &Fetched) -> bool {
        let (g, key) = (self.g, self.g.piece(self.list, lane, index));
        let had = self.pieces.has(&key);
        if had || !found.holds(&key) {
            return had;
        }
        for (position, pet) in self.pieces.absorb(&key, found.peek(&key)).to_vec() {
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
    fn take_fetched(&mut self, found: &Fetched) -> Result<()> {
        for (lane, index) in std::mem::take(&mut self.asked) {
            self.take_piece(lane, index, found);
            let truth = self.truth_key(lane, index);
            if self.known.contains_key(&(lane, index)) || !found.holds(&truth) {
                continue;
            }
            let value = found.peek(&truth).map(<[u8]>::to_vec);
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

    /// The lanes' part of the page merged, and the rounds every lane had
    /// stored.
    pub fn part(mut self) -> (Part, u64) {
        let lanes: Vec<u64> = self.next.iter().map(|n| n - 1).collect();
        let more = lanes.iter().zip(&self.end).any(|(at, end)| at < end);
        let pets = self.chosen.iter().map(|entry| self.known[entry].clone());
        let mut part = Part::new(pets.collect(), lanes, more);
        part.taken = self.chosen.iter().map(|(lane, _)| *lane).collect();
        for ((lane, index), pet) in &self.known {
            let position = self.list.status().map_or(pet.id(), |_| *index as i64);
            let piece = self.g.piece(self.list, *lane, *index);
            self.pieces.learn(&piece, position, pet);
        }
        part.writes = self.pieces.repairs();
        part.notes = std::mem::take(&mut self.pieces.notes);
        (part, self.rounds)
    }
}

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

pub type Entries = Vec<(i64, Listed)>;

/// The pieces a page read (and whether rebuilt), and what they lack; in
/// `Vec`s sorted by key (a `BTreeMap` more costs some 3 KB of module).
#[derive(Default)]
pub struct Pieces {
    pub(super) read: Vec<(String, (Piece, bool))>,
    pub(super) added: Vec<(String, Entries)>,
    pub notes: Vec<String>,
}

impl Pieces {
    pub fn has(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    pub(super) fn find(&self, key: &str) -> Result<usize, usize> {
        self.read.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The piece at `key`, as a batch found it (`value`): read once, kept.
    pub fn absorb(&mut self, key: &str, value: Option<&[u8]>) -> &[(i64, Listed)] {
        let read = Piece::read(value).unwrap_or_else(|e| {
            let note = format!("index piece {key} unreadable ({e}): rebuilt");
            self.notes.push(note);
            None
        });
        let read = read.map_or((Piece::default(), true), |piece| (piece, false));
        let at = self.find(key).unwrap_or_else(|at| {
            self.read.insert(at, (key.to_string(), read));
            at
        });
        self.read[at].1 .0.entries()
    }
}
