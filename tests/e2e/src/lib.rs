//! Black-box end-to-end testing of the petstore, as its users meet it.
//!
//! [`client`] talks HTTP to any deployment; [`spin`] runs real `spin up`
//! processes and [`stores`] gives each a fresh key-value store on one of
//! Spin's backends ([`dynamo`]: AWS DynamoDB Local; [`line`]: a network
//! line in front of it, with a delay, that can be cut; [`meter`]: the
//! capacity each DynamoDB call consumes; [`otlp`]: a receiver for the
//! traces Spin exports; [`registry`]: a local OCI registry to push the
//! release to). The suites under `tests/` use them: `on_spin` against
//! real Spin, `on_host` against the test host for what Spin cannot do
//! (faults at the N-th call, lost replies, exact call counts).

pub mod client;
pub mod cpu;
pub mod dynamo;
pub mod history;
pub mod line;
pub mod meter;
pub mod otlp;
pub mod registry;
pub mod release;
pub mod scratch;
pub mod spin;
pub mod stores;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The repository's root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Tries `attempt` until it is done (`Ok`), sleeping `every` between tries;
/// once `deadline` has passed, the last try's `Err` (what it had so far).
pub fn poll_until<T, E>(
    deadline: Instant,
    every: Duration,
    mut attempt: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    loop {
        match attempt() {
            Ok(done) => return Ok(done),
            Err(so_far) if Instant::now() >= deadline => return Err(so_far),
            Err(_) => std::thread::sleep(every),
        }
    }
}
