//! Why an instance does not serve its store, typed: what `ctr:id` holds
//! that this build and backend do not serve, and what the log says of it
//! (`layout.rs` finds a refusal and answers it 503 `misconfigured`).

use std::fmt;

use super::backend::KvBackend;
use super::keys::decode_counter;

/// Each build's name, as an operator deploys it: the default, the edge.
const BUILDS: [&str; 2] = [
    "the default build (spin.toml)",
    "the edge build (spin-edge.toml)",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The other build's store: its mark, or the default build's counter
    /// (and whether this build is the edge build).
    OtherBuild(Vec<u8>, bool),
    /// The lanes layout on a backend without an atomic put-if-absent.
    LanesOn(Vec<u8>, KvBackend),
    /// A counter in text where `increment` takes 8 bytes (SQLite).
    NotSqlite(Vec<u8>),
    /// A lanes store, and this instance set to `counters`.
    NotLanes,
    /// A format no release of this build (the edge build?) writes.
    Unknown(Vec<u8>, bool),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held = |word: &[u8]| format!("the store's 'ctr:id' holds {}", shown(word));
        match self {
            Refusal::OtherBuild(word, edge) => write!(
                f,
                "{}, a store of {}; this instance is {}: serve that store with the other build",
                held(word),
                BUILDS[usize::from(!edge)],
                BUILDS[usize::from(*edge)]
            ),
            Refusal::LanesOn(word, backend) => write!(
                f,
                "{}, the lanes layout, which runs on aws_dynamo only: key_value_backend is '{}'",
                held(word),
                backend.name()
            ),
            Refusal::NotSqlite(word) => write!(
                f,
                "{}, a counter as Redis and DynamoDB write it, which SQLite's increment cannot \
                 take: key_value_backend is 'spin'; set it to the runtime config's type",
                held(word)
            ),
            Refusal::NotLanes => f.write_str(
                "'counters', but the store holds the lanes layout, which this instance does not \
                 write: set it to 'lanes' (docs/operations.md, \"Moving a store to lanes\")",
            ),
            Refusal::Unknown(word, edge) => write!(
                f,
                "{}, a format no release of {} up to 2.1.1 writes: serve it with the release \
                 that wrote it",
                held(word),
                BUILDS[usize::from(*edge)]
            ),
        }
    }
}

/// A value for the log: text (40 characters at most), SQLite's 8-byte
/// counter, or how long it is.
fn shown(word: &[u8]) -> String {
    let text = std::str::from_utf8(word).ok();
    let text = text.filter(|t| t.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    match (text, word.len()) {
        (Some(text), _) => format!("'{}'", text.chars().take(40).collect::<String>()),
        (None, 8) => format!(
            "SQLite's 8-byte counter {}",
            decode_counter(word).unwrap_or(-1)
        ),
        (None, len) => format!("{len} bytes that are not text"),
    }
}
