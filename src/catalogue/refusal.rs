//! Why an instance does not serve its store, typed: what `ctr:id` holds
//! that this build and backend do not serve, and what the log says of it
//! (`layout.rs` finds a refusal and answers it 503 `misconfigured`).

use std::fmt;

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
    /// A format no release of this build (the edge build?) writes.
    Unknown(Vec<u8>, bool),
    /// A store this layout's rules do not let this instance serve: what
    /// `ctr:id` holds, if it says, and why (built below, by name: a reason
    /// only the default build gives is no text of the edge build's).
    Rule(Option<Vec<u8>>, &'static str),
}

impl Refusal {
    /// The lanes layout on a backend without an atomic put-if-absent.
    pub fn lanes_on(word: Vec<u8>) -> Refusal {
        let why = ", the lanes layout, which runs on aws_dynamo only: set key_value_backend to \
            the runtime config's type";
        Refusal::Rule(Some(word), why)
    }

    /// A counter in text where `increment` takes 8 bytes (SQLite).
    pub fn not_sqlite(word: Vec<u8>) -> Refusal {
        let why = ", a counter as Redis and DynamoDB write it, which SQLite's increment cannot \
            take: key_value_backend is spin; set it to the runtime config's type";
        Refusal::Rule(Some(word), why)
    }

    /// A lanes store, and this instance set to `counters`.
    pub fn not_lanes() -> Refusal {
        let why = "'counters', but the store holds the lanes layout, which this instance does \
            not write: set it to 'lanes' (docs/operations.md, \"Moving a store to lanes\")";
        Refusal::Rule(None, why)
    }
}

impl fmt::Display for Refusal {
    /// What `ctr:id` holds, then why: static text but for the builds'
    /// names (one `write!` each: smaller than a `write_str` a fragment).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (word, edge) = match self {
            Refusal::OtherBuild(word, edge) | Refusal::Unknown(word, edge) => (Some(word), *edge),
            Refusal::Rule(word, _) => (word.as_ref(), false),
        };
        if let Some(word) = word {
            f.write_str("the store's 'ctr:id' holds ")?;
            shown(word, f)?;
        }
        let (this, other) = (BUILDS[usize::from(edge)], BUILDS[usize::from(!edge)]);
        match self {
            Refusal::OtherBuild(..) => write!(
                f,
                ", a store of {other}; this instance is {this}: serve that store with the \
                 other build"
            ),
            Refusal::Unknown(..) => write!(
                f,
                ", a format no release of {this} up to 2.1.1 writes: serve it with the \
                 release that wrote it"
            ),
            Refusal::Rule(_, why) => f.write_str(why),
        }
    }
}

/// A value for the log: text (40 bytes at most), SQLite's 8-byte counter,
/// or how long it is.
fn shown(word: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let text = std::str::from_utf8(&word[..word.len().min(40)]).ok();
    match text.filter(|t| t.bytes().all(|b| b.is_ascii_graphic() || b == b' ')) {
        Some(text) => write!(f, "'{text}'"),
        None => match decode_counter(word).filter(|_| word.len() == 8) {
            Some(n) => write!(f, "SQLite's 8-byte counter {n}"),
            None => write!(f, "{} bytes that are not text", word.len()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each refusal's log text, whole: what `ctr:id` holds, then why.
    #[test]
    fn each_refusal_names_what_the_store_holds_and_why() {
        let mark = crate::catalogue::replicated::MARK.to_vec();
        let said = |r: Refusal| r.to_string();
        assert_eq!(
            said(Refusal::OtherBuild(mark.clone(), false)),
            "the store's 'ctr:id' holds 'petstore-replicated 1', a store of the edge build \
             (spin-edge.toml); this instance is the default build (spin.toml): serve that store \
             with the other build"
        );
        assert_eq!(
            said(Refusal::OtherBuild(7i64.to_le_bytes().to_vec(), true)),
            "the store's 'ctr:id' holds SQLite's 8-byte counter 7, a store of the default build \
             (spin.toml); this instance is the edge build (spin-edge.toml): serve that store \
             with the other build"
        );
        assert_eq!(
            said(Refusal::Unknown(vec![0xff; 3], true)),
            "the store's 'ctr:id' holds 3 bytes that are not text, a format no release of the \
             edge build (spin-edge.toml) up to 2.1.1 writes: serve it with the release that \
             wrote it"
        );
        assert_eq!(
            said(Refusal::Unknown(b"x".to_vec(), false)),
            "the store's 'ctr:id' holds 'x', a format no release of the default build \
             (spin.toml) up to 2.1.1 writes: serve it with the release that wrote it"
        );
        assert_eq!(
            said(Refusal::lanes_on(b"2".to_vec())),
            "the store's 'ctr:id' holds '2', the lanes layout, which runs on aws_dynamo only: \
             set key_value_backend to the runtime config's type"
        );
        assert_eq!(
            said(Refusal::not_sqlite(b"12".to_vec())),
            "the store's 'ctr:id' holds '12', a counter as Redis and DynamoDB write it, which \
             SQLite's increment cannot take: key_value_backend is spin; set it to the runtime \
             config's type"
        );
        assert_eq!(
            said(Refusal::not_lanes()),
            "'counters', but the store holds the lanes layout, which this instance does not \
             write: set it to 'lanes' (docs/operations.md, \"Moving a store to lanes\")"
        );
    }
}
