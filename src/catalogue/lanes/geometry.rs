//! A lanes store's geometry, as its mark says: how many lanes (any width),
//! the first id of the lanes, a move's; ids ↔ lanes and rounds, pieces.

use crate::catalogue::keys::{block_key, head_key, lane_piece_key, PIECE_LEN};
use crate::catalogue::{cursor::MAX_LANES, record::SEAL_AFTER_MS};
use crate::model::{number, ListName};

/// The lanes a store claimed or moved by this release gets.
pub const WIDTH: usize = 32;

/// Round `n` of lane `k` is id `base + width·(n − 1) + k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    width: usize,
    base: i64,
    /// The last id the counter handed out, and when it moved (0: never).
    legacy_last: i64,
    moved_ms: u64,
}

impl Geometry {
    /// A lanes store's mark (in `ctr:id`), `petstore-lanes <format> <base>
    /// <last> <moved ms>`: format 1 of 16 lanes (1.3.0's), 2 of 32, or of
    /// `lanes=<n>` (read since 2.0.0).
    pub const MARK: &'static str = "petstore-lanes ";

    /// 1 to 64 lanes that begin on a block past the ids before them.
    pub fn new(width: usize, base: i64, legacy_last: i64, moved_ms: u64) -> Option<Geometry> {
        let sound = (1..=MAX_LANES).contains(&width) && base % PIECE_LEN == 1;
        let g = Geometry::after(width, legacy_last, moved_ms);
        (sound && (0..base).contains(&legacy_last)).then_some(Geometry { base, ..g })
    }

