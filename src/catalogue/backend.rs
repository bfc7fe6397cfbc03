//! Spin's key-value backends, and what each decides in the catalogue: how a
//! create commits, how a page reads, how a keyed create claims, how failed
//! calls are retried. Why each differs: docs/spin-platform.md.

use crate::retry::{Escalation, Policy};
use crate::store::{KvStore, StoreError};

/// What the backend's `set-many` promises (the `key_value_backend` variable
/// says which backend holds the store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batches {
    /// All or nothing: Spin's SQLite and Redis backends.
    Atomic,
    /// Any part, in any order: Spin's DynamoDB (BatchWriteItem) and Azure
    /// Cosmos DB backends.
    Unordered,
}

/// How a page reads, chosen by the backend the store is declared to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// One `get` per key: SQLite (each call is local) and Redis (whose
    /// `get-many` fails every request on Spin 4).
    OneByOne,
    /// Keys fetched ahead with `get-many`: DynamoDB, where each call is a
    /// round trip to a remote store.
    Batched,
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

/// Which of Spin's key-value backends holds the `default` store, named as
/// the runtime config's `type` names it (the variable `key_value_backend`).
/// The commit of a create depends on what their `set-many` promises, and a
/// page's reads on whether `get-many` works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvBackend {
    /// `spin`: SQLite, `spin up`'s default.
    Spin,
    Redis,
    AwsDynamo,
    AzureCosmos,
}

impl KvBackend {
    pub const ALL: [KvBackend; 4] = [
        KvBackend::Spin,
        KvBackend::Redis,
        KvBackend::AwsDynamo,
        KvBackend::AzureCosmos,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KvBackend::Spin => "spin",
            KvBackend::Redis => "redis",
            KvBackend::AwsDynamo => "aws_dynamo",
            KvBackend::AzureCosmos => "azure_cosmos",
        }
    }

    pub fn parse(text: &str) -> Result<KvBackend, String> {
        let text = text.trim();
        KvBackend::ALL
            .into_iter()
            .find(|b| b.name() == text)
            .ok_or_else(|| format!("'{text}' is not one of spin, redis, aws_dynamo, azure_cosmos"))
    }

    /// One SQLite transaction, one Redis `MSET`; a `BatchWriteItem` on
    /// DynamoDB, a loop of writes on Cosmos DB.
    pub fn batches(self) -> Batches {
        match self {
            KvBackend::Spin | KvBackend::Redis => Batches::Atomic,
            KvBackend::AwsDynamo | KvBackend::AzureCosmos => Batches::Unordered,
        }
    }

    /// How a page reads: in batches (`get-many`) only where it works and a
    /// call is a round trip to a remote store, DynamoDB. Never on Redis
    /// (Spin's `get-many` there fails the request); Cosmos DB's is untried.
    pub fn reads(self) -> Reads {
        match self {
            KvBackend::AwsDynamo => Reads::Batched,
            KvBackend::Spin | KvBackend::Redis | KvBackend::AzureCosmos => Reads::OneByOne,
        }
    }

    /// How a keyed create claims its key: by put-if-absent where a
    /// compare-and-swap on an absent key is atomic (DynamoDB), one round
    /// trip fewer; elsewhere its word is created by `increment` first (on
    /// SQLite such a compare-and-swap is an upsert; Cosmos DB's is untried).
    pub fn claim_by(self) -> ClaimBy {
        match self {
            KvBackend::AwsDynamo => ClaimBy::PutIfAbsent,
            KvBackend::Spin | KvBackend::Redis | KvBackend::AzureCosmos => ClaimBy::Increment,
        }
    }

    /// How a create's failed calls are retried: at length where concurrent
    /// increments conflict (DynamoDB; Cosmos DB's patch does not conflict,
    /// but its failures are as remote), briefly where a failure is an
    /// outage.
    pub fn retry_policy(self) -> Policy {
        match self {
            KvBackend::Spin | KvBackend::Redis => Policy::BRIEF,
            KvBackend::AwsDynamo | KvBackend::AzureCosmos => Policy::CONTENDED,
        }
    }

    /// Why the store contradicts this declaration, if it does: SQLite and
    /// Redis take an empty key, DynamoDB and Cosmos DB refuse it (one `get`).
    /// A DynamoDB store declared SQLite or Redis would commit creates as if
    /// its batches were atomic; a Redis store declared DynamoDB would have
    /// its pages call `get-many`, which fails every request there.
    pub fn contradicted_by<S: KvStore>(self, store: &S) -> Option<&'static str> {
        match self {
            KvBackend::Spin | KvBackend::Redis if store.get("").is_err() => Some(
                "the store rejects an empty key, as DynamoDB and Cosmos DB do: \
                 set it to the runtime config's type (aws_dynamo, azure_cosmos)",
            ),
            KvBackend::AwsDynamo if store.get("").is_ok() => Some(
                "the store takes an empty key, as SQLite and Redis do and DynamoDB \
                 does not: set it to the runtime config's type (spin, redis)",
            ),
            _ => None,
        }
    }
}

/// Whether a failed call says the store is DynamoDB: its conditional write
/// lost a race (`TransactionCanceledException … ConditionalCheckFailed`, or
/// a conflicting transaction), which Spin's `aws_dynamo` backend reports
/// from a contended `increment` and no other backend can.
pub fn shows_dynamodb(failure: &StoreError) -> bool {
    [
        "ConditionalCheckFailed",
        "TransactionCanceled",
        "TransactionConflict",
    ]
    .iter()
    .any(|name| failure.0.contains(name))
}

/// For a store declared SQLite or Redis (`spin` is the default, so also
/// one not declared at all): the moment a call shows it is DynamoDB, take
/// DynamoDB's retry policy, so that contended creates still succeed.
pub const UNDECLARED_DYNAMODB: Escalation = Escalation {
    name: "DynamoDB",
    shows: shows_dynamodb,
    policy: Policy::CONTENDED,
};

/// Whether a failed call says SQLite's file is locked by another process
/// (two `spin up` on one file): a write that had read inside its
/// transaction (Spin's `increment`, and a compare-and-swap's swap of an
/// absent key) is refused at once, without SQLite's busy wait, to break a
/// deadlock. It was rolled back; the next attempt most often wins.
pub fn shows_sqlite_locked(failure: &StoreError) -> bool {
    failure.0.contains("database is locked")
}

/// For a SQLite file shared by instances: contended writers, retried as
/// DynamoDB's are.
pub const SQLITE_LOCKED: Escalation = Escalation {
    name: "SQLite locked",
    shows: shows_sqlite_locked,
    policy: Policy::CONTENDED,
};

/// What a store declared with atomic batches (SQLite, Redis, or none) may
/// show that its declared policy did not expect.
pub const ATOMIC_BATCHES_ESCALATIONS: &[Escalation] = &[UNDECLARED_DYNAMODB, SQLITE_LOCKED];
