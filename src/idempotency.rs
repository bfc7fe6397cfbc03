//! Safe retries of createPet: the `Idempotency-Key` header (as in
//! draft-ietf-httpapi-idempotency-key-header), parsed at the boundary, and
//! the keyed create over the catalogue.
//!
//! One more key per keyed create, `idem:{sha256 of the key, hex}`: a counter
//! word, 0 (free) or the id of the pet the key is bound to. It is created by
//! `increment` (atomic on every backend) and claimed by compare-and-swap on
//! the then existing key, decided by reading back. Before it claims, a create
//! stages its slot and its intent in its own `pet:{id}` (a pending record:
//! position, start time, the pet's JSON), so whoever finds the claim can
//! finish the create with exactly the write its owner would make. Nothing
//! depends on clocks or on a lease for safety: the lease only decides
//! between answering 409 (the owner may still be at work) and finishing.

use sha2::{Digest, Sha256};

use crate::catalogue::{
    decode_counter, encode_counter_like, encode_pet, Batches, Catalogue, Pending, PetRecord,
};
use crate::errors::ApiError;
use crate::model::{NewPet, Pet};
use crate::request::Request;
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

/// The request header (lower-case, as the core sees names).
pub const HEADER: &str = "idempotency-key";
/// The longest key, without the quotes of the quoted form.
pub const MAX_KEY_LEN: usize = 255;
/// Default of the Spin variable `idempotency_lease_ms` (spin.toml).
pub const DEFAULT_LEASE_MS: u64 = 10_000;
/// The longest lease an operator may set: one hour.
pub const MAX_LEASE_MS: u64 = 3_600_000;

/// `idempotency_lease_ms`: milliseconds, 1 to one hour.
pub fn parse_lease_ms(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| (1..=MAX_LEASE_MS).contains(ms))
        .ok_or_else(|| format!("'{text}' is not a number of milliseconds from 1 to {MAX_LEASE_MS}"))
}
/// Key prefix of the records.
pub const RECORD_PREFIX: &str = "idem";

/// A valid `Idempotency-Key`, kept only as its SHA-256: the store sees no
/// client text, so every backend's key rules hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    digest: [u8; 32],
}

impl IdempotencyKey {
    /// The request's key: none without the header; a 400 `invalid_header`
    /// for a repeated header or a value that is not 1–255 visible ASCII
    /// characters (no `"` or `\`), bare or inside one pair of double quotes.
    pub fn from_request(request: &Request) -> Result<Option<IdempotencyKey>, ApiError> {
        let mut values = request.header_values(HEADER);
        let Some(value) = values.next() else {
            return Ok(None);
        };
        if values.next().is_some() {
            return Err(invalid("it must be sent once"));
        }
        IdempotencyKey::parse(value).map(Some)
    }

    pub fn parse(value: &[u8]) -> Result<IdempotencyKey, ApiError> {
        let key = value
            .strip_prefix(b"\"")
            .and_then(|v| v.strip_suffix(b"\""))
            .unwrap_or(value);
        if key.is_empty() || key.len() > MAX_KEY_LEN {
            return Err(invalid("it must be 1 to 255 characters long"));
        }
        let allowed = |b: &u8| b.is_ascii_graphic() && *b != b'"' && *b != b'\\';
        if !key.iter().all(allowed) {
            return Err(invalid(
                "it may only hold visible ASCII characters other than '\"' and '\\', \
                 optionally inside one pair of double quotes",
            ));
        }
        Ok(IdempotencyKey {
            digest: Sha256::digest(key).into(),
        })
    }

    /// `idem:{hex digest}`.
    pub fn record_key(&self) -> String {
        let mut key = String::with_capacity(RECORD_PREFIX.len() + 65);
        key.push_str(RECORD_PREFIX);
        key.push(':');
        for byte in self.digest {
            key.push_str(&format!("{byte:02x}"));
        }
        key
    }
}

fn invalid(why: &str) -> ApiError {
    ApiError::InvalidHeader(format!("header 'Idempotency-Key' is not valid: {why}"))
}

/// The time a keyed create runs at, and how long an unfinished create
/// keeps its key to itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Now, in Unix milliseconds.
    pub now_ms: u64,
    pub lease_ms: u64,
}

/// How a keyed create reads and claims its key's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimBy {
    /// `increment` by 0 reads the word, creating it at 0 (atomic on every
    /// backend); the claim is a compare-and-swap from 0 on the then
    /// existing key. SQLite (where a compare-and-swap on an absent key is an
    /// upsert) and Redis.
    Increment,
    /// The compare-and-swap that will claim the word reads it (`current`):
    /// absent or 0 is free, and the claim is its `swap`, conditioned on what
    /// `current` saw, absence included: an atomic put-if-absent on DynamoDB.
    /// One call (one round trip) fewer than `Increment`, new key or replay.
    PutIfAbsent,
}

