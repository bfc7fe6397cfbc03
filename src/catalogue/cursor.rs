//! The cursor's one grammar, every part a release has made, read strictly:
//! a counters part `c…`, a lanes part `l…`, or the edge build's `r…`, then
//! up to 3 words a later 2.x release may add, which this one ignores
//! (docs/decisions.md, "Extending a mark or a cursor").

use crate::errors::ApiError;
use crate::model::{number, split_digits, Cursor};

/// Positions a counters part carries at most; a page that would carry
/// more ends where it is.
pub const MAX_CARRIED: usize = 64;
/// Lanes a lanes part may name: a store's width is at most this.
pub const MAX_LANES: usize = 64;

/// Where a walk of a counters list goes on: the next position, and those
/// below it whose create had not finished, since when (Unix seconds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counted {
    pub position: i64,
    pub carried: Vec<i64>,
    pub since_s: u64,
}

/// How far a walk went in each lane, and the word after: the rounds every
/// lane had stored (unfiltered), or what a status cursor is exact to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Laned {
    pub lanes: Vec<u64>,
    pub word: u64,
}

/// The edge build's: the creation time and id of the last pet shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placed {
    pub t_ms: u64,
    pub id: i64,
}

/// A cursor's parts; none at all: a walk's start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    pub counted: Option<Counted>,
    pub laned: Option<Laned>,
    pub placed: Option<Placed>,
}

/// `text` after a number (1 to 18 digits, no leading zero), and its value.
fn num(text: &str) -> Option<(i64, &str)> {
    let (digits, rest) = split_digits(text);
    Some((number(digits)?, rest))
}

