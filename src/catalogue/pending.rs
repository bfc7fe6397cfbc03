//! The pending record: what a keyed create stages in its own `pet:{id}`
//! before it claims its `Idempotency-Key`, so that whoever finds the claim
//! can finish the create with exactly the write its owner would make.

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
