//! The lanes part of a cursor: `l<base>.<a base-36 digit per lane>` (or
//! `l<n>-<n>-…`), what each lane listed; then the word `_<n>` and up to 3 later
//! words, ignored. docs/key-value-layout.md, "The lanes layout".

use crate::model::number;

use super::geometry::Geometry;

/// How far a walk went in each lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    lanes: Vec<u64>,
    stored: u64,
}

impl Cursor {
    pub fn new(lanes: Vec<u64>) -> Cursor {
        Cursor { lanes, stored: 0 }
    }

    /// With the rounds every lane had stored (0: not known, not written).
    pub fn stored(self, stored: u64) -> Cursor {
        Cursor { stored, ..self }
    }

    pub fn lanes(&self) -> &[u64] {
        &self.lanes
    }

    /// Rounds every lane had stored when a page read the heads.
    pub fn stored_rounds(&self) -> u64 {
        self.stored
    }

    /// The part that `text` is, if any (`None` inside: `text` is empty).
    pub fn read(text: &str) -> Option<Option<Cursor>> {
        if text.is_empty() {
            return Some(None);
        }
        let mut words = text.strip_prefix('l')?.split('_');
        let text = words.next()?;
        let stored = match words.next() {
            Some(word) => u64::try_from(number(word)?).ok()?,
            None => 0,
        };
        // Words a later release may add, each an optimization this one
        // does without: up to 3, each 1 to 18 of `0-9 a-z`.
        for (n, word) in words.enumerate() {
            let short = n < 3 && (1..=18).contains(&word.len());
            if !short
                || !word
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
            {
                return None;
            }
        }
        let lanes: Vec<u64> = if let Some((base, digits)) = text.split_once('.') {
            let base = u64::try_from(number(base)?).ok()?;
            digits
                .chars()
                .map(|c| {
                    let d = c.to_digit(36).filter(|_| !c.is_ascii_uppercase())?;
                    base.checked_add(u64::from(d))
                })
                .collect::<Option<_>>()?
        } else {
            text.split('-')
                .map(|part| u64::try_from(number(part)?).ok())
                .collect::<Option<_>>()?
        };
        Geometry::is_width(lanes.len()).then_some(Some(Cursor { lanes, stored }))
    }

    pub fn encode(&self) -> String {
        let base = self.lanes.iter().copied().min().unwrap_or(0);
        let digits: Option<String> = self
            .lanes
            .iter()
            .map(|n| char::from_digit((n - base) as u32, 36).filter(|_| n - base < 36))
            .collect();
        let mut text = match digits {
            Some(digits) => format!("l{base}.{digits}"),
            None => {
                let all: Vec<String> = self.lanes.iter().map(u64::to_string).collect();
                format!("l{}", all.join("-"))
            }
        };
        if self.stored > 0 {
            text.push_str(&format!("_{}", self.stored));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_parts_round_trip_in_either_form() {
        let mut lanes = vec![62_500u64; 32];
        lanes[3] = 62_501;
        lanes[31] = 62_535;
        let wide = Cursor::new(lanes);
        assert_eq!(Cursor::read(&wide.encode()), Some(Some(wide)));
        let mut far = vec![4u64; 16];
        far[0] = 40;
        let text = Cursor::new(far.clone()).encode();
        assert_eq!(text, "l40-4-4-4-4-4-4-4-4-4-4-4-4-4-4-4");
        assert_eq!(Cursor::read(&text), Some(Some(Cursor::new(far.clone()))));
        assert_eq!(
            Cursor::read("l7.0123456789abcdez")
                .unwrap()
                .unwrap()
                .lanes()[15],
            7 + 35
        );
        let read = Cursor::read("l7.0123456789abcdefghijklmnopqrstuv")
            .unwrap()
            .unwrap();
        assert_eq!(read.lanes()[31], 7 + 31, "a store of 32 lanes");
        let stored = Cursor::new(vec![3; 32]).stored(9);
        assert_eq!(stored.encode(), format!("l3.{}_9", "0".repeat(32)));
        assert_eq!(Cursor::read(&stored.encode()), Some(Some(stored)));
        let far = Cursor::new(far).stored(2);
        assert_eq!(Cursor::read(&far.encode()), Some(Some(far)));
        for bad in [
            "l",
            "l1.",
            "l1.0000",
            "l1-2-3",
            "l1.00000000000000000",
            "x",
            "l1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16-17",
            "l1.0000000000000000_",
            "l1.0000000000000000_09",
            "l1.0000000000000000_1_",
            "l1.0000000000000000_1_a_b_c_d",
            "l1.0000000000000000_1_1234567890123456789",
            "l1.0000000000000000_1_a.b",
        ] {
            assert_eq!(Cursor::read(bad), None, "{bad}");
        }
        let later = Cursor::read(&format!("l3.{}_9_a1_0_zz", "0".repeat(32)));
        let word = Cursor::read(&format!("l3.{}_9", "0".repeat(32)));
        assert_eq!(later, word, "later words ignored");
        assert_eq!(word.unwrap().unwrap().stored_rounds(), 9);
    }
}
