//! Spin's key-value backends (`key_value_backend`) and what each decides.
//! Why each differs: docs/spin-platform.md.

use crate::retry::{Escalation, Policy};
use crate::store::{KvStore, StoreError};

/// Which backend holds the store, as the runtime config's `type` names it.
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
        ["spin", "redis", "aws_dynamo", "azure_cosmos"][self as usize]
    }

    pub fn parse(text: &str) -> Result<KvBackend, String> {
        let text = text.trim();
        let found = KvBackend::ALL.into_iter().find(|b| b.name() == text);
        found.ok_or_else(|| format!("'{text}' is not one of spin, redis, aws_dynamo, azure_cosmos"))
    }

    /// Whether `set-many` is all or nothing (one SQLite transaction, one
    /// Redis `MSET`), not any part in any order.
    pub fn atomic_batches(self) -> bool {
        matches!(self, KvBackend::Spin | KvBackend::Redis)
    }

    /// Whether a page reads with `get-many`: where it works and a call is a
    /// round trip, DynamoDB (it fails on Redis; Cosmos DB's is untried).
    pub fn batched_reads(self) -> bool {
        self == KvBackend::AwsDynamo
    }

    /// Whether a compare-and-swap on an absent key is an atomic
    /// put-if-absent: DynamoDB (SQLite upserts; Cosmos DB's is untried).
    pub fn put_if_absent(self) -> bool {
        self == KvBackend::AwsDynamo
    }

    /// At length where writers contend or the store is remote, briefly
    /// where a failure is an outage.
    pub fn retry_policy(self) -> Policy {
        match self.atomic_batches() {
            true => Policy::BRIEF,
            false => Policy::CONTENDED,
        }
    }

    /// Why the store contradicts this declaration, if it does: SQLite and
    /// Redis take an empty key, DynamoDB and Cosmos DB refuse it (one `get`).
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

/// A conditional write lost a race: what Spin's `aws_dynamo` backend
/// reports from a contended `increment`, and no other backend can.
pub fn shows_dynamodb(failure: &StoreError) -> bool {
    let names = [
        "ConditionalCheck",
        "TransactionCancel",
        "TransactionConflict",
    ];
    names.iter().any(|name| failure.0.contains(name))
}

/// A SQLite file another process holds: a write that read in its
/// transaction is refused at once, and rolled back.
pub fn shows_sqlite_locked(failure: &StoreError) -> bool {
    failure.0.contains("database is locked")
}

/// A store declared SQLite or Redis (or not at all) that shows it is
/// DynamoDB takes DynamoDB's policy, so that contended creates succeed.
pub const UNDECLARED_DYNAMODB: Escalation = Escalation {
    name: "DynamoDB",
    shows: shows_dynamodb,
    policy: Policy::CONTENDED,
};

/// What a store declared with atomic batches may show: DynamoDB, or a
/// SQLite file shared by instances.
pub const ATOMIC_BATCHES_ESCALATIONS: &[Escalation] = &[
    UNDECLARED_DYNAMODB,
    Escalation {
        name: "SQLite locked",
        shows: shows_sqlite_locked,
        policy: Policy::CONTENDED,
    },
];
