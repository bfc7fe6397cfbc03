//! What `pet:{id}` holds: a pet's JSON (bare, or after a line naming its
//! create), a counters keyed create's pending record, or nothing.

use super::{created::Result, listed::Listed};
use crate::errors::ApiError;
use crate::model::{number, padded, Pet};

/// How long after it began a counters create may still commit (ms).
pub const COMMIT_WITHIN_MS: u64 = 20_000;
/// How long a reader waits before it gives a position up (ms): past any
/// commit, retries and clock drift included.
pub const SEAL_AFTER_MS: u64 = 60_000;

/// A counters keyed create's stage: [`Pending`].
pub(super) const PENDING: &str = "petstore-pending 1\n";
/// A pet record naming its create: [`persisted`], [`stamped`].
pub(super) const PERSISTED: &str = "petstore-pet 1 ";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PetRecord {
    Absent,
    Pending(Pending),
    /// With the nonce of its create (lanes; the edge build's to 2.0.0),
    /// none if bare or [`stamped`].
    Committed {
        json: Vec<u8>,
        nonce: Option<u64>,
    },
}

/// A counters keyed create's stage, `petstore-pending 1\n<position>
/// <start ms>\n<pet JSON>`; started at 0, a position given up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    position: i64,
    started_ms: u64,
    record: Vec<u8>,
}

impl Pending {
    /// A create's stage, begun at `started_ms` (a clock's: never 0, which
    /// says given up).
    pub fn new(position: i64, started_ms: u64, record: Vec<u8>) -> Pending {
        debug_assert!(started_ms > 0);
        Pending {
            position,
            started_ms,
            record,
        }
    }

    /// A position given up, its pet (`record`) withdrawn.
    pub fn given_up(position: i64, record: Vec<u8>) -> Pending {
        Pending {
            position,
            started_ms: 0,
            record,
        }
    }

    /// No pet will ever be stored there.
    pub fn void(position: i64) -> Pending {
        Pending::given_up(position, Vec::new())
    }

    pub fn started_ms(&self) -> u64 {
        self.started_ms
    }

    pub fn record(&self) -> &[u8] {
        &self.record
    }

    /// Whether its create may still commit it.
    pub fn finishable(&self, now_ms: u64, lease_ms: u64) -> bool {
        now_ms < self.started_ms.saturating_add(lease_ms + COMMIT_WITHIN_MS)
    }

    /// Whether readers give it up: no create commits it any more.
    pub fn dead(&self, now_ms: u64, lease_ms: u64) -> bool {
        now_ms >= self.dead_at_ms(lease_ms)
    }

    pub fn dead_at_ms(&self, lease_ms: u64) -> u64 {
        self.started_ms.saturating_add(lease_ms + SEAL_AFTER_MS)
    }

    pub fn encode(&self) -> Vec<u8> {
        let head = format!("{PENDING}{} {}\n", self.position, self.started_ms);
        [head.as_bytes(), &self.record].concat()
    }

    fn decode(bytes: &[u8]) -> Option<Pending> {
        let (line, record) = first_line(bytes.strip_prefix(PENDING.as_bytes())?)?;
        let (position, started) = line.split_once(' ')?;
        Some(Pending {
            position: number(position)?,
            started_ms: number(started)? as u64,
            record: record.to_vec(),
        })
    }
}

/// The first line of `bytes` as text, and what follows it.
pub fn first_line(bytes: &[u8]) -> Option<(&str, &[u8])> {
    let end = memchr::memchr(b'\n', bytes)?;
    Some((std::str::from_utf8(&bytes[..end]).ok()?, &bytes[end + 1..]))
}

/// The words of a record's first line after `header`, and what follows it.
pub fn words<'b>(bytes: &'b [u8], header: &str) -> Option<(Vec<&'b str>, &'b [u8])> {
    let (line, rest) = first_line(bytes.strip_prefix(header.as_bytes())?)?;
    Some((line.split(' ').collect(), rest))
}

pub fn encode_pet(pet: &Pet) -> Result<Vec<u8>> {
    serde_json::to_vec(pet).map_err(|e| ApiError::Internal(format!("cannot encode pet: {e}")))
}

/// A pet record naming its create: `petstore-pet 1 <nonce>\n<json>`.
pub fn persisted(nonce: u64, json: &[u8]) -> Vec<u8> {
    [format!("{PERSISTED}{nonce:016x}\n").as_bytes(), json].concat()
}

/// A replicated pet record (2.1.0): `petstore-pet 1 +<t>\n<json>`, its
/// create's time (13 digits) where a nonce was; 2.0.0 reads it as one (to
/// it `+` and digits are a hex number). A half a `set-many` left is mended
/// from it.
pub fn stamped(t_ms: u64, json: &[u8]) -> Vec<u8> {
    [format!("{PERSISTED}+{t_ms:013}\n").as_bytes(), json].concat()
}

/// The create's time and the JSON of a record [`stamped`] wrote, strictly:
/// `+` then 13 digits.
pub fn stamp(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (t, json) = first_line(bytes.strip_prefix(PERSISTED.as_bytes())?)?;
    Some((padded(t.strip_prefix('+')?, 13, 10)?, json))
}

