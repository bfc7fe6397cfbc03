//! A create under an `Idempotency-Key`: exactly one pet per key, whatever
//! fails. How it stays so on every backend: docs/key-value-layout.md ("A
//! keyed create").
//!
//! One more key, `idem:{sha256 of the key, hex}`: a counter word, 0 (free)
//! or the id of the pet the key is bound to. Before it claims the word, a
//! create stages its slot and its intent in its own `pet:{id}` (a pending
//! record), so whoever finds the claim can finish the create with exactly
//! the write its owner would make. Safety never rests on clocks: the lease
//! only decides between answering 409 (the owner may still be at work) and
//! finishing.

use crate::errors::ApiError;
use crate::model::{IdempotencyKey, NewPet, Pet};
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use super::backend::{Batches, ClaimBy};
use super::keys::{decode_counter, encode_counter_like, record_key};
use super::pending::{Pending, PENDING_HEADER};
use super::record::{encode_pet, Catalogue, PetRecord};
use super::sequences::{Layout, Sequences};

/// The time a keyed create runs at, and how long an unfinished create
/// keeps its key to itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Now, in Unix milliseconds.
    pub now_ms: u64,
    pub lease_ms: u64,
}

/// How a create ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// This request created the pet (or finished an earlier attempt's create).
    Pet(Pet),
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
///
/// A store failure is [`ApiError::KeyedCreateUnavailable`], whose answer
/// tells the client to retry with the same key: that ends in exactly one pet
/// whatever this attempt left behind.
pub fn create<S: KvStore>(
    store: &Retrying<'_, S>,
    key: &IdempotencyKey,
    new: NewPet,
    lease: Lease,
    claim_by: ClaimBy,
) -> Result<Created, ApiError> {
    let keyed = KeyedCreate {
        store,
        record_key: record_key(key),
        new,
        lease,
        claim_by,
    };
    keyed.run().map_err(|e| match e {
        ApiError::StoreUnavailable(e) | ApiError::CreateOutcomeUnknown(e) => {
            ApiError::KeyedCreateUnavailable(e)
        }
        other => other,
    })
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

/// What a key's word holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Word {
    /// Absent (claimed by put-if-absent), or 0: no request holds the key.
    Free,
    /// Layout v2: the id of the pet the key is bound to.
    Bound(i64),
    /// Layout v3: the intent of the request that holds the key, a pending
    /// record whose position is the pet's id.
    Intent(Pending),
}

