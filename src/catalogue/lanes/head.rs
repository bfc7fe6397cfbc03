//! A lane's head, `lane:{k}`: its last round, its counts of each status, and
//! that round's pet, stored by the lane's next create; and a store's heads.

use super::geometry::Geometry;
use crate::catalogue::record::{encode_pet, persisted, unreadable, words};
use crate::catalogue::{created::Result, keys::entry_key, keys::head_key, keys::pet_key};
use crate::model::{number, padded, Pet, PetStatus};

const HEADER: &str = Heads::HEADER;

/// A head's pet, made from the pet so that id, status and JSON agree, and
/// the nonce of its create: id, status, nonce, JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed(i64, PetStatus, u64, Vec<u8>);

impl Claimed {
    pub fn of(pet: &Pet, nonce: u64) -> Result<Claimed> {
        Ok(Claimed(pet.id, pet.status, nonce, encode_pet(pet)?))
    }

    pub fn id(&self) -> i64 {
        self.0
    }

    pub fn status(&self) -> PetStatus {
        self.1
    }

    pub fn nonce(&self) -> u64 {
        self.2
    }

    pub fn json(&self) -> &[u8] {
        &self.3
    }
}

/// A lane's head: its round, the pets of each status up to it (the last's
/// position in its list), that round's pet. Read, or claimed from one, so
/// that they agree; or known only to be past a round (`Heads::past`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head(u64, [u64; 3], Option<Claimed>);

impl Head {
    pub fn round(&self) -> u64 {
        self.0
    }

    pub fn count(&self, status: PetStatus) -> u64 {
        self.1[status as usize]
    }

    pub fn last(&self) -> Option<&Claimed> {
        self.2.as_ref()
    }

    pub fn decode(key: &str, value: Option<&[u8]>) -> Result<Head> {
        let Some(bytes) = value else {
            return Ok(Head::default());
        };
        Head::parse(bytes).ok_or_else(|| unreadable(key))
    }

    fn parse(bytes: &[u8]) -> Option<Head> {
        let (words, json) = words(bytes, HEADER)?;
        let [round, a, p, s, status, id, nonce] = words[..] else {
            return None;
        };
        let count = |word: &str| Some(number(word)? as u64);
        let (round, counts) = (count(round)?, [count(a)?, count(p)?, count(s)?]);
        let status = PetStatus::parse(status)?;
        let (id, nonce) = (number(id)?, padded(nonce, 16, 16)?);
        let pet = Claimed(id, status, nonce, json.to_vec());
        let sound = round >= 1 && counts[status as usize] >= 1;
        sound.then_some(Head(round, counts, Some(pet)))
    }

    pub fn encode(&self) -> Vec<u8> {
        let Some(Claimed(id, status, nonce, json)) = &self.2 else {
            return Vec::new();
        };
        let (round, [a, p, s], status) = (self.0, self.1, status.as_str());
        let meta = format!("{HEADER}{round} {a} {p} {s} {status} {id} {nonce:016x}\n");
        [meta.as_bytes(), json].concat()
    }

    pub fn next(&self, pet: Claimed) -> Head {
        let mut counts = self.1;
        counts[pet.1 as usize] += 1;
        Head(self.0 + 1, counts, Some(pet))
    }

    /// Its pet stored where earlier rounds are, the same bytes by anyone.
    pub fn stored(&self, lane: usize) -> Option<[(String, Vec<u8>); 2]> {
        let last = self.last()?;
        let position = self.count(last.1);
        Some([
            (pet_key(last.0), persisted(last.2, &last.3)),
            (entry_key(last.1, lane, position), last.3.clone()),
        ])
    }
}

/// A lanes store as one read found it.
#[derive(Debug, Clone)]
pub struct Heads {
    geometry: Geometry,
    heads: Vec<Head>,
}

