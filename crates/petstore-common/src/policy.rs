//! The retry policy of a create's calls: how long to wait between attempts,
//! and when to give up. Shared, so that the benchmarks' floor component
//! (`bench/floor`) retries with exactly the API's policy.

/// The first wait's ceiling (ms), doubled after each failure...
pub const BASE_MS: u64 = 8;
/// ...up to this ceiling (ms).
pub const CAP_MS: u64 = 1024;

/// How many attempts one call may make, and how long it may wait in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// The most attempts of one call, the first included.
    pub max_attempts: u32,
    /// The most one call may wait in all (ms): no retry whose wait would
    /// pass it.
    pub budget_ms: u64,
}

impl Policy {
    /// Where a call fails only when the store does (SQLite, Redis: their
    /// increments and batches never conflict): a failure is an outage or a
    /// blip, not a race. A few quick retries ride out a blip; then a prompt
    /// 503 with `Retry-After` hands the retry to the client instead of
    /// holding it. Always 4 attempts: 3 waits below 8, 16 and 32 ms, 56 ms
    /// at most, inside the budget.
    pub const BRIEF: Policy = Policy {
        max_attempts: 4,
        budget_ms: 100,
    };

    /// Where concurrent writers conflict (DynamoDB's conditional increment):
    /// a failure is most often a race lost, and the next attempt most often
    /// wins. Measured on DynamoDB Local: 64 creates at once need up to ~9 s
    /// of waits for the last of them (BENCHMARKS.md); 16 attempts in 4.6 s
    /// left 18 of 256 contended creates failing.
    pub const CONTENDED: Policy = Policy {
        max_attempts: 40,
        budget_ms: 10_000,
    };

    /// Whether retry `retry` (1 for the first) may wait `wait` ms, having
    /// waited `waited` ms.
    pub fn may_retry(&self, retry: u32, waited: u64, wait: u64) -> bool {
        retry < self.max_attempts && waited + wait <= self.budget_ms
    }

    /// The attempts one call makes when every one fails and every draw of
    /// random bits is `random` (the tests' fixed bits).
    pub fn attempts_when_every_draw_is(&self, random: [u8; 16]) -> u32 {
        let (mut retry, mut waited) = (1, 0);
        loop {
            let wait = backoff_ms(retry, random);
            if !self.may_retry(retry, waited, wait) {
                return retry;
            }
            waited += wait;
            retry += 1;
        }
    }
}

/// The wait (ms) before retry `retry` (1 for the first retry): "full
/// jitter", uniformly in `0..=ceiling(retry)`, from `random` (fresh random
/// bits), so that contending writers spread out instead of colliding again
/// in step.
pub fn backoff_ms(retry: u32, random: [u8; 16]) -> u64 {
    let mut bits = [0u8; 8];
    bits.copy_from_slice(&random[..8]);
    u64::from_le_bytes(bits) % (ceiling_ms(retry) + 1)
}

/// `min(CAP_MS, BASE_MS · 2^(retry-1))`.
pub fn ceiling_ms(retry: u32) -> u64 {
    BASE_MS
        .saturating_mul(1 << retry.saturating_sub(1).min(20))
        .min(CAP_MS)
}
