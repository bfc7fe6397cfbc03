//! The cursor's one grammar, every part a release made, read strictly: `c…`,
//! `l…` or `r…`, then up to 3 words a later 2.x release may add, ignored
//! (docs/decisions.md, "Extending a mark or a cursor").

use crate::{catalogue::created::Result, model::number, model::split_digits, model::Cursor};

pub use super::parts::{Counted, Laned, Placed, MAX_CARRIED, MAX_LANES};

/// A lanes part's entries: 15 digits at most, far past any store, so
/// that ids, sums and positions made of them stay in range.
const MAX_ENTRY: i64 = 999_999_999_999_999;

/// A cursor's parts: a counters walk's, a lanes walk's, or both (a moved
/// store's); or the edge build's place alone, and the piece it is in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    counted: Option<Counted>,
    laned: Option<Laned>,
    placed: Option<Placed>,
    /// After `placed`, `_p<n>`: the index piece its walk is in (2.1.0).
    piece: Option<u64>,
}

/// `text` after a number (1 to 18 digits, no leading zero), and its value.
fn num(text: &str) -> Option<(i64, &str)> {
    let (digits, rest) = split_digits(text);
    Some((number(digits)?, rest))
}

/// A word of `0-9 a-z`, 1 to `most` long, not led by `0` unless `lead`.
fn word(text: &str, most: usize, lead: bool) -> Option<(&str, &str)> {
    let alphabet = |b: &u8| b.is_ascii_digit() || b.is_ascii_lowercase();
    let len = text.bytes().take_while(alphabet).count();
    let ok = (1..=most).contains(&len) && (lead || !text.starts_with('0'));
    ok.then(|| text.split_at(len))
}

impl Placed {
    /// A cursor of this part alone, naming the piece it is in: the only
    /// one the edge build writes.
    pub fn cursor(self, piece: u64) -> Cursor {
        Cursor::made(format!("r{}.{}_p{piece}", self.t_ms(), self.id()))
    }
}

impl Counted {
    /// `<position>[u<below>(-<below>)…_<since>]`, each below in base 36.
    fn parse(text: &str) -> Option<(Counted, &str)> {
        let (position, rest) = num(text).filter(|(p, _)| *p >= 1)?;
        let Some(mut list) = rest.strip_prefix('u') else {
            return Some((Counted::at(position), rest));
        };
        let mut carried: Vec<i64> = Vec::new();
        for _ in 0..MAX_CARRIED {
            let (below, tail) = word(list, 12, false)?;
            // Any order; positions below 1 name nothing and are dropped.
            let at = position - i64::from_str_radix(below, 36).ok()?;
            let i = carried.partition_point(|p| *p < at);
            if at >= 1 && carried.get(i) != Some(&at) {
                carried.insert(i, at);
            }
            let Some(tail) = tail.strip_prefix('-') else {
                let (since, rest) = num(tail.strip_prefix('_')?)?;
                return Some((Counted::new(position, carried, since as u64), rest));
            };
            list = tail;
        }
        None
    }
}

impl Laned {
    /// `<base>.<a base-36 digit per lane>` or `<n>(-<n>)…`, then `_<word>`.
    fn parse(text: &str) -> Option<(Laned, &str)> {
        let entry = |text| num(text).filter(|(n, _)| *n <= MAX_ENTRY);
        let (first, mut rest) = entry(text)?;
        let mut lanes = vec![first as u64];
        if let Some(digits) = rest.strip_prefix('.') {
            let (digits, tail) = word(digits, MAX_LANES, true)?;
            let digit = |c: char| first as u64 + u64::from(c.to_digit(36).unwrap_or(0));
            (lanes, rest) = (digits.chars().map(digit).collect(), tail);
        } else {
            while let Some((n, tail)) = rest.strip_prefix('-').and_then(entry) {
                lanes.push(n as u64);
                rest = tail;
            }
        }
        // Its word, a number (a later release's words begin with a letter):
        // `_` then digits that are no number is left, and no word can take
        // it, so the cursor is malformed all the same.
        let (word, rest) = rest.strip_prefix('_').and_then(num).unwrap_or((0, rest));
        (lanes.len() <= MAX_LANES).then(|| (Laned::new(lanes, word as u64), rest))
    }
}

