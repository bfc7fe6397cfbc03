//! The pending record a counters keyed create stages in its `pet:{id}`, and the
//! clock of a position issued but not committed (commit window, seal, lease).

use crate::errors::ApiError;

/// What a page needs of time: now, and the deployment's lease (read only
/// if a page meets a keyed create's pending record).
pub struct Clock<'a> {
    pub now_ms: u64,
    pub lease_ms: &'a dyn Fn() -> Result<u64, ApiError>,
}

/// How long after it began a counters create may still make its commit
/// (ms): past it, it gives its position up instead.
pub const COMMIT_WITHIN_MS: u64 = 20_000;
/// How long a reader waits before it gives a position up (ms): longer than
/// a create may commit, its retries' 10 s and clocks' drift included.
pub const SEAL_AFTER_MS: u64 = 60_000;

/// First line of a pending record. Not JSON, so no reader ever takes it
/// for a pet.
pub const PENDING_HEADER: &str = "petstore-pending 1";

/// A keyed create's intent: `petstore-pending 1\n<position> <started ms>\n<pet JSON>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub position: i64,
    /// When the create began (Unix milliseconds, the writer's clock).
    pub started_ms: u64,
    /// The committed record this create will write.
    pub record: Vec<u8>,
}

impl Pending {
    /// A position given up: no pet will ever be stored there (its create
    /// failed, or a reader sealed it). The format of 1.2.0's withdrawn
    /// records, which every release reads as no pet.
    pub fn void(position: i64) -> Pending {
        Pending {
            position,
            started_ms: 0,
            record: Vec::new(),
        }
    }

    /// Whether its create may still commit it: within its lease and the
    /// commit window after (`lease_ms` the deployment's).
    pub fn finishable(&self, now_ms: u64, lease_ms: u64) -> bool {
        now_ms < self.started_ms.saturating_add(lease_ms + COMMIT_WITHIN_MS)
    }

    /// Whether readers give it up: no create will commit it any more.
    pub fn dead(&self, now_ms: u64, lease_ms: u64) -> bool {
        now_ms >= self.started_ms.saturating_add(lease_ms + SEAL_AFTER_MS)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out =
            format!("{PENDING_HEADER}\n{} {}\n", self.position, self.started_ms).into_bytes();
        out.extend_from_slice(&self.record);
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<Pending> {
        let rest = bytes
            .strip_prefix(PENDING_HEADER.as_bytes())?
            .strip_prefix(b"\n")?;
        let end = rest.iter().position(|b| *b == b'\n')?;
        let line = std::str::from_utf8(&rest[..end]).ok()?;
        let (position, started) = line.split_once(' ')?;
        Some(Pending {
            position: position.parse().ok()?,
            started_ms: started.parse().ok()?,
            record: rest[end + 1..].to_vec(),
        })
    }
}