/// A word of `0-9 a-z`, 1 to `most` long, not led by `0` unless `lead`.
fn word(text: &str, most: usize, lead: bool) -> Option<(&str, &str)> {
    let len = text
        .bytes()
        .take_while(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        .count();
    let ok = (1..=most).contains(&len) && (lead || !text.starts_with('0'));
    ok.then(|| text.split_at(len))
}

impl Counted {
    /// A walk from `position`, carrying nothing.
    pub fn at(position: i64) -> Counted {
        Counted {
            position,
            ..Counted::default()
        }
    }

    /// `<position>[u<below>(-<below>)…_<since>]`, each below in base 36.
    fn parse(text: &str) -> Option<(Counted, &str)> {
        let (position, mut rest) = num(text).filter(|(p, _)| *p >= 1)?;
        let mut counted = Counted {
            position,
            ..Counted::default()
        };
        let Some(mut list) = rest.strip_prefix('u') else {
            return Some((counted, rest));
        };
        for _ in 0..MAX_CARRIED {
            let (below, tail) = word(list, 12, false)?;
            // Any order; positions below 1 name nothing and are dropped.
            let at = position - i64::from_str_radix(below, 36).ok()?;
            let i = counted.carried.partition_point(|p| *p < at);
            if at >= 1 && counted.carried.get(i) != Some(&at) {
                counted.carried.insert(i, at);
            }
            match tail.strip_prefix('-') {
                Some(tail) => list = tail,
                None => {
                    let (since, tail) = num(tail.strip_prefix('_')?)?;
                    (counted.since_s, rest) = (since as u64, tail);
                    return Some((counted, rest));
                }
            }
        }
        None
    }
}

impl Laned {
    /// `<base>.<a base-36 digit per lane>` or `<n>(-<n>)…`, then the word
    /// `_<n>`, if any.
    fn parse(text: &str) -> Option<(Laned, &str)> {
        let (first, mut rest) = num(text)?;
        let mut lanes = vec![first as u64];
        if let Some(digits) = rest.strip_prefix('.') {
            let (digits, tail) = word(digits, MAX_LANES, true)?;
            let digit = |c: char| first as u64 + u64::from(c.to_digit(36).unwrap_or(0));
            (lanes, rest) = (digits.chars().map(digit).collect(), tail);
        } else {
            while let Some((n, tail)) = rest.strip_prefix('-').and_then(num) {
                lanes.push(n as u64);
                rest = tail;
            }
        }
        let mut word = 0;
        if let Some(after) = rest.strip_prefix('_') {
            let (n, tail) = num(after)?;
            (word, rest) = (n as u64, tail);
        }
        (lanes.len() <= MAX_LANES).then_some((Laned { lanes, word }, rest))
    }
}

impl Parts {
    pub fn new(counted: Option<Counted>, laned: Option<Laned>) -> Parts {
        Parts {
            counted,
            laned,
            placed: None,
        }
    }

    /// The parts of `cursor` (none: the start); a cursor that is no part of
    /// this grammar is a 400.
    pub fn read(cursor: Option<&Cursor>) -> Result<Parts, ApiError> {
        cursor
            .map_or(Some(Parts::default()), |c| Parts::parse(c.as_str()))
            .ok_or_else(Cursor::malformed)
    }

    fn parse(text: &str) -> Option<Parts> {
        let (mut parts, mut rest) = (Parts::default(), text);
        if let Some(after) = rest.strip_prefix('r') {
            let (t_ms, after) = num(after)?;
            let (id, after) = num(after.strip_prefix('.')?).filter(|(id, _)| *id >= 1)?;
            (parts.placed, rest) = (
                Some(Placed {
                    t_ms: t_ms as u64,
                    id,
                }),
                after,
            );
        } else {
            if let Some(after) = rest.strip_prefix('c') {
                let (counted, after) = Counted::parse(after)?;
                (parts.counted, rest) = (Some(counted), after);
            }
            if let Some(after) = rest.strip_prefix('l') {
                let (laned, after) = Laned::parse(after)?;
                (parts.laned, rest) = (Some(laned), after);
            }
        }
        // Words of a later release, each a saving this one does without.
        for _ in 0..3 {
            match rest.strip_prefix('_').and_then(|w| word(w, 18, true)) {
                Some((_, tail)) => rest = tail,
                None => break,
            }
        }
        (rest.is_empty() && parts != Parts::default()).then_some(parts)
    }

    /// The cursor of these parts.
    pub fn cursor(&self) -> Cursor {
        let mut text = String::new();
        if let Some(c) = &self.counted {
            text.push_str(&format!("c{}", c.position));
            let below: Vec<String> = c
                .carried
                .iter()
                .map(|p| base36((c.position - p) as u64))
                .collect();
            if !below.is_empty() {
                text.push_str(&format!("u{}_{}", below.join("-"), c.since_s));
            }
        }
        if let Some(l) = &self.laned {
            let base = l.lanes.iter().copied().min().unwrap_or(0);
            match l.lanes.iter().all(|n| n - base < 36) {
                true => text.push_str(&format!(
                    "l{base}.{}",
                    l.lanes.iter().map(|n| base36(n - base)).collect::<String>()
                )),
                false => text.push_str(&format!(
                    "l{}",
                    l.lanes
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join("-")
                )),
            }
            if l.word > 0 {
                text.push_str(&format!("_{}", l.word));
            }
        }
        if let Some(p) = &self.placed {
            text.push_str(&format!("r{}.{}", p.t_ms, p.id));
        }
        Cursor::made(text)
    }
}

fn base36(mut n: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            return digits.iter().rev().collect();
        }
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
        let counted = Counted {
            position: 1001,
            carried: vec![1, 997, 999],
            since_s: 9,
        };
        let laned = Laned {
            lanes: vec![62_500, 62_501, 62_535],
            word: 7,
        };
        let placed = Placed {
            t_ms: 1_800_000_000_000,
            id: 9_007_199_254_740_991,
        };
        for (text, expected) in [
            (
                "c1001urs-4-2_9",
                Parts {
                    counted: Some(counted.clone()),
                    ..Parts::default()
                },
            ),
            (
                "l62500.01z_7",
                Parts {
                    laned: Some(laned.clone()),
                    ..Parts::default()
                },
            ),
            (
                "c1001urs-4-2_9l62500.01z_7",
                Parts {
                    counted: Some(counted),
                    laned: Some(laned),
                    placed: None,
                },
            ),
            (
                "r1800000000000.9007199254740991",
                Parts {
                    placed: Some(placed),
                    ..Parts::default()
                },
            ),
        ] {
            assert_eq!(parts(text), Some(expected.clone()), "{text}");
            assert_eq!(expected.cursor().as_str(), text);
            for words in ["_a", "_0_zz", "_123456789012345678_a_b"] {
                assert_eq!(
                    parts(&format!("{text}{words}")),
                    Some(expected.clone()),
                    "{text}{words}"
                );
            }
        }
        let far = Laned {
            lanes: vec![40, 4, 4],
            word: 0,
        };
        let far = Parts {
            laned: Some(far),
            ..Parts::default()
        };
        assert_eq!(far.cursor().as_str(), "l40-4-4");
        assert_eq!(parts("l40-4-4"), Some(far));
        assert_eq!(parts("c7u1_0").unwrap().counted.unwrap().carried, vec![6]);
        assert_eq!(
            parts("c2u5-1_3").unwrap().counted.unwrap().carried,
            vec![1],
            "below 1: dropped"
        );
        let wide = format!("l3.{}", "0".repeat(MAX_LANES));
        assert_eq!(parts(&wide).unwrap().laned.unwrap().lanes.len(), MAX_LANES);
        assert_eq!(Parts::read(None), Ok(Parts::default()));
    }

    #[test]
    fn anything_else_is_malformed() {
        let most: Vec<String> = (1..=MAX_CARRIED as u64 + 1).rev().map(base36).collect();
        for bad in [
            "c",
            "c0",
            "c01",
            "c1x",
            "c1234567890123456789",
            "c5u",
            "c5u3",
            "c5u3_",
            "c5u0_1",
            "c5u01_1",
            "l",
            "l1.",
            "l1-",
            "l1.0_",
            "l1.0_09",
            "l1.0_a",
            "l1.0_1_",
            "l1.0_1_a_b_c_d",
            "l1.0_1_1234567890123456789",
            "l1.0_1_a.b",
            "x",
            "r12",
            "r1.x",
            "r01.2",
            "r1.0",
            "r1.2c3",
            "r1.2l1.0",
            "c5r1.2",
            "_a",
            "c5_",
            "c5_A",
            &format!("c500u{}_1", most.join("-")),
            &format!("l3.{}", "0".repeat(MAX_LANES + 1)),
        ] {
            assert_eq!(parts(bad), None, "{bad}");
        }
        let most: Vec<String> = (1..=MAX_CARRIED as u64).rev().map(base36).collect();
        assert!(parts(&format!("c500u{}_1", most.join("-"))).is_some());
    }
}
