//! A lane's head, `lane:{k}`: its last round, its counts of each status, and that
//! round's pet, which its next create stores before claiming the next round.

use crate::errors::ApiError;
use crate::model::{Pet, PetStatus};

use crate::catalogue::keys::{entry_key, pet_key};
use crate::catalogue::record::{encode_pet, persisted, unreadable};

/// First words of a head: `petstore-lane 1 <round> <available> <pending>
/// <sold> <status> <id> <nonce>`, a newline, the round's pet JSON.
const HEAD_HEADER: &str = "petstore-lane 1 ";

/// The pet a head holds: its lane's last round. Made from the pet itself,
/// so that its id, status and JSON agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    id: i64,
    status: PetStatus,
    /// Drawn by the create that claimed it.
    nonce: u64,
    json: Vec<u8>,
}

impl Claimed {
    /// `pet`, claimed by the create named `nonce`.
    pub fn of(pet: &Pet, nonce: u64) -> Result<Claimed, ApiError> {
        Ok(Claimed {
            id: pet.id,
            status: pet.status,
            nonce,
            json: encode_pet(pet)?,
        })
    }

    pub fn id(&self) -> i64 {
        self.id
    }

    pub fn status(&self) -> PetStatus {
        self.status
    }

    /// The create that claimed it.
    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    /// The pet, as JSON.
    pub fn json(&self) -> &[u8] {
        &self.json
    }

    pub fn into_json(self) -> Vec<u8> {
        self.json
    }
}

/// A lane's head; round 0 (no key yet) holds no pet. Made by reading a
/// stored head or by claiming the next round of one, so that its counts
/// and its pet agree with its round; or, for the unfiltered list alone,
/// known only to be past a round (`past`: no counts, no pet).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head {
    round: u64,
    /// Pets of each status (in [`PetStatus::ALL`]'s order) in rounds 1 to
    /// `round`: the last one's position in its status's list of the lane.
    counts: [u64; 3],
    last: Option<Claimed>,
}

fn status_index(status: PetStatus) -> usize {
    match status {
        PetStatus::Available => 0,
        PetStatus::Pending => 1,
        PetStatus::Sold => 2,
    }
}

impl Head {
    /// The lane's last round claimed (0: none).
    pub fn round(&self) -> u64 {
        self.round
    }

    /// Pets of `status` in rounds 1 to the head's.
    pub fn count(&self, status: PetStatus) -> u64 {
        self.counts[status_index(status)]
    }

    /// The last round's pet, if a round was claimed.
    pub fn last(&self) -> Option<&Claimed> {
        self.last.as_ref()
    }

    /// The last round's pet, owned.
    pub fn into_last(self) -> Option<Claimed> {
        self.last
    }

    /// A head known only to be past `round`, whose rounds up to it are
    /// stored (a cursor says so): what the unfiltered list needs of it.
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
        let rest = bytes.strip_prefix(HEAD_HEADER.as_bytes())?;
        let line = rest.iter().position(|b| *b == b'\n')?;
        let meta = std::str::from_utf8(&rest[..line]).ok()?;
        let mut words = meta.split(' ');
        let mut number = || words.next()?.parse::<u64>().ok();
        let round = number()?;
        let counts = [number()?, number()?, number()?];
        let status = PetStatus::parse(words.next()?)?;
        let id = words.next()?.parse().ok()?;
        let nonce = u64::from_str_radix(words.next()?, 16).ok()?;
        let sound = round >= 1 && counts[status_index(status)] >= 1 && words.next().is_none();
        sound.then(|| Head {
            round,
            counts,
            last: Some(Claimed {
                id,
                status,
                nonce,
                json: rest[line + 1..].to_vec(),
            }),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let Some(last) = &self.last else {
            return Vec::new();
        };
        let [a, p, s] = self.counts;
        let mut out = format!(
            "{HEAD_HEADER}{} {a} {p} {s} {} {} {:016x}\n",
            self.round,
            last.status.as_str(),
            last.id,
            last.nonce
        )
        .into_bytes();
        out.extend_from_slice(&last.json);
        out
    }

    /// The head once `pet` claims the next round.
    pub fn next(&self, pet: Claimed) -> Head {
        let mut counts = self.counts;
        counts[status_index(pet.status)] += 1;
        Head {
            round: self.round + 1,
            counts,
            last: Some(pet),
        }
    }

    /// The writes that store the head's pet where every earlier round is:
    /// `pet:{id}` and its status entry. The same bytes whoever writes them.
    pub fn stored(&self, lane: usize) -> Option<[(String, Vec<u8>); 2]> {
        let last = self.last.as_ref()?;
        let position = self.counts[status_index(last.status)];
        Some([
            (pet_key(last.id), persisted(last.nonce, &last.json)),
            (entry_key(last.status, lane, position), last.json.clone()),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(id: i64, status: PetStatus) -> Claimed {
        Claimed {
            id,
            status,
            nonce: 0xfeed,
            json: format!(
                r#"{{"id":{id},"name":"a","categoryId":1,"status":"{}"}}"#,
                status.as_str()
            )
            .into_bytes(),
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
