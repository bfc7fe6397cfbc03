//! A lane's head, `lane:{k}`: its last round, its counts of each status, and
//! that round's pet, which the lane's next create stores before it claims
//! the next round; and the heads of a store as one read found them.

use crate::errors::ApiError;
use crate::model::{Pet, PetStatus};

use super::geometry::Geometry;

use crate::catalogue::keys::{entry_key, head_key, pet_key};
use crate::catalogue::record::{encode_pet, first_line, persisted, unreadable};

/// `petstore-lane 1 <round> <available> <pending> <sold> <status> <id>
/// <nonce>`, a newline, the round's pet JSON.
const HEADER: &str = "petstore-lane 1 ";

/// The pet a head holds, made from the pet itself so that its id, status
/// and JSON agree; `nonce` names the create that claimed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    id: i64,
    status: PetStatus,
    nonce: u64,
    json: Vec<u8>,
}

impl Claimed {
    pub fn of(pet: &Pet, nonce: u64) -> Result<Claimed, ApiError> {
        let (id, status, json) = (pet.id, pet.status, encode_pet(pet)?);
        Ok(Claimed {
            id,
            status,
            nonce,
            json,
        })
    }

    pub fn id(&self) -> i64 {
        self.id
    }

    pub fn status(&self) -> PetStatus {
        self.status
    }

    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    pub fn json(&self) -> &[u8] {
        &self.json
    }
}

/// A lane's head: round 0 (no key yet) holds no pet. Read, or the next
/// round claimed from one, so that its counts and pet agree with its round;
/// or known only to be past a round (`past`: no counts, no pet).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head {
    round: u64,
    /// Pets of each status (in [`PetStatus::ALL`]'s order) in rounds 1 to
    /// `round`: the last one's position in its status's list of the lane.
    counts: [u64; 3],
    last: Option<Claimed>,
}

impl Head {
    pub fn round(&self) -> u64 {
        self.round
    }

    pub fn count(&self, status: PetStatus) -> u64 {
        self.counts[status as usize]
    }

    pub fn last(&self) -> Option<&Claimed> {
        self.last.as_ref()
    }

    pub fn into_last(self) -> Option<Claimed> {
        self.last
    }

    /// A head known only to be past `round`, its rounds up to it stored.
    pub fn past(round: u64) -> Head {
        Head {
            round,
            ..Head::default()
        }
    }

    pub fn decode(key: &str, value: Option<&[u8]>) -> Result<Head, ApiError> {
        let Some(bytes) = value else {
            return Ok(Head::default());
        };
        Head::parse(bytes).ok_or_else(|| unreadable(key))
    }

    fn parse(bytes: &[u8]) -> Option<Head> {
        let (meta, json) = first_line(bytes.strip_prefix(HEADER.as_bytes())?)?;
        let mut words = meta.split(' ');
        let mut number = || words.next()?.parse::<u64>().ok();
        let (round, counts) = (number()?, [number()?, number()?, number()?]);
        let status = PetStatus::parse(words.next()?)?;
        let id = words.next()?.parse().ok()?;
        let nonce = u64::from_str_radix(words.next()?, 16).ok()?;
        let sound = round >= 1 && counts[status as usize] >= 1 && words.next().is_none();
        let last = Some(Claimed {
            id,
            status,
            nonce,
            json: json.to_vec(),
        });
        sound.then_some(Head {
            round,
            counts,
            last,
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let Some(last) = &self.last else {
            return Vec::new();
        };
        let [a, p, s] = self.counts;
        let (round, status) = (self.round, last.status.as_str());
        let meta = format!(
            "{HEADER}{round} {a} {p} {s} {status} {} {:016x}\n",
            last.id, last.nonce
        );
        [meta.as_bytes(), &last.json].concat()
    }

    /// The head once `pet` claims the next round.
    pub fn next(&self, pet: Claimed) -> Head {
        let mut counts = self.counts;
        counts[pet.status as usize] += 1;
        Head {
            round: self.round + 1,
            counts,
            last: Some(pet),
        }
    }

    /// The writes that store its pet where every earlier round is:
    /// `pet:{id}` and its status entry, the same bytes whoever writes them.
    pub fn stored(&self, lane: usize) -> Option<[(String, Vec<u8>); 2]> {
        let last = self.last.as_ref()?;
        let position = self.count(last.status);
        Some([
            (pet_key(last.id), persisted(last.nonce, &last.json)),
            (entry_key(last.status, lane, position), last.json.clone()),
        ])
    }
}

/// A lanes store as one read found it: its geometry and each lane's head.
#[derive(Debug, Clone)]
pub struct Heads {
    geometry: Geometry,
    heads: Vec<Head>,
}

impl Heads {
    /// The keys of the heads of `width` lanes.
    pub fn keys(width: usize) -> impl Iterator<Item = String> {
        (0..width).map(head_key)
    }

    /// The heads `value` (what a `get-many` found; absent: round 0) holds.
    pub fn read<'v>(
        geometry: Geometry,
        value: impl Fn(&str) -> Option<&'v [u8]>,
    ) -> Result<Heads, ApiError> {
        let head = |k| Head::decode(&head_key(k), value(&head_key(k)));
        let heads = (0..geometry.width()).map(head).collect::<Result<_, _>>()?;
        Ok(Heads { geometry, heads })
    }

    /// Heads known only to be past round `stored` (a cursor's word).
    pub fn past(geometry: Geometry, stored: u64) -> Heads {
        let heads = vec![Head::past(stored); geometry.width()];
        Heads { geometry, heads }
    }

    /// Rounds every lane has stored: those below the least head's.
    pub fn stored_rounds(&self) -> u64 {
        self.heads
            .iter()
            .map(Head::round)
            .min()
            .unwrap_or(0)
            .saturating_sub(1)
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn head(&self, lane: usize) -> &Head {
        &self.heads[lane]
    }

    pub fn all(&self) -> &[Head] {
        &self.heads
    }

    /// A lane's head as read again.
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
        Claimed {
            id,
            status,
            nonce: 0xfeed,
            json: json.into_bytes(),
        }
    }

    #[test]
    fn a_head_round_trips_and_counts_each_status() {
        let head = Head::default()
            .next(claimed(1, PetStatus::Sold))
            .next(claimed(17, PetStatus::Available))
            .next(claimed(33, PetStatus::Sold));
        assert_eq!((head.round, head.counts), (3, [1, 0, 2]));
        let bytes = head.encode();
        assert!(bytes.starts_with(b"petstore-lane 1 3 1 0 2 sold 33 000000000000feed\n{"));
        assert_eq!(Head::decode("lane:0", Some(&bytes)).unwrap(), head);
        let [(pet, record), (entry, json)] = head.stored(0).unwrap();
        assert_eq!((pet.as_str(), entry.as_str()), ("pet:33", "sx:sold:0:2"));
        assert!(record.starts_with(b"petstore-pet 1 000000000000feed\n"));
        assert_eq!(json, head.last.unwrap().json);
        assert_eq!(Head::decode("lane:0", None).unwrap(), Head::default());
        assert!(Head::default().stored(0).is_none());
        for bad in [
            "petstore-lane 1 0 0 0 0 sold 1 0\n{}",
            "petstore-lane 1 1 0 0 0 sold 1 0\n{}",
            "x",
        ] {
            assert!(
                Head::decode("lane:0", Some(bad.as_bytes())).is_err(),
                "{bad}"
            );
        }
    }
}
