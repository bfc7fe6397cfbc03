//! The lanes' geometry, the one place a width is written: lanes (32, or 16 on
//! a store 1.3.0 claimed), base, id ↔ lane and round, blocks, the mark in `ctr:id`.

/// The lanes a store claimed or moved by this release has.
const NEW_WIDTH: usize = 32;

/// The mark's first words, by the store's lanes: `petstore-lanes 1` (16,
/// written by 1.3.0) and `petstore-lanes 2` (32). 1.3.0 reads no mark but
/// its own, so it writes nothing on a store of 32 lanes.
const MARKS: [(&str, usize); 2] = [("petstore-lanes 1", 16), ("petstore-lanes 2", 32)];

/// Ids a block of the unfiltered list's pieces holds: every lane's rounds
/// of one (32 lanes) or two (16).
const BLOCK_IDS: i64 = 32;

/// A store of the lanes layout: its lanes, its first lane id, and what the
/// counter handed out before a move. Round `n` of lane `k` is id `base +
/// width·(n − 1) + k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    width: usize,
    /// The first id of the lanes: 1, or one past a multiple of 32 above
    /// the ids the counter handed out before a move.
    base: i64,
    /// The last id the counter handed out before the move (0: none).
    legacy_last: i64,
    /// When the move ran (Unix ms; 0 for a store that began in lanes).
    moved_ms: u64,
}

impl Geometry {
    /// A store claimed new for lanes.
    pub fn new() -> Geometry {
        Geometry::after(0, 0)
    }

    /// A store moved from counters when its counter stood at `last`.
    pub fn after(last: i64, moved_ms: u64) -> Geometry {
        Geometry {
            width: NEW_WIDTH,
            base: (last + BLOCK_IDS - 1) / BLOCK_IDS * BLOCK_IDS + 1,
            legacy_last: last,
            moved_ms,
        }
    }

    /// A store of `width` lanes whose mark is not read yet (what a page
    /// reads first), or of the lanes a new store gets.
    pub fn assumed(width: Option<usize>) -> Geometry {
        Geometry {
            width: width.unwrap_or(NEW_WIDTH),
            ..Geometry::new()
        }
    }

