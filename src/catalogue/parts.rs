//! The parts a cursor names, each sound as made: where a counters walk
//! stands (`Counted`), how far a lanes walk went in each lane (`Laned`),
//! the edge build's place in its lists (`Placed`). `cursor.rs` reads and
//! writes them.

/// Positions a counters part carries at most.
pub const MAX_CARRIED: usize = 64;
/// Lanes a lanes part may name, and a store may have.
pub const MAX_LANES: usize = 64;

/// A counters walk's next position (at least 1), and those below it whose
/// create had not finished (sorted, distinct, at least 1, [`MAX_CARRIED`]
/// at most), since when (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    position: i64,
    carried: Vec<i64>,
    since_s: u64,
}

impl Counted {
    /// A walk from `position` (1: the list's start), carrying nothing.
    pub fn at(position: i64) -> Counted {
        Counted::new(position, Vec::new(), 0)
    }

    /// A walk at `position`, carrying `carried` since `since_s`: a walk's
    /// own, or one read and checked, sound as [`Counted`] says.
    pub fn new(position: i64, carried: Vec<i64>, since_s: u64) -> Counted {
        debug_assert!(position >= 1 && carried.len() <= MAX_CARRIED);
        debug_assert!(carried.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(carried.iter().all(|p| (1..position).contains(p)));
        Counted {
            position,
            carried,
            since_s,
        }
    }

    pub fn position(&self) -> i64 {
        self.position
    }

    pub fn carried(&self) -> &[i64] {
        &self.carried
    }

    pub fn since_s(&self) -> u64 {
        self.since_s
    }
}

/// How far a walk went in each lane (1 to [`MAX_LANES`] lanes), and its
/// word: the rounds every lane had stored (unfiltered list), or whether it
/// is exact (a status's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Laned {
    lanes: Vec<u64>,
    word: u64,
}

impl Laned {
    /// A walk's own (as many lanes as its store's), or one read and checked.
    pub fn new(lanes: Vec<u64>, word: u64) -> Laned {
        debug_assert!((1..=MAX_LANES).contains(&lanes.len()));
        Laned { lanes, word }
    }

    pub fn lanes(&self) -> &[u64] {
        &self.lanes
    }

    pub fn word(&self) -> u64 {
        self.word
    }
}

/// The edge build's: the creation time and id (at least 1) of a pet, the
/// last shown; or the list's start, `0 0` (the default), before every pet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placed {
    t_ms: u64,
    id: i64,
}

impl Placed {
    /// A pet's place: its id at least 1.
    pub fn new(t_ms: u64, id: i64) -> Option<Placed> {
        (id >= 1).then_some(Placed { t_ms, id })
    }

    pub fn t_ms(self) -> u64 {
        self.t_ms
    }

    pub fn id(self) -> i64 {
        self.id
    }
}