impl Heads {
    /// A head's format (here, where `formats.rs` reads it): `petstore-lane 1
    /// <round> <available> <pending> <sold> <status> <id> <nonce>`, a
    /// newline, the round's pet JSON.
    pub const HEADER: &'static str = "petstore-lane 1 ";

    pub fn keys(width: usize) -> impl Iterator<Item = String> {
        (0..width).map(head_key)
    }

    /// The heads a `get-many` found (absent: round 0).
    pub fn read<'v>(geometry: Geometry, value: impl Fn(&str) -> Option<&'v [u8]>) -> Result<Heads> {
        let head = |k| Head::decode(&head_key(k), value(&head_key(k)));
        let heads = (0..geometry.width()).map(head).collect::<Result<_, _>>()?;
        Ok(Heads { geometry, heads })
    }

    pub fn past(geometry: Geometry, stored: u64) -> Heads {
        let heads = vec![Head(stored, [0; 3], None); geometry.width()];
        Heads { geometry, heads }
    }

    /// Rounds every lane has stored: those below the least head's.
    pub fn stored_rounds(&self) -> u64 {
        let least = self.heads.iter().map(Head::round).min();
        least.unwrap_or(0).saturating_sub(1)
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn all(&self) -> &[Head] {
        &self.heads
    }

    pub fn set(&mut self, lane: usize, head: Head) {
        self.heads[lane] = head;
    }

    pub fn rounds(&self) -> Vec<u64> {
        self.heads.iter().map(Head::round).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(id: i64, status: PetStatus) -> Claimed {
        let json = format!(
            r#"{{"id":{id},"name":"a","categoryId":1,"status":"{}"}}"#,
            status.as_str()
        );
        Claimed(id, status, 0xfeed, json.into_bytes())
    }

    #[test]
    fn a_head_round_trips_and_counts_each_status() {
        let head = Head::default()
            .next(claimed(1, PetStatus::Sold))
            .next(claimed(17, PetStatus::Available))
            .next(claimed(33, PetStatus::Sold));
        assert_eq!((head.0, head.1), (3, [1, 0, 2]));
        let bytes = head.encode();
        assert!(bytes.starts_with(b"petstore-lane 1 3 1 0 2 sold 33 000000000000feed\n{"));
        assert_eq!(Head::decode("lane:0", Some(&bytes)).unwrap(), head);
        let [(pet, record), (entry, json)] = head.stored(0).unwrap();
        assert_eq!((pet.as_str(), entry.as_str()), ("pet:33", "sx:sold:0:2"));
        assert!(record.starts_with(b"petstore-pet 1 000000000000feed\n"));
        assert_eq!(json, head.2.unwrap().3);
        assert_eq!(Head::decode("lane:0", None).unwrap(), Head::default());
        assert!(Head::default().stored(0).is_none());
        let good = "3 1 0 2 sold 33 000000000000feed";
        assert!(Head::parse(format!("{HEADER}{good}\n{{}}").as_bytes()).is_some());
        for bad in [
            "petstore-lane 1 0 0 0 0 sold 1 000000000000feed\n{}",
            "petstore-lane 1 1 0 0 0 sold 1 000000000000feed\n{}",
            "x",
        ]
        .map(String::from)
        .into_iter()
        .chain(
            [
                "+3 1 0 2 sold 33 000000000000feed",
                "03 1 0 2 sold 33 000000000000feed",
                "3 1 0 -2 sold 33 000000000000feed",
                "3 01 0 2 sold 33 000000000000feed",
                "3 1 0 2 sold +33 000000000000feed",
                "3 1 0 2 sold 033 000000000000feed",
                "3 1 0 2 sold 33 +00000000000feed",
                "3 1 0 2 sold 33 feed",
                "3 1 0 2 sold 33 0000000000000feed",
                "3 1 0 2 sold 33 000000000000FEED",
            ]
            .map(|words| format!("{HEADER}{words}\n{{}}")),
        ) {
            assert!(
                Head::decode("lane:0", Some(bad.as_bytes())).is_err(),
                "{bad}"
            );
        }
    }
}