impl<'r, S: KvStore> KeyedCreate<'_, 'r, S> {
    /// Reads the key's word: free → lead the create; bound → follow it.
    fn run(&self) -> Result<Created, ApiError> {
        match self.claim_by {
            ClaimBy::Increment => match self.store.increment(&self.record_key, 0)? {
                0 => self.lead(None),
                bound => self.follow(bound),
            },
            ClaimBy::PutIfAbsent => {
                let (cas, current) = self.begin()?;
                match self.word(current.as_deref())? {
                    Word::Free => match self.catalogue().layout_for_create()? {
                        Layout::Sequences(sequences) => {
                            self.lead_sequenced(&sequences, (cas, current))
                        }
                        _ => self.lead(Some((cas, current))),
                    },
                    bound => self.follow_word(bound),
                }
            }
        }
    }

    fn catalogue(&self) -> Catalogue<'_, Retrying<'r, S>> {
        Catalogue::new(self.store)
    }

    /// The key is free: reserve, write the intent, claim, commit. `begun`:
    /// the compare-and-swap that read the word, which the claim then uses.
    fn lead(&self, begun: Option<Begun<S::Cas>>) -> Result<Created, ApiError> {
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
        match self.claim(Word::Bound(reserved.id), begun)? {
            Word::Bound(owner) if owner == reserved.id => {
                self.catalogue().commit_pet(reserved.id, &pending.record)?;
                Ok(Created::Pet(pet))
            }
            other => self.follow_word(other),
        }
    }

    /// Layout v3, the key is free: an id from the sequences, then the claim
    /// of the word with the whole intent (the id, when, the pet's JSON: a
    /// pending record), then the pet. No stage: whoever finds the claim can
    /// finish the create from the word itself, with the same `set`.
    fn lead_sequenced(
        &self,
        sequences: &Sequences,
        begun: Begun<S::Cas>,
    ) -> Result<Created, ApiError> {
        let id = self.catalogue().reserve_in(sequences)?;
        let pet = self.new.clone().into_pet(id);
        let intent = Pending {
            position: id,
            started_ms: self.lease.now_ms,
            record: encode_pet(&pet)?,
        };
        match self.claim(Word::Intent(intent.clone()), Some(begun))? {
            Word::Intent(won) if won == intent => {
                self.catalogue().commit_pet(id, &intent.record)?;
                Ok(Created::Pet(pet))
            }
            other => self.follow_word(other),
        }
    }

    /// Compare-and-swap of the word from free (0; or absent, claimed by
    /// [`ClaimBy::PutIfAbsent`]) to `ours`; returns what the word holds
    /// afterwards, read back unless the swap reported success (Spin's Redis
    /// reports a conflict after writing; a reply may be lost). A swap that
    /// did not land while the word is still free (on Redis a concurrent
    /// `increment` by 0 aborts the transaction; on DynamoDB it is a
    /// conflicting transaction, or a 1.2.0 instance creating the word at 0)
    /// is tried again under the retry policy.
    fn claim(&self, ours: Word, mut begun: Option<Begun<S::Cas>>) -> Result<Word, ApiError> {
        let mut failure = StoreError("the claim's swap did not land".into());
        let mut backoff = self.store.backoff();
        loop {
            let (cas, current) = match begun.take() {
                Some(begun) => begun,
                None => self.begin()?,
            };
            match self.word(current.as_deref())? {
                Word::Free => {}
                bound => return Ok(bound),
            }
            // An id in the counters' encoding (8 bytes on SQLite, text
            // elsewhere); a word claimed absent is text, as DynamoDB's
            // counters are. An intent (layout v3) as a pending record.
            let bytes = match (&ours, &current) {
                (Word::Bound(id), Some(seen)) => encode_counter_like(seen, *id),
                (Word::Bound(id), None) => id.to_string().into_bytes(),
                (Word::Intent(intent), _) => intent.encode(),
                (Word::Free, _) => return Err(ApiError::Internal("a claim of nothing".into())),
            };
            match self.store.cas_swap(cas, &bytes) {
                Ok(SwapReport::Swapped) => return Ok(ours),
                Ok(SwapReport::Conflict) => {}
                Err(e) => {
                    self.store.learn(&e, &mut backoff);
                    failure = e;
                }
            }
            let now = self.store.get(&self.record_key)?;
            match self.word(now.as_deref())? {
                Word::Free if backoff.wait() => continue,
                Word::Free => return Err(ApiError::StoreUnavailable(failure)),
                bound => return Ok(bound),
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
                Err(e) => {
                    self.store.learn(&e, &mut backoff);
                    if !backoff.wait() {
                        return Err(ApiError::StoreUnavailable(e));
                    }
                }
            }
        }
    }

    /// What the word holds. Absent is free only where the word is claimed
    /// by put-if-absent: elsewhere `increment` created it before anything
    /// reads it.
    fn word(&self, word: Option<&[u8]>) -> Result<Word, ApiError> {
        match word {
            None if self.claim_by == ClaimBy::PutIfAbsent => Ok(Word::Free),
            None => Err(self.vanished()),
            Some(bytes) if bytes.starts_with(PENDING_HEADER.as_bytes()) => Pending::decode(bytes)
                .map(Word::Intent)
                .ok_or_else(|| self.unreadable()),
            Some(bytes) => Ok(match self.decode(bytes)? {
                0 => Word::Free,
                id => Word::Bound(id),
            }),
        }
    }

    fn unreadable(&self) -> ApiError {
        ApiError::Internal(format!("stored value '{}' is unreadable", self.record_key))
    }

    fn vanished(&self) -> ApiError {
        ApiError::Internal(format!("{} vanished after its increment", self.record_key))
    }

    fn decode(&self, word: &[u8]) -> Result<i64, ApiError> {
        decode_counter(word)
            .filter(|id| *id >= 0)
            .ok_or_else(|| self.unreadable())
    }

    /// The key is bound: to an id (layout v2), or by an intent (layout v3).
    fn follow_word(&self, word: Word) -> Result<Created, ApiError> {
        match word {
            Word::Bound(id) => self.follow(id),
            Word::Intent(intent) => self.follow_intent(intent),
            Word::Free => Err(ApiError::Internal("followed a free key".into())),
        }
    }

    /// Layout v3, the key is bound by another request's intent: another
    /// pet → 422; the pet stored → replay; not yet, within the lease → 409,
    /// after it → commit the intent's pet, the `set` its owner would make.
    fn follow_intent(&self, intent: Pending) -> Result<Created, ApiError> {
        let id = intent.position;
        let expected = encode_pet(&self.new.clone().into_pet(id))?;
        if intent.record != expected {
            return Err(ApiError::IdempotencyKeyReused);
        }
        match self.catalogue().record(id)? {
            PetRecord::Committed(body) if body == expected => Ok(Created::Replayed { id, body }),
            PetRecord::Committed(_) | PetRecord::Pending(_) => Err(ApiError::Internal(format!(
                "{} names pet {id}, whose record is not its intent's",
                self.record_key
            ))),
            PetRecord::Absent => {
                self.within_lease(intent.started_ms)?;
                self.catalogue().commit_pet(id, &expected)?;
                Ok(Created::Pet(self.new.clone().into_pet(id)))
            }
        }
    }

    /// 409 while a create that began at `started_ms` may still be at work.
    fn within_lease(&self, started_ms: u64) -> Result<(), ApiError> {
        let ends = started_ms.saturating_add(self.lease.lease_ms);
        if self.lease.now_ms < ends {
            let wait_ms = ends - self.lease.now_ms;
            return Err(ApiError::IdempotencyKeyInUse {
                retry_after_seconds: wait_ms.div_ceil(1000).max(1),
            });
        }
        Ok(())
    }

    /// The key is bound to pet `id`: replay it, refuse another request, or
    /// finish a create whose owner stopped before its commit.
    fn follow(&self, id: i64) -> Result<Created, ApiError> {
        let expected = encode_pet(&self.new.clone().into_pet(id))?;
        match self.catalogue().record(id)? {
            PetRecord::Committed(body) if body == expected => Ok(Created::Replayed { id, body }),
            PetRecord::Committed(_) => Err(ApiError::IdempotencyKeyReused),
            PetRecord::Pending(pending) if pending.record != expected => {
                Err(ApiError::IdempotencyKeyReused)
            }
            PetRecord::Pending(pending) => {
                self.within_lease(pending.started_ms)?;
                // The owner's own commit, byte for byte: if the owner is not
                // dead but late, its commit changes nothing after this one.
                self.catalogue().commit_pet(id, &pending.record)?;
                Ok(Created::Pet(self.new.clone().into_pet(id)))
            }
            // The claim is made only after the pending record was written.
            PetRecord::Absent => Err(ApiError::Internal(format!(
                "{} names pet {id}, which has no record",
                self.record_key
            ))),
        }
    }
}