impl Parts {
    pub fn new(counted: Option<Counted>, laned: Option<Laned>) -> Parts {
        Parts {
            counted,
            laned,
            ..Parts::default()
        }
    }

    pub fn counted(&self) -> &Option<Counted> {
        &self.counted
    }

    pub fn laned(&self) -> &Option<Laned> {
        &self.laned
    }

    pub fn placed(&self) -> Option<Placed> {
        self.placed
    }

    pub fn piece(&self) -> Option<u64> {
        self.piece
    }

    /// The parts of `cursor` (none: the start), or a 400.
    pub fn read(cursor: Option<&Cursor>) -> Result<Parts> {
        let parts = cursor.map_or(Some(Parts::default()), |c| Parts::parse(c.as_str()));
        parts.ok_or_else(Cursor::malformed)
    }

    fn parse(text: &str) -> Option<Parts> {
        let (mut parts, mut rest) = (Parts::default(), text);
        if let Some(after) = rest.strip_prefix('r') {
            let (t_ms, after) = num(after)?;
            let (id, after) = num(after.strip_prefix('.')?)?;
            (parts.placed, rest) = (Some(Placed::new(t_ms as u64, id)?), after);
            // `_p<n>` right after it, strictly; `_p` then a letter is a
            // later release's word. No `_p` reads no digits: no piece.
            let (n, after) = split_digits(rest.strip_prefix("_p").unwrap_or(""));
            if !n.is_empty() {
                (parts.piece, rest) = (Some(number(n)? as u64), after);
            }
        }
        if let Some(after) = rest.strip_prefix('c').filter(|_| parts.placed.is_none()) {
            let (counted, after) = Counted::parse(after)?;
            (parts.counted, rest) = (Some(counted), after);
        }
        if let Some(after) = rest.strip_prefix('l').filter(|_| parts.placed.is_none()) {
            let (laned, after) = Laned::parse(after)?;
            (parts.laned, rest) = (Some(laned), after);
        }
        // Words of a later release (led by a letter), each a saving this
        // one does without.
        for _ in 0..3 {
            match rest.strip_prefix('_').and_then(|w| word(w, 18, true)) {
                Some((w, tail)) if w.starts_with(|c: char| c.is_ascii_lowercase()) => rest = tail,
                _ => break,
            }
        }
        (rest.is_empty() && parts != Parts::default()).then_some(parts)
    }

    pub fn cursor(&self) -> Cursor {
        let mut text = String::new();
        if let Some(c) = &self.counted {
            let (at, carried) = (c.position(), c.carried());
            text += &format!("c{at}");
            let below: Vec<String> = carried.iter().map(|p| base36((at - p) as u64)).collect();
            if !below.is_empty() {
                text += &format!("u{}_{}", below.join("-"), c.since_s());
            }
        }
        if let Some(laned) = &self.laned {
            let (lanes, word) = (laned.lanes(), laned.word());
            let base = lanes.iter().copied().min().unwrap_or(0);
            // A base-36 digit per lane where each is within 35 of the least.
            let dot = lanes.iter().all(|n| n - base < 36);
            let each = |n: &u64| if dot { base36(n - base) } else { n.to_string() };
            let each: Vec<String> = lanes.iter().map(each).collect();
            let head = if dot { format!("{base}.") } else { "".into() };
            text += &format!("l{head}{}", each.join(if dot { "" } else { "-" }));
            if word > 0 {
                text += &format!("_{word}");
            }
        }

        Cursor::made(text)
    }
}

