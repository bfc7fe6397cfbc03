//! The replicated layout's list entries, `ixr:{t}:{id}:{status}` (Unix ms,
//! 13 digits; id, 16 digits): they sort as the lists do, by time then id.

use crate::catalogue::cursor::Placed;
use crate::model::{ListName, PetStatus};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub place: Placed,
    pub status: PetStatus,
}

impl Entry {
    pub fn key(&self) -> String {
        let Placed { t_ms, id } = self.place;
        format!("ixr:{t_ms:013}:{id:016}:{}", self.status.as_str())
    }

    pub fn parse(key: &str) -> Option<Entry> {
        let mut parts = key.strip_prefix("ixr:")?.split(':');
        let t_ms = parts.next().filter(|t| t.len() == 13)?.parse().ok()?;
        let id = parts.next().filter(|i| i.len() == 16)?.parse().ok()?;
        let status = PetStatus::parse(parts.next()?)?;
        parts.next().is_none().then_some(Entry {
            place: Placed { t_ms, id },
            status,
        })
    }

    pub fn in_list(&self, list: ListName) -> bool {
        list.status().is_none_or(|status| status == self.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_sort_by_time_then_id() {
        let a = Entry {
            place: Placed {
                t_ms: 1_800_000_000_000,
                id: 9_007_199_254_740_991,
            },
            status: PetStatus::Sold,
        };
        let b = Entry {
            place: Placed {
                t_ms: 1_800_000_000_001,
                id: 5,
            },
            status: PetStatus::Available,
        };
        assert!(a.key() < b.key(), "{} {}", a.key(), b.key());
        assert_eq!(Entry::parse(&a.key()), Some(a.clone()));
        assert_eq!(Entry::parse("ixr:1:2:sold"), None);
        assert_eq!(Entry::parse("pet:5"), None);
        let sold = ListName::Status(PetStatus::Sold);
        assert!(a.in_list(sold) && !b.in_list(sold) && b.in_list(ListName::All));
    }
}
