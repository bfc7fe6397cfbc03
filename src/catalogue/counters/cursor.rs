//! The counters part of a cursor: `c<position>`, then the positions carried
//! below it, `u<d>-<d>…_<seconds>` (how far below, base 36; since when).

use crate::model::{number, split_digits};

/// Positions a cursor carries at most (more than creates run at once on
/// one machine); a page that would carry more ends where it is.
pub const MAX_CARRIED: usize = 64;

/// Where a walk of a counters list goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub(super) position: i64,
    /// Positions below it whose create was not finished when last seen,
    /// ascending, each listed once it commits.
    pub(super) carried: Vec<i64>,
    /// When the oldest of them was first seen (Unix seconds).
    pub(super) since_s: u64,
}

impl Cursor {
    /// A walk's start at `position`, carrying nothing.
    pub fn at(position: i64) -> Cursor {
        Cursor {
            position,
            carried: Vec::new(),
            since_s: 0,
        }
    }

    pub fn position(&self) -> i64 {
        self.position
    }

    /// The part at the start of `text`, if it has one, and what follows.
    pub fn read(text: &str) -> Option<(Option<Cursor>, &str)> {
        let Some(after) = text.strip_prefix('c') else {
            return Some((None, text));
        };
        let (digits, mut rest) = split_digits(after);
        let mut cursor = Cursor::at(number(digits).filter(|p| *p >= 1)?);
        if let Some(after) = rest.strip_prefix('u') {
            let (list, tail) = after.split_once('_')?;
            if list.split('-').count() > MAX_CARRIED {
                return None;
            }
            for below in list.split('-') {
                let ok = !below.is_empty() && below.len() <= 12 && !below.starts_with('0');
                let below = i64::from_str_radix(below, 36).ok().filter(|_| ok)?;
                // Any order: positions below 1 name nothing and are dropped.
                let carried = cursor.position - below;
                let at = cursor.carried.partition_point(|p| *p < carried);
                if carried >= 1 && cursor.carried.get(at) != Some(&carried) {
                    cursor.carried.insert(at, carried);
                }
            }
            let (digits, tail) = split_digits(tail);
            cursor.since_s = u64::try_from(number(digits)?).ok()?;
            rest = tail;
        }
        Some((Some(cursor), rest))
    }

    pub fn encode(&self) -> String {
        let mut text = format!("c{}", self.position);
        if !self.carried.is_empty() {
            let below: Vec<String> = self
                .carried
                .iter()
                .map(|p| base36((self.position - p) as u64))
                .collect();
            text.push_str(&format!("u{}_{}", below.join("-"), self.since_s));
        }
        text
    }
}

fn base36(mut n: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Cursor> {
        match Cursor::read(text)? {
            (cursor, "") => cursor,
            _ => None,
        }
    }

    #[test]
    fn counters_parts_round_trip_and_carry_how_far_below() {
        let carried = Cursor {
            position: 1001,
            carried: vec![1, 997, 999],
            since_s: 9,
        };
        assert_eq!(
            carried.encode(),
            "c1001urs-4-2_9",
            "how far below, in base 36"
        );
        assert_eq!(read("c1001urs-4-2_9"), Some(carried));
        assert_eq!(read("c21"), Some(Cursor::at(21)));
        let full = Cursor {
            position: 100,
            carried: (10..74).collect(),
            since_s: 7,
        };
        assert_eq!(read(&full.encode()), Some(full));
        assert_eq!(
            Cursor::read("c7l1.0").map(|(c, rest)| (c.is_some(), rest)),
            Some((true, "l1.0"))
        );
        assert_eq!(Cursor::read("l1.0").map(|(c, _)| c), Some(None));
    }

    #[test]
    fn anything_else_is_not_a_counters_part() {
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
        ] {
            assert_eq!(read(bad), None, "{bad}");
        }
        let too_many: Vec<String> = (1..=MAX_CARRIED as u64 + 1).rev().map(base36).collect();
        assert_eq!(read(&format!("c500u{}_1", too_many.join("-"))), None);
        let most: Vec<String> = (1..=MAX_CARRIED as u64).rev().map(base36).collect();
        assert!(read(&format!("c500u{}_1", most.join("-"))).is_some());
    }
}