fn base36(n: u64) -> String {
    let digit = char::from_digit((n % 36) as u32, 36).unwrap_or('0');
    match n / 36 {
        0 => digit.to_string(),
        more => format!("{}{digit}", base36(more)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Option<Parts> {
        Parts::read(Some(&Cursor::parse(text)?)).ok()
    }

    #[test]
    fn every_part_round_trips_and_words_after_it_are_ignored() {
        let c = Counted::new(1001, vec![1, 997, 999], 9);
        let counted = || Some(c.clone());
        let laned = || Some(Laned::new(vec![62_500, 62_501, 62_535], 7));
        let far = Some(Laned::new(vec![40, 4, 4], 3));
        let (t_ms, id, mut placed) = (1_800_000_000_000, 9_007_199_254_740_991, Parts::default());
        (placed.placed, placed.piece) = (Placed::new(t_ms, id), Some(3));
        for (text, expected) in [
            ("c1001urs-4-2_9", Parts::new(counted(), None)),
            ("l62500.01z_7", Parts::new(None, laned())),
            ("c1001urs-4-2_9l62500.01z_7", Parts::new(counted(), laned())),
            ("r1800000000000.9007199254740991_p3", placed),
            ("l40-4-4_3", Parts::new(None, far)),
        ] {
            assert_eq!(parts(text), Some(expected.clone()), "{text}");
            // The edge build writes its part alone, with its piece.
            let written = match (expected.placed, expected.piece) {
                (Some(placed), Some(piece)) => placed.cursor(piece),
                _ => expected.cursor(),
            };
            assert_eq!(written.as_str(), text);
            for words in ["_a", "_zz_a0", "_a23456789012345678_b_c"] {
                let more = format!("{text}{words}");
                assert_eq!(parts(&more), Some(expected.clone()), "{more}");
            }
        }
        assert_eq!(parts("c7u1_0").unwrap().counted.unwrap().carried(), [6]);
        let below = parts("c2u5-1_3").unwrap().counted.unwrap();
        assert_eq!(below.carried(), [1], "below 1: dropped");
        assert!(parts("l999999999999999-0").is_some(), "the largest entry");
        let wide = format!("l3.{}", "0".repeat(MAX_LANES));
        assert_eq!(
            parts(&wide).unwrap().laned.unwrap().lanes().len(),
            MAX_LANES
        );
        assert_eq!(Parts::read(None), Ok(Parts::default()));
    }

    #[test]
    fn anything_else_is_malformed() {
        let most: Vec<String> = (1..=MAX_CARRIED as u64 + 1).rev().map(base36).collect();
        let fixed = "c c0 c01 c1x c1234567890123456789 c5u c5u3 c5u3_ c5u0_1 c5u01_1 l l1. l1- \
            l1.0_ l1.0_09 l1.0_1_ l1.0_1_a_b_c_d l1.0_1_1234567890123456789 l1.0_1_a.b x r12 \
            r1.x r01.2 r1.0 r1.2c3 r1.2l1.0 c5r1.2 _a c5_ c5_A c5_7 r1.2_0 l1.0_a_7 \
            l1000000000000000 l1-1000000000000000 l1000000000000000.0";
        let longest = [
            format!("c500u{}_1", most.join("-")),
            format!("l3.{}", "0".repeat(MAX_LANES + 1)),
        ];
        for bad in fixed
            .split_whitespace()
            .chain(longest.iter().map(String::as_str))
        {
            assert_eq!(parts(bad), None, "{bad}");
        }
        let most: Vec<String> = (1..=MAX_CARRIED as u64).rev().map(base36).collect();
        assert!(parts(&format!("c500u{}_1", most.join("-"))).is_some());
    }

    /// `_p<n>` strictly right after `r<t>.<id>`: its number as written.
    #[test]
    fn a_piece_is_named_right_after_the_place_only() {
        let placed = Placed::new(1, 2);
        for (text, piece) in [("r1.2_p5", Some(5)), ("r1.2_p0", Some(0))] {
            let read = parts(text).unwrap();
            assert_eq!((read.placed, read.piece), (placed, piece), "{text}");
            assert_eq!(read.placed.unwrap().cursor(piece.unwrap()).as_str(), text);
        }
        // After another word, or led by a letter, `_p…` is a later word.
        for none in ["r1.2_a_p5", "r1.2_pa"] {
            let none = parts(none).unwrap();
            assert_eq!((none.placed, none.piece), (placed, None));
        }
        for bad in ["r1.2_p05", "r1.2_p00", "r1.2_p5x", "r01.2_p5", "r1.02_p5"] {
            assert_eq!(parts(bad), None, "{bad}");
        }
    }
}