/// How a keyed create ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keyed {
    /// This request created the pet (or finished an earlier attempt's create).
    Created(Pet),
    /// The key's pet already existed: its stored JSON, byte for byte.
    Replayed { id: i64, body: Vec<u8> },
}

/// Creates `new` once per `key`. Calls, when the key is new: the read of
/// its word (`increment` by 0, creating it at 0; or, [`ClaimBy::PutIfAbsent`],
/// a compare-and-swap's `new` and `current`), the two `increment`s of a
/// create, one `set-many` (the slot and the pending record), the claim (a
/// compare-and-swap's `new` + `current`, unless the read began it, and its
/// `swap`; read back unless the swap reported success), and one `set` (the
/// pet over its pending record). A replay: the read of the word and one `get`.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    key: &IdempotencyKey,
    new: NewPet,
    lease: Lease,
    claim_by: ClaimBy,
) -> Result<Keyed, ApiError> {
    let keyed = KeyedCreate {
        store,
        record_key: key.record_key(),
        new,
        lease,
        claim_by,
    };
    match claim_by {
        ClaimBy::Increment => match store.increment(&keyed.record_key, 0)? {
            0 => keyed.lead(None),
            bound => keyed.follow(bound),
        },
        ClaimBy::PutIfAbsent => {
            let (cas, current) = keyed.begin()?;
            match keyed.owner(current.as_deref())? {
                None => keyed.lead(Some((cas, current))),
                Some(bound) => keyed.follow(bound),
            }
        }
    }
}

struct KeyedCreate<'s, 'r, S: KvStore> {
    store: &'s Retrying<'r, S>,
    record_key: String,
    new: NewPet,
    lease: Lease,
    claim_by: ClaimBy,
}

/// A compare-and-swap begun on the key's word, and what it saw.
type Begun<C> = (C, Option<Vec<u8>>);