    /// The geometry a mark says, read word by word: three numbers, then
    /// words `<name>=<value>` a later 2.x release may add, each once
    /// (`lanes=`, on format 2). Anything else is no mark of lanes.
    pub fn from_mark(bytes: &[u8]) -> Option<Geometry> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut words = text.strip_prefix(Geometry::MARK)?.split(' ');
        let format = words.next().filter(|f| ["1", "2"].contains(f))?;
        let mut next = || words.next().and_then(number);
        let (base, last, moved) = (next()?, next()?, next()? as u64);
        let mut width = if format == "1" { 16 } else { WIDTH };
        let lower = |t: &str, digits| {
            let ok = |b: u8| b.is_ascii_lowercase() || (digits && b.is_ascii_digit());
            !t.is_empty() && t.bytes().all(ok)
        };
        let mut named = Vec::new();
        for word in words {
            let (name, value) = word.split_once('=')?;
            (lower(name, false) && lower(value, true) && !named.contains(&name)).then_some(())?;
            if name == "lanes" {
                width = usize::try_from(number(value).filter(|_| format == "2")?).ok()?;
            }
            named.push(name);
        }
        Geometry::new(width, base, last, moved)
    }

    /// Its mark: of 16 and 32 lanes, those every release since 1.3.0 and
    /// 1.4.0 reads.
    pub fn mark(&self) -> Vec<u8> {
        let (format, more) = match self.width {
            16 => (1, String::new()),
            WIDTH => (2, String::new()),
            width => (2, format!(" lanes={width}")),
        };
        let (base, last, moved) = (self.base, self.legacy_last, self.moved_ms);
        format!("{}{format} {base} {last} {moved}{more}", Geometry::MARK).into_bytes()
    }

    /// What `/v1/health` says of it: its width, and a move's state.
    pub fn health(&self, now_ms: u64) -> String {
        let lanes = format!(r#""lanes":{}"#, self.width);
        if !self.moved() {
            return lanes;
        }
        let state = match now_ms >= self.moved_ms + SEAL_AFTER_MS {
            true => "done",
            false => "settling",
        };
        let (before, at) = (self.legacy_last, self.moved_ms);
        format!(
            r#"{lanes},"move":{{"from":"counters","to":"lanes","state":"{state}","ids_before":{before},"at_ms":{at}}}"#
        )
    }

    /// The lanes of a store whose counter stood at `last` (0: a new store).
    pub fn after(width: usize, last: i64, moved_ms: u64) -> Geometry {
        let base = (last + PIECE_LEN - 1) / PIECE_LEN * PIECE_LEN + 1;
        Geometry {
            width,
            base,
            legacy_last: last,
            moved_ms,
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn base(&self) -> i64 {
        self.base
    }

    pub fn legacy_last(&self) -> i64 {
        self.legacy_last
    }

    pub fn moved_ms(&self) -> u64 {
        self.moved_ms
    }

    pub fn moved(&self) -> bool {
        self.moved_ms > 0 || self.legacy_last > 0
    }

    pub fn id(&self, lane: usize, round: u64) -> i64 {
        self.base + self.width as i64 * (round as i64 - 1) + lane as i64
    }

    /// The lane and round of `id`, one of the lanes (at least `base`).
    pub fn place(&self, id: i64) -> (usize, u64) {
        let (offset, width) = ((id - self.base).max(0), self.width as i64);
        ((offset % width) as usize, (offset / width) as u64 + 1)
    }

    /// Per lane, the rounds below `position`, a counters cursor's.
    pub fn rounds_below(&self, position: Option<i64>) -> Vec<u64> {
        let offset = position.unwrap_or(self.base) - self.base;
        let below = |lane| ((offset - lane as i64).max(0) as u64).div_ceil(self.width as u64);
        (0..self.width).map(below).collect()
    }

    pub fn block(&self, id: i64) -> i64 {
        (id - self.base) / PIECE_LEN
    }

    /// The piece of entry `index` of `lane`: a round, or a status position.
    pub fn piece(&self, list: ListName, lane: usize, index: u64) -> String {
        match list {
            ListName::All => lane_piece_key(list, lane, self.block(self.id(lane, index))),
            ListName::Status(_) => lane_piece_key(list, lane, (index as i64 - 1) / PIECE_LEN),
        }
    }

    /// What a merge reads first: the heads' keys, and the pieces a page
    /// expects to need: of the ids it spans if the lanes are even; each lane's
    /// next (of a status, and the one after it).
    pub fn read_keys(&self, list: ListName, from: &[u64], limit: usize) -> Vec<String> {
        let width = from.len().max(1) as u64;
        let mut keys: Vec<String> = (0..self.width).map(head_key).collect();
        let mut add = |key: String| {
            if !keys.contains(&key) {
                keys.push(key);
            }
        };
        if list == ListName::All {
            let first = from.iter().copied().min().unwrap_or(0) + 1;
            let last = self.id(self.width() - 1, first + limit as u64 / width + 2);
            (self.block(self.id(0, first))..=self.block(last))
                .for_each(|k| add(block_key(list, k)));
        }
        let positions = 2 * (limit as u64 / width) + 2;
        for (lane, done) in from.iter().enumerate() {
            add(self.piece(list, lane, done + 1));
            if list != ListName::All {
                add(self.piece(list, lane, done + positions));
            }
        }
        keys
    }

    /// The first entry of `lane` past the piece that holds entry `index`.
    pub fn after_piece(&self, list: ListName, lane: usize, index: u64) -> u64 {
        match list {
            ListName::All => {
                let next = (self.block(self.id(lane, index)) + 1) * PIECE_LEN - lane as i64;
                (next.max(0) as u64).div_ceil(self.width as u64) + 1
            }
            ListName::Status(_) => index.div_ceil(PIECE_LEN as u64) * PIECE_LEN as u64 + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_rounds_lanes_and_pieces_map_both_ways_at_any_width() {
        let g = Geometry::after(32, 40, 1);
        assert_eq!((g.base(), g.legacy_last(), g.moved()), (65, 40, true));
        assert_eq!((g.id(0, 1), g.id(31, 1), g.id(0, 2)), (65, 96, 97));
        assert_eq!(
            (g.place(65), g.place(96), g.place(97)),
            ((0, 1), (31, 1), (0, 2))
        );
        assert_eq!(g.rounds_below(Some(98))[..3], [2, 1, 1]);
        assert_eq!(Geometry::after(32, 32, 0).base(), 33);
        assert_eq!(
            Geometry::after(32, 0, 0),
            Geometry::new(32, 1, 0, 0).unwrap()
        );
        for bad in [(32, 1024, 0), (32, 33, 40), (0, 1, 0), (65, 1, 0)] {
            assert_eq!(Geometry::new(bad.0, bad.1, bad.2, 0), None, "{bad:?}");
        }
        let all = ListName::All;
        for width in [1, 16, 32, 48, 64] {
            let g = Geometry::new(width, 33, 20, 5).unwrap();
            for lane in 0..width {
                for round in 1..6 {
                    let id = g.id(lane, round);
                    assert_eq!(g.place(id), (lane, round));
                    let key = g.piece(all, lane, round);
                    assert_eq!(key, format!("ix3:all:{}", (id - 33) / 32));
                    // The next round of the lane in another block.
                    let next = g.after_piece(all, lane, round);
                    assert!(g.piece(all, lane, next) != key && g.piece(all, lane, next - 1) == key);
                }
            }
        }
    }
}
