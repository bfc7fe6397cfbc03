//! The replicated layout's list entries and cursors: `ixr:{t}:{id}:{status}`
//! (creation time, Unix ms, 13 digits; id, 16 digits), which sort as the
//! lists do, by time then id; a cursor `r{t}.{id}` names the last shown.

use crate::model::{number, split_digits, Cursor, ListName, PetStatus};

/// Key prefix of the entries.
pub const ENTRY_PREFIX: &str = "ixr:";

/// A pet's place in the lists: when it was created, then its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub t_ms: u64,
    pub id: i64,
}

/// One entry, as its key names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub place: Place,
    pub status: PetStatus,
}

impl Entry {
    pub fn key(&self) -> String {
        format!(
            "{ENTRY_PREFIX}{:013}:{:016}:{}",
            self.place.t_ms,
            self.place.id,
            self.status.as_str()
        )
    }

    /// The entry a key names; `None` for any other key.
    pub fn parse(key: &str) -> Option<Entry> {
        let mut parts = key.strip_prefix(ENTRY_PREFIX)?.split(':');
        let t_ms = parts.next().filter(|t| t.len() == 13)?.parse().ok()?;
        let id = parts.next().filter(|i| i.len() == 16)?.parse().ok()?;
        let status = PetStatus::parse(parts.next()?)?;
        parts.next().is_none().then_some(Entry {
            place: Place { t_ms, id },
            status,
        })
    }

    pub fn in_list(&self, list: ListName) -> bool {
        match list {
            ListName::All => true,
            ListName::Status(status) => status == self.status,
        }
    }
}

impl Place {
    /// The cursor of a walk whose last pet shown is at this place.
    pub fn cursor(self) -> Cursor {
        Cursor::made(format!("r{}.{}", self.t_ms, self.id))
    }

    /// The place a cursor names; `None` if no page of this layout made it.
    pub fn of(cursor: &Cursor) -> Option<Place> {
        let rest = cursor.as_str().strip_prefix('r')?;
        let (t, rest) = split_digits(rest);
        let id = number(rest.strip_prefix('.')?)?;
        Some(Place {
            t_ms: u64::try_from(number(t)?).ok()?,
            id,
        })
    }
}

/// Whether `text` is a cursor the default build's layouts make (the
/// document's pattern: a counters part `c<id>[u<base36>(-<base36>)…_<n>]`,
/// then a lanes part `l<n>.<16 or 32 base36>` or `l<n>(-<n>){15 or 31}`,
/// then `_<n>` and up to 3 words `_<1 to 18 base36>`),
/// which a walk of this build answers as its end; anything else is not a
/// cursor at all.
pub fn made_by_other_layouts(text: &str) -> bool {
    let mut rest = text;
    if let Some(after) = rest.strip_prefix('c') {
        let Some(after) = digits(after, false) else {
            return false;
        };
        rest = after;
        if let Some(after) = rest.strip_prefix('u') {
            let mut after = base36(after, 1, 12, false);
            let mut words = 1;
            while let Some(next) = after.and_then(|a| a.strip_prefix('-')) {
                after = base36(next, 1, 12, false);
                words += 1;
            }
            let Some(after) = after.filter(|_| words <= 64) else {
                return false;
            };
            let Some(after) = after.strip_prefix('_').and_then(|a| digits(a, true)) else {
                return false;
            };
            rest = after;
        }
    }
    if let Some(after) = rest.strip_prefix('l') {
        let Some(after) = digits(after, true) else {
            return false;
        };
        rest = if let Some(hex) = after.strip_prefix('.') {
            match base36(hex, 16, 32, true) {
                Some(end) if [16, 32].contains(&(hex.len() - end.len())) => end,
                _ => return false,
            }
        } else {
            let mut after = Some(after);
            let mut more = 0;
            while let Some(next) = after.and_then(|a| a.strip_prefix('-')) {
                after = digits(next, true);
                more += 1;
            }
            match after {
                Some(end) if more == 15 || more == 31 => end,
                _ => return false,
            }
        };
        if let Some(after) = rest.strip_prefix('_') {
            let mut after = digits(after, true);
            let mut words = 0;
            while let Some(next) = after.and_then(|a| a.strip_prefix('_')) {
                after = base36(next, 1, 18, true);
                words += 1;
            }
            match after {
                Some(end) if words <= 3 => rest = end,
                _ => return false,
            }
        }
    }
    rest.is_empty() && text.len() >= 2
}

/// `text` after a number of 1 to 18 digits (`0` alone if `zero`, else no
/// leading zero at all).
fn digits(text: &str, zero: bool) -> Option<&str> {
    let (number, rest) = split_digits(text);
    let ok =
        (1..=18).contains(&number.len()) && (!number.starts_with('0') || (zero && number == "0"));
    ok.then_some(rest)
}

/// `text` after `least` to `most` characters of `0-9 a-z` (the first not
/// `0` unless `lead`).
fn base36(text: &str, least: usize, most: usize, lead: bool) -> Option<&str> {
    let len = text
        .bytes()
        .take(most)
        .take_while(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        .count();
    let ok = len >= least && (lead || !text.starts_with('0'));
    ok.then(|| &text[len..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_sort_by_time_then_id_and_cursors_name_a_place() {
        let a = Entry {
            place: Place {
                t_ms: 1_800_000_000_000,
                id: 9_007_199_254_740_991,
            },
            status: PetStatus::Sold,
        };
        let b = Entry {
            place: Place {
                t_ms: 1_800_000_000_001,
                id: 5,
            },
            status: PetStatus::Available,
        };
        assert!(a.key() < b.key(), "{} {}", a.key(), b.key());
        assert_eq!(Entry::parse(&a.key()), Some(a.clone()));
        assert_eq!(Entry::parse("ixr:1:2:sold"), None);
        assert_eq!(Entry::parse("pet:5"), None);
        assert!(
            a.in_list(ListName::Status(PetStatus::Sold))
                && !b.in_list(ListName::Status(PetStatus::Sold))
        );
        let cursor = a.place.cursor();
        assert_eq!(cursor.as_str(), "r1800000000000.9007199254740991");
        assert_eq!(Place::of(&cursor), Some(a.place));
        for bad in ["c5", "r12", "r1.x", "r01.2", "x1.2"] {
            assert_eq!(Place::of(&Cursor::parse(bad).unwrap()), None, "{bad}");
        }
        let lanes = |n: usize| format!("l{}", vec!["0"; n].join("-"));
        for theirs in [
            "c5",
            "c2u1_0",
            "c2u1-z0_7",
            "l3.0123456789abcdef",
            &lanes(16),
            &lanes(32),
            &format!("c9{}", lanes(32)),
            "l3.0123456789abcdef_9",
            "l3.0123456789abcdef_0_a1_0_zz",
            &format!("{}_12", lanes(32)),
        ] {
            assert!(made_by_other_layouts(theirs), "{theirs}");
        }
        for not in [
            "00",
            "c0",
            "c",
            "l",
            "cu1_0",
            "c2u01_0",
            "c2u1",
            "l3.012",
            &lanes(15),
            "r1.2",
            "c5x",
            "l3.0123456789abcdef_",
            "l3.0123456789abcdef_09",
            "l3.0123456789abcdef_1_",
            "l3.0123456789abcdef_1_a_b_c_d",
            "l3.0123456789abcdef_1_1234567890123456789",
        ] {
            assert!(!made_by_other_layouts(not), "{not}");
        }
    }
}
