//! The replicated layout's list entries, `ixr:{t}:{id}:{status}` (Unix ms,
//! 13 digits; id, 16 digits): they sort as the lists do, by time then id.

use crate::{catalogue::cursor::Placed, model::padded, model::ListName, model::PetStatus};

/// A pet's place in the lists and its status; a place its key can name
/// (time 13 digits, id 1 to 16 digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    place: Placed,
    status: PetStatus,
}

impl Entry {
    /// The entry of a pet at `place`, if its key can name it.
    pub fn new(place: Placed, status: PetStatus) -> Option<Entry> {
        let named = place.t_ms() < 10_000_000_000_000 && place.id() < 10_000_000_000_000_000;
        (named && place.id() >= 1).then_some(Entry { place, status })
    }

    /// A create's own: its time the store's clock, its id drawn in 1 …
    /// 2^53 − 1.
    pub fn created(place: Placed, status: PetStatus) -> Entry {
        debug_assert!(Entry::new(place, status).is_some());
        Entry { place, status }
    }

    pub fn place(&self) -> Placed {
        self.place
    }

    pub fn key(&self) -> String {
        let (t_ms, id) = (self.place.t_ms(), self.place.id());
        format!("ixr:{t_ms:013}:{id:016}:{}", self.status.as_str())
    }

    pub fn parse(key: &str) -> Option<Entry> {
        let mut parts = key.strip_prefix("ixr:")?.split(':');
        let t_ms = padded(parts.next()?, 13, 10)?;
        let id = padded(parts.next()?, 16, 10)? as i64;
        let status = PetStatus::parse(parts.next()?)?;
        // Of 13 and 16 digits: a place a key names; nothing after it.
        let place = Placed::new(t_ms, id).filter(|_| parts.next().is_none())?;
        Some(Entry { place, status })
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
        let place = |t_ms, id| Placed::new(t_ms, id).unwrap();
        let a = Entry::new(
            place(1_800_000_000_000, 9_007_199_254_740_991),
            PetStatus::Sold,
        );
        let b = Entry::new(place(1_800_000_000_001, 5), PetStatus::Available);
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(a.key() < b.key(), "{} {}", a.key(), b.key());
        assert_eq!(Entry::parse(&a.key()), Some(a.clone()));
        assert_eq!(Entry::parse("ixr:1:2:sold"), None);
        let five = "ixr:0000000000001:0000000000000005:sold";
        assert_eq!(Entry::parse(five).map(|e| e.place().id()), Some(5));
        for bad in [
            "ixr:+000000000001:0000000000000005:sold",
            "ixr:-000000000001:0000000000000005:sold",
            "ixr:000000000001:0000000000000005:sold",
            "ixr:00000000000001:0000000000000005:sold",
            "ixr:0000000000001:+000000000000005:sold",
            "ixr:0000000000001:-000000000000005:sold",
            "ixr:0000000000001:000000000000005:sold",
            "ixr:0000000000001:00000000000000005:sold",
            "ixr:0000000000001:000000000000000a:sold",
            "ixr:0000000000001:0000000000000005:sold:x",
            "ixr:0000000000001:0000000000000000:sold",
        ] {
            assert_eq!(Entry::parse(bad), None, "{bad}");
        }
        assert_eq!(Entry::parse("pet:5"), None);
        let sold = ListName::Status(PetStatus::Sold);
        assert!(a.in_list(sold) && !b.in_list(sold) && b.in_list(ListName::All));
    }
}
