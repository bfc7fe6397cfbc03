//! The replicated layout's list entries and cursors: `ixr:{t}:{id}:{status}`
//! (creation time, Unix ms, 13 digits; id, 16 digits), which sort as the
//! lists do, by time then id; a cursor `r{t}.{id}` names the last shown.

use crate::model::{number, split_digits, Cursor, ListName, PetStatus};

use crate::catalogue::{counters, lanes};

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

/// Whether `text` is a cursor the default build's layouts make (a counters
/// part, then a lanes part, each read by its layout's own grammar), which a
/// walk of this build answers as its end; anything else is not a cursor.
pub fn made_by_other_layouts(text: &str) -> bool {
    let Some((_, lanes)) = counters::Cursor::read(text) else {
        return false;
    };
    !text.is_empty() && lanes::Cursor::read(lanes).is_some()
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
