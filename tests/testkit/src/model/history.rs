//! A history: every request a run made, when it was sent and when its
//! answer came (on one clock: the explorer's steps, or nanoseconds of a
//! real run), and what it asked and was answered, as a client sees it.
//! Written as JSON lines, so that a real run's history is checked after it.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Who sent it (a client, or a request of the explorer).
    pub client: usize,
    /// On a replicated store, the replica that served it (`None`: a store
    /// with one, where every request sees every write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<usize>,
    /// When it was sent, and when its answer came (or the client gave up).
    pub start: u64,
    pub end: u64,
    pub call: Call,
    pub answer: Answer,
}

/// What a request asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Call {
    /// createPet of `body` (a JSON object: `name` unique to this create, or
    /// to every retry of one keyed create), with an `Idempotency-Key`.
    Create {
        body: Value,
        key: Option<String>,
    },
    GetPet {
        id: i64,
    },
    /// A page of a walk: the walk's number, its list (`None`: unfiltered),
    /// its `limit`, and whether it was its first page (no cursor).
    Page {
        walk: u64,
        status: Option<String>,
        limit: usize,
        first: bool,
    },
    Health,
    /// Not a request: the clock moved past the replicated layout's horizon
    /// (every pet committed before is now listable).
    Settle,
}

/// What came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// A 201: the pet, and whether it was `Idempotent-Replayed`.
    Created { pet: Value, replayed: bool },
    /// getPet's 200.
    Found { pet: Value },
    /// A list page's 200, and whether it had a `next` link.
    Page { pets: Vec<Value>, next: bool },
    /// `/v1/health`'s 200.
    Health { body: Value },
    /// Any error: its status and Error body.
    Error {
        status: u16,
        code: String,
        message: String,
    },
    /// No answer reached the client (a lost connection, a crashed
    /// instance, a timeout).
    Lost,
}

impl Answer {
    /// The answer of a response, from its status, its body and whether it
    /// links a next page: the call says which 200 it is.
    pub fn of(call: &Call, status: u16, body: &[u8], next: bool, replayed: bool) -> Answer {
        let json: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        match (status, call) {
            (201, Call::Create { .. }) => Answer::Created {
                pet: json,
                replayed,
            },
            (200, Call::GetPet { .. }) => Answer::Found { pet: json },
            (200, Call::Page { .. }) => Answer::Page {
                pets: json.as_array().cloned().unwrap_or_default(),
                next,
            },
            (200, Call::Health) => Answer::Health { body: json },
            _ => Answer::Error {
                status,
                code: json["code"].as_str().unwrap_or("").to_string(),
                message: json["message"].as_str().unwrap_or("").to_string(),
            },
        }
    }

    /// The pets this answer shows.
    pub fn pets(&self) -> &[Value] {
        match self {
            Answer::Created { pet, .. } | Answer::Found { pet } => std::slice::from_ref(pet),
            Answer::Page { pets, .. } => pets,
            _ => &[],
        }
    }
}

impl std::fmt::Display for Event {
    /// One line: when, who, what was asked, what came back (pets as ids).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}..{}] client {}: ", self.start, self.end, self.client)?;
        match &self.call {
            Call::Create { body, key } => write!(
                f,
                "create {} {}{}",
                body["name"],
                body["status"],
                key.as_ref().map_or(String::new(), |k| format!(" key {k}"))
            )?,
            Call::GetPet { id } => write!(f, "getPet {id}")?,
            Call::Page {
                walk,
                status,
                limit,
                first,
            } => write!(
                f,
                "page of walk {walk} ({}, limit {limit}{})",
                status.as_deref().unwrap_or("all"),
                if *first { ", first" } else { "" }
            )?,
            Call::Health => write!(f, "health")?,
            Call::Settle => write!(f, "the clock passes the horizon")?,
        }
        let ids =
            |pets: &[Value]| -> Vec<i64> { pets.iter().filter_map(|p| p["id"].as_i64()).collect() };
        match &self.answer {
            Answer::Created { pet, replayed } => {
                write!(
                    f,
                    " -> 201 id {}{}",
                    pet["id"],
                    if *replayed { " (replayed)" } else { "" }
                )
            }
            Answer::Found { pet } => write!(f, " -> 200 {pet}"),
            Answer::Page { pets, next } => {
                write!(
                    f,
                    " -> {:?}{}",
                    ids(pets),
                    if *next { " next" } else { " end" }
                )
            }
            Answer::Health { body } => write!(f, " -> {body}"),
            Answer::Error { status, code, .. } => write!(f, " -> {status} {code}"),
            Answer::Lost => write!(f, " -> (no answer)"),
        }
    }
}

/// A run's requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub events: Vec<Event>,
}

impl History {
    pub fn push(&mut self, event: Event) {
        self.events.push(event);
    }

    pub fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        for event in &self.events {
            serde_json::to_writer(&mut *out, event)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    pub fn read(input: impl BufRead) -> std::io::Result<History> {
        let mut events = Vec::new();
        for line in input.lines() {
            let line = line?;
            if !line.trim().is_empty() {
                events.push(serde_json::from_str(&line).map_err(std::io::Error::other)?);
            }
        }
        Ok(History { events })
    }
}