impl PetRecord {
    pub fn of(key: &str, value: Option<Vec<u8>>) -> Result<PetRecord> {
        let Some(bytes) = value else {
            return Ok(PetRecord::Absent);
        };
        let committed = |json: &[u8], nonce| PetRecord::Committed {
            json: json.to_vec(),
            nonce,
        };
        // After the header, `+` is the stamped format's word (its create's
        // time, no nonce), read before any nonce: never a nonce itself.
        match bytes.strip_prefix(PERSISTED.as_bytes()) {
            Some([b'+', ..]) => stamp(&bytes).map(|(_, json)| committed(json, None)),
            Some(rest) => first_line(rest)
                .and_then(|(nonce, json)| Some(committed(json, Some(padded(nonce, 16, 16)?)))),
            None if bytes.starts_with(b"petstore-") => {
                Pending::decode(&bytes).map(PetRecord::Pending)
            }
            None => Some(PetRecord::Committed {
                json: bytes,
                nonce: None,
            }),
        }
        .ok_or_else(|| unreadable(key))
    }

    pub fn listed(self, key: &str) -> Result<Option<Listed>> {
        match self {
            PetRecord::Committed { json, .. } => listed(key, json).map(Some),
            _ => Ok(None),
        }
    }
}

/// A pet's stored JSON as a list holds it; an error if it is not one.
pub fn listed(key: &str, json: Vec<u8>) -> Result<Listed> {
    Listed::from_json(json).ok_or_else(|| unreadable(key))
}

/// `key` holds what no release wrote.
pub fn unreadable(key: &str) -> ApiError {
    ApiError::Internal(format!("stored value '{key}' is unreadable"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_reads_as_what_its_writer_meant() {
        let json = br#"{"id":3,"name":"a","categoryId":1,"status":"sold"}"#;
        let plain = PetRecord::of("pet:3", Some(json.to_vec())).unwrap();
        let named = PetRecord::of("pet:3", Some(persisted(0xabc, json))).unwrap();
        assert_eq!(
            (plain, named.clone()),
            (
                PetRecord::Committed {
                    json: json.to_vec(),
                    nonce: None
                },
                PetRecord::Committed {
                    json: json.to_vec(),
                    nonce: Some(0xabc)
                }
            )
        );
        let listed = named.listed("pet:3").unwrap().unwrap();
        assert_eq!(
            (listed.id(), listed.status()),
            (3, Some(crate::model::PetStatus::Sold))
        );
        let pending = Pending {
            position: 4,
            started_ms: 9,
            record: json.to_vec(),
        };
        assert_eq!(
            pending.encode(),
            [b"petstore-pending 1\n4 9\n".as_slice(), json].concat()
        );
        assert_eq!(
            PetRecord::of("pet:3", Some(pending.encode())).unwrap(),
            PetRecord::Pending(pending)
        );
        let void = PetRecord::of("pet:3", Some(Pending::void(4).encode())).unwrap();
        assert_eq!(void.listed("pet:3").unwrap(), None);
        assert!(PetRecord::of("pet:3", Some(b"{oops".to_vec()))
            .unwrap()
            .listed("pet:3")
            .is_err());
        // 2.1.0's replicated record: its time, never a nonce (2.0.0 read one).
        let at = stamped(1_800_000_000_123, json);
        assert_eq!(stamp(&at), Some((1_800_000_000_123, json.as_slice())));
        let early = stamped(5, json);
        assert!(early.starts_with(b"petstore-pet 1 +0000000000005\n"));
        assert_eq!(stamp(&early), Some((5, json.as_slice())));
        for record in [at, early] {
            let read = PetRecord::of("pet:3", Some(record)).unwrap();
            let (json, nonce) = (json.to_vec(), None);
            assert_eq!(read, PetRecord::Committed { json, nonce });
        }
        for bad in [
            "petstore-pet 1 +180000000012\n{}",
            "petstore-pet 1 +18000000001234\n{}",
            "petstore-pet 1 ++180000000012\n{}",
            "petstore-pet 1 +-180000000012\n{}",
            "petstore-pet 1 +00000000000feed\n{}",
            "petstore-pet 1 +\n{}",
            "petstore-pet 1 1800000000123\n{}",
        ] {
            assert_eq!(stamp(bad.as_bytes()), None, "{bad}");
        }
        for bad in [
            "petstore-pet 1 zz\n{}",
            "petstore-pet 1 +180000000012\n{}",
            "petstore-pet 1 +00000000000feed\n{}",
            "petstore-pet 1 +000000000000fee\n{}",
            "petstore-pet 1 -00000000000feed\n{}",
            "petstore-pet 1 abc\n{}",
            "petstore-pet 1 000000000000FEED\n{}",
            "petstore-pet 1 0000000000000feed\n{}",
            "petstore-pending 1\nx 1\n",
            "petstore-pending 1\n+5 1\n",
            "petstore-pending 1\n-1 1\n",
            "petstore-pending 1\n05 1\n",
            "petstore-pending 1\n5 +1\n",
            "petstore-pending 1\n5 01\n",
            "petstore-pending 1\n5 1 \n",
            "petstore-pet 2 1\n{}",
        ] {
            assert!(PetRecord::of("pet:3", Some(bad.into())).is_err(), "{bad}");
        }
        assert_eq!(PetRecord::of("pet:3", None).unwrap(), PetRecord::Absent);
    }
}