impl<'r, S: KvStore> KeyedCreate<'_, 'r, S> {
    fn catalogue(&self) -> Catalogue<'_, Retrying<'r, S>> {
        Catalogue::new(self.store)
    }

    /// The key is free: reserve, write the intent, claim, commit. `begun`:
    /// the compare-and-swap that read the word, which the claim then uses.
    fn lead(&self, begun: Option<Begun<S::Cas>>) -> Result<Keyed, ApiError> {
        let reserved = self.catalogue().reserve(self.new.status)?;
        let pet = self.new.clone().into_pet(reserved.id);
        let pending = Pending {
            position: reserved.position,
            started_ms: self.lease.now_ms,
            record: encode_pet(&pet)?,
        };
        // Staged: the slot and the pending record, both new keys in one
        // set-many, on every backend: a pending record is no pet, and the
        // claim comes only once both are stored (read back if the batch
        // failed). A failure from here until the claim leaves them behind: a
        // hole in the lists, never a pet.
        self.catalogue()
            .commit(reserved, pet.status, &pending.encode(), Batches::Atomic)?;
        match self.claim(reserved.id, begun)? {
            owner if owner == reserved.id => {
                self.catalogue()
                    .commit_staged(reserved.id, &pending.record)?;
                Ok(Keyed::Created(pet))
            }
            other => self.follow(other),
        }
    }

    /// Compare-and-swap of the word from free (0; or absent, claimed by
    /// [`ClaimBy::PutIfAbsent`]) to `id`; returns the id the word holds
    /// afterwards, read back unless the swap reported success (Spin's Redis
    /// reports a conflict after writing; a reply may be lost). A swap that
    /// did not land while the word is still free (on Redis a concurrent
    /// `increment` by 0 aborts the transaction; on DynamoDB it is a
    /// conflicting transaction, or a 1.2.0 instance creating the word at 0)
    /// is tried again under the retry policy.
    fn claim(&self, id: i64, mut begun: Option<Begun<S::Cas>>) -> Result<i64, ApiError> {
        let mut failure = StoreError("the claim's swap did not land".into());
        let mut backoff = self.store.backoff();
        loop {
            let (cas, current) = match begun.take() {
                Some(begun) => begun,
                None => self.begin()?,
            };
            if let Some(owner) = self.owner(current.as_deref())? {
                return Ok(owner);
            }
            // In the counters' encoding (8 bytes on SQLite, text elsewhere);
            // a word claimed absent is text, as DynamoDB's counters are.
            let word = match &current {
                Some(seen) => encode_counter_like(seen, id),
                None => id.to_string().into_bytes(),
            };
            match self.store.cas_swap(cas, &word) {
                Ok(SwapReport::Swapped) => return Ok(id),
                Ok(SwapReport::Conflict) => {}
                Err(e) => failure = e,
            }
            let now = self.store.get(&self.record_key)?;
            match self.owner(now.as_deref())? {
                None if backoff.wait() => continue,
                None => return Err(ApiError::StoreUnavailable(failure)),
                Some(owner) => return Ok(owner),
            }
        }
    }

    /// Begins a compare-and-swap on the word: its `new` and `current`,
    /// tried again under the retry policy when they fail.
    fn begin(&self) -> Result<Begun<S::Cas>, ApiError> {
        let mut backoff = self.store.backoff();
        loop {
            match self.store.cas_begin(&self.record_key) {
                Ok(begun) => return Ok(begun),
                Err(_) if backoff.wait() => continue,
                Err(e) => return Err(ApiError::StoreUnavailable(e)),
            }
        }
    }

    /// The pet the word binds the key to; `None` while it is free. Absent is
    /// free only where the word is claimed by put-if-absent: elsewhere
    /// `increment` created it before anything reads it.
    fn owner(&self, word: Option<&[u8]>) -> Result<Option<i64>, ApiError> {
        match word {
            None if self.claim_by == ClaimBy::PutIfAbsent => Ok(None),
            None => Err(self.vanished()),
            Some(word) => Ok(Some(self.decode(word)?).filter(|id| *id != 0)),
        }
    }

    fn vanished(&self) -> ApiError {
        ApiError::Internal(format!("{} vanished after its increment", self.record_key))
    }

    fn decode(&self, word: &[u8]) -> Result<i64, ApiError> {
        decode_counter(word).filter(|id| *id >= 0).ok_or_else(|| {
            ApiError::Internal(format!("stored value '{}' is unreadable", self.record_key))
        })
    }

    /// The key is bound to pet `id`: replay it, refuse another request, or
    /// finish a create whose owner stopped before its commit.
    fn follow(&self, id: i64) -> Result<Keyed, ApiError> {
        let expected = encode_pet(&self.new.clone().into_pet(id))?;
        match self.catalogue().record(id)? {
            PetRecord::Committed(body) if body == expected => Ok(Keyed::Replayed { id, body }),
            PetRecord::Committed(_) => Err(ApiError::IdempotencyKeyReused),
            PetRecord::Pending(pending) if pending.record != expected => {
                Err(ApiError::IdempotencyKeyReused)
            }
            PetRecord::Pending(pending) => {
                let ends = pending.started_ms.saturating_add(self.lease.lease_ms);
                if self.lease.now_ms < ends {
                    let wait_ms = ends - self.lease.now_ms;
                    return Err(ApiError::IdempotencyKeyInUse {
                        retry_after_seconds: wait_ms.div_ceil(1000).max(1),
                    });
                }
                // The owner's own commit, byte for byte: if the owner is not
                // dead but late, its commit changes nothing after this one.
                self.catalogue().commit_staged(id, &pending.record)?;
                Ok(Keyed::Created(self.new.clone().into_pet(id)))
            }
            // The claim is made only after the pending record was written.
            PetRecord::Absent => Err(ApiError::Internal(format!(
                "{} names pet {id}, which has no record",
                self.record_key
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_default_is_spin_tomls() {
        let manifest = include_str!("../spin.toml");
        let declared = format!(r#"idempotency_lease_ms = {{ default = "{DEFAULT_LEASE_MS}" }}"#);
        assert!(manifest.contains(&declared), "{declared}");
        assert_eq!(
            parse_lease_ms(&DEFAULT_LEASE_MS.to_string()),
            Ok(DEFAULT_LEASE_MS)
        );
    }

    #[test]
    fn quoted_and_bare_forms_are_the_same_key() {
        let bare = IdempotencyKey::parse(b"abc-123").unwrap();
        assert_eq!(IdempotencyKey::parse(b"\"abc-123\"").unwrap(), bare);
        assert_ne!(IdempotencyKey::parse(b"abc-124").unwrap(), bare);
        let key = bare.record_key();
        assert_eq!(key.len(), 4 + 1 + 64);
        assert!(key.starts_with("idem:"));
        // SHA-256("abc-123"), so the layout is stable across releases.
        assert_eq!(
            key,
            "idem:5942d94f524882e0f29bf0a1e5a6dcc952eea1c0c21dd3588a3fc7db9716db0c"
        );
    }

    #[test]
    fn keys_out_of_the_allowed_set_are_invalid_headers() {
        let long = "k".repeat(MAX_KEY_LEN + 1);
        let longest = "k".repeat(MAX_KEY_LEN);
        assert!(IdempotencyKey::parse(longest.as_bytes()).is_ok());
        assert!(IdempotencyKey::parse(format!("\"{longest}\"").as_bytes()).is_ok());
        for bad in [
            &b""[..],
            b"\"\"",
            long.as_bytes(),
            b"a b",
            b"a\"b",
            b"\"ab",
            b"a\\b",
            b"caf\xc3\xa9",
            b"tab\t",
        ] {
            let e = IdempotencyKey::parse(bad).unwrap_err();
            assert_eq!(e.code(), "invalid_header", "{bad:?}");
            assert!(e.message().contains("Idempotency-Key"));
        }
    }
}