    /// What `ctr:id` says, if it is a mark: `<header> <base> <last> <moved ms>`.
    pub fn from_mark(bytes: &[u8]) -> Option<Geometry> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (rest, width) = MARKS
            .iter()
            .find_map(|(header, width)| Some((text.strip_prefix(header)?, *width)))?;
        let mut words = rest.split(' ').skip(1);
        let geometry = Geometry {
            width,
            base: words.next()?.parse().ok()?,
            legacy_last: words.next()?.parse().ok()?,
            moved_ms: words.next()?.parse().ok()?,
        };
        let sound = geometry.base % BLOCK_IDS == 1
            && (0..geometry.base).contains(&geometry.legacy_last)
            && words.next().is_none();
        sound.then_some(geometry)
    }

    /// The mark: text that no `increment` parses, so that a release that
    /// knows only counters fails its creates instead of writing ids its
    /// lists would never show.
    pub fn mark(&self) -> Vec<u8> {
        let header = MARKS
            .iter()
            .find(|(_, width)| *width == self.width)
            .map_or(MARKS[1].0, |(header, _)| header);
        format!(
            "{header} {} {} {}",
            self.base, self.legacy_last, self.moved_ms
        )
        .into_bytes()
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn base(&self) -> i64 {
        self.base
    }

    /// The last id handed out by the counter before the move (0: none).
    pub fn legacy_last(&self) -> i64 {
        self.legacy_last
    }

    /// When the move ran (0: the store began in lanes).
    pub fn moved_ms(&self) -> u64 {
        self.moved_ms
    }

    /// Whether the store was moved from counters (it began in lanes else).
    pub fn moved(&self) -> bool {
        self.moved_ms > 0 || self.legacy_last > 0
    }

    /// Whether a cursor's count of lanes is one a store may have.
    pub fn is_width(lanes: usize) -> bool {
        MARKS.iter().any(|(_, width)| *width == lanes)
    }

    /// The id of round `round` (from 1) of `lane`.
    pub fn id(&self, lane: usize, round: u64) -> i64 {
        self.base + self.width as i64 * (round as i64 - 1) + lane as i64
    }

    /// The lane and round of an id of the lanes (at least the base).
    pub fn place(&self, id: i64) -> (usize, u64) {
        let offset = id - self.base;
        let width = self.width as i64;
        ((offset % width) as usize, (offset / width) as u64 + 1)
    }

    /// The lanes id `id` may be in, on a store of each width, whatever its
    /// base (always one past a multiple of 32): where getPet looks for a
    /// pet its lane has not stored yet, before the mark is read.
    pub fn lanes_of(id: i64) -> Vec<usize> {
        let mut lanes: Vec<usize> = MARKS
            .iter()
            .map(|(_, width)| ((id - 1) % *width as i64) as usize)
            .collect();
        lanes.dedup();
        lanes
    }

    /// The rounds of each lane whose ids are below `position` (a counters
    /// cursor: every id below it was listed).
    pub fn rounds_below(&self, position: Option<i64>) -> Vec<u64> {
        let mut rounds = vec![0; self.width];
        if let Some(position) = position.filter(|p| *p > self.base) {
            for (lane, round) in rounds.iter_mut().enumerate() {
                let below = position - 1 - self.base - lane as i64;
                if below >= 0 {
                    *round = (below / self.width as i64) as u64 + 1;
                }
            }
        }
        rounds
    }

    /// Rounds of every lane one block of the unfiltered list holds.
    pub fn block_rounds(&self) -> u64 {
        (BLOCK_IDS as u64 / self.width as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_text_no_counter_parses_and_lanes_begin_on_a_block() {
        let moved = Geometry::after(1000, 7);
        assert_eq!((moved.base(), moved.width()), (1025, 32));
        assert_eq!(moved.mark(), b"petstore-lanes 2 1025 1000 7");
        assert_eq!(Geometry::from_mark(&moved.mark()), Some(moved));
        let narrow = Geometry::from_mark(b"petstore-lanes 1 33 20 5").unwrap();
        assert_eq!((narrow.base(), narrow.width()), (33, 16), "1.3.0's mark");
        assert_eq!(narrow.mark(), b"petstore-lanes 1 33 20 5");
        assert_eq!(Geometry::new().base(), 1);
        assert_eq!(Geometry::after(32, 0).base(), 33);
        assert_eq!(Geometry::after(33, 0).base(), 65);
        assert!(std::str::from_utf8(&moved.mark())
            .unwrap()
            .parse::<i64>()
            .is_err());
        for bad in [
            "petstore-lanes 1 1024 0 0",
            "petstore-lanes 1 33 40 0",
            "petstore-lanes 3 1 0 0",
            "petstore-lanes 2 1 0 0 32",
            "x",
        ] {
            assert_eq!(Geometry::from_mark(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn ids_rounds_and_lanes_map_both_ways() {
        let g = Geometry::after(40, 1);
        assert_eq!(g.base(), 65);
        assert_eq!((g.id(0, 1), g.id(31, 1), g.id(0, 2)), (65, 96, 97));
        assert_eq!(
            (g.place(65), g.place(96), g.place(97)),
            ((0, 1), (31, 1), (0, 2))
        );
        assert_eq!(g.rounds_below(Some(98))[..3], [2, 1, 1]);
        assert_eq!(Geometry::lanes_of(1), vec![0]);
        assert_eq!(Geometry::lanes_of(18), vec![1, 17]);
        assert_eq!(
            Geometry::from_mark(b"petstore-lanes 1 1 0 0")
                .unwrap()
                .block_rounds(),
            2
        );
    }
}
