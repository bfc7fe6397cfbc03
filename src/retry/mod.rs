//! Retrying the calls of a create when they fail: on Spin's DynamoDB backend
//! an `increment` is a consistent read and then a write conditioned on the
//! value read, with no retry of its own, so of two creates that take a
//! number at the same moment one fails. The same policy (bounded,
//! exponential, jittered: [`policy`]) retries a create's reads and writes,
//! and spaces a keyed create's claims: long where writers contend
//! (DynamoDB), brief where a failure can only be an outage (SQLite, Redis).
//!
//! Retrying is safe for each call it covers, on every backend. An
//! `increment` that failed was not applied, and one that was applied but
//! whose reply was lost only makes the counter skip a number, a gap, which
//! ids and list positions already allow. A create's `set` and `set-many`
//! write values that only ever go to their keys (a slot's id, a pet's
//! record), so writing one again changes nothing, and completes a batch that
//! was applied in part. A `get`, a `get-many` and a compare-and-swap's
//! begin (`new` and `current`, a read) change nothing. A compare-and-swap's
//! `swap` is not retried here: its caller decides its outcome by reading
//! back. A call that succeeds at once costs nothing more.

use std::cell::Cell;

use crate::platform::Platform;
use crate::store::{KvStore, StoreError, SwapReport};
pub use petstore_common::policy;
pub use policy::Policy;

/// A store whose calls are retried under a [`Policy`], all but a
/// compare-and-swap's `swap`, which goes through as it is.
pub struct Retrying<'a, S: KvStore> {
    store: &'a S,
    platform: &'a dyn Platform,
    policy: Cell<Policy>,
    /// The policies to take from the first failure one of these
    /// describes, for the rest of the request.
    escalations: &'static [Escalation],
    /// The name of the escalation taken, once one is.
    taken: Cell<Option<&'static str>>,
}

/// A failure that tells more than the declared policy knew (the store is
/// one whose writers contend), and the policy it calls for.
#[derive(Clone, Copy)]
pub struct Escalation {
    /// What the failure showed, for [`Retrying::escalated_by`].
    pub name: &'static str,
    pub shows: fn(&StoreError) -> bool,
    pub policy: Policy,
}

impl<'a, S: KvStore> Retrying<'a, S> {
    pub fn new(store: &'a S, platform: &'a dyn Platform, policy: Policy) -> Self {
        Retrying {
            store,
            platform,
            policy: Cell::new(policy),
            escalations: &[],
            taken: Cell::new(None),
        }
    }

    /// The same store, which takes an escalation's policy from the first
    /// failed call that it `shows`, that call included.
    pub fn escalating(mut self, escalations: &'static [Escalation]) -> Self {
        self.escalations = escalations;
        self
    }

    /// The store itself, for a caller that chooses what to retry (a create
    /// that looks at its first failure before it retries).
    pub fn inner(&self) -> &'a S {
        self.store
    }

    /// Fresh random bits from the platform.
    pub fn random(&self) -> [u8; 16] {
        self.platform.random()
    }

    /// Now, in Unix milliseconds, from the platform.
    pub fn now_ms(&self) -> u64 {
        self.platform.now_ms()
    }

    /// Whether a failure showed what `escalation` looks for.
    pub fn escalated_by(&self, escalation: &Escalation) -> bool {
        self.taken.get() == Some(escalation.name)
    }

    /// The waits of one more call under this store's policy, for a caller
    /// that retries by itself (a keyed create's claim).
    pub fn backoff(&self) -> Backoff<'a> {
        Backoff::new(self.platform, self.policy.get())
    }

    /// Takes the escalation's policy if `failure` shows what it looks for,
    /// for the waits still to come of `backoff` too (a call retried here, or
    /// a caller's own loop: a keyed create's claim).
    pub fn learn(&self, failure: &StoreError, backoff: &mut Backoff) {
        if self.taken.get().is_none() {
            if let Some(escalation) = self.escalations.iter().find(|e| (e.shows)(failure)) {
                self.taken.set(Some(escalation.name));
                self.policy.set(escalation.policy);
            }
        }
        backoff.policy = self.policy.get();
    }

    /// `call`, again after each failure while the policy allows; the last
    /// error, saying how many attempts were made, if none succeeds.
    fn retried<T>(&self, call: impl Fn() -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut backoff = self.backoff();
        loop {
            match call() {
                Ok(value) => return Ok(value),
                Err(e) => {
                    self.learn(&e, &mut backoff);
                    if !backoff.wait() {
                        return Err(StoreError(format!(
                            "{} (after {} attempts)",
                            e.0, backoff.retry
                        )));
                    }
                }
            }
        }
    }
}

/// The waits of one call under a [`Policy`].
pub struct Backoff<'a> {
    platform: &'a dyn Platform,
    policy: Policy,
    /// Retries so far.
    retry: u32,
    /// Milliseconds waited so far.
    waited: u64,
}

impl<'a> Backoff<'a> {
    pub fn new(platform: &'a dyn Platform, policy: Policy) -> Self {
        Backoff {
            platform,
            policy,
            retry: 0,
            waited: 0,
        }
    }

    /// Waits before the next attempt, if the policy allows one more.
    pub fn wait(&mut self) -> bool {
        self.retry += 1;
        let wait = policy::backoff_ms(self.retry, self.platform.random());
        if !self.policy.may_retry(self.retry, self.waited, wait) {
            return false;
        }
        self.waited += wait;
        self.platform.sleep_ms(wait);
        true
    }
}

impl<S: KvStore> KvStore for Retrying<'_, S> {
    type Cas = S::Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.retried(|| self.store.get(key))
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.retried(|| self.store.get_many(keys))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.retried(|| self.store.set(key, value))
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        self.retried(|| self.store.set_many(pairs))
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        self.retried(|| self.store.increment(key, delta))
    }

    fn cas_begin(&self, key: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError> {
        self.retried(|| self.store.cas_begin(key))
    }

    fn cas_swap(&self, cas: Self::Cas, value: &[u8]) -> Result<SwapReport, StoreError> {
        self.store.cas_swap(cas, value)
    }

    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        self.retried(|| self.store.list_keys())
    }
}

#[cfg(test)]
mod tests {
    use super::policy::*;

    /// Well-spread random bits, the `n`th of a sequence.
    fn draw(n: u64) -> [u8; 16] {
        let mut bits = [0; 16];
        bits[..8].copy_from_slice(&n.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
        bits
    }

    #[test]
    fn waits_grow_to_the_cap_and_are_drawn_below_their_ceiling() {
        assert_eq!(
            (1..=9).map(ceiling_ms).collect::<Vec<_>>(),
            [8, 16, 32, 64, 128, 256, 512, 1024, 1024]
        );
        for retry in 1..Policy::CONTENDED.max_attempts {
            let ceiling = ceiling_ms(retry);
            assert!(backoff_ms(retry, [0xff; 16]) <= ceiling);
            assert_eq!(backoff_ms(retry, [0; 16]), 0);
            let most = (0..1000).map(|n| backoff_ms(retry, draw(n))).max().unwrap();
            assert!(most <= ceiling && most > ceiling / 2, "{retry}: {most}");
        }
    }

    #[test]
    fn a_call_stops_at_its_waiting_budget_or_its_last_attempt() {
        let policy = Policy::CONTENDED;
        assert!(policy.may_retry(1, 0, 8));
        assert!(policy.may_retry(5, policy.budget_ms - 100, 100));
        assert!(!policy.may_retry(5, policy.budget_ms - 100, 101));
        assert!(!policy.may_retry(policy.max_attempts, 0, 0));
        for policy in [Policy::BRIEF, Policy::CONTENDED] {
            assert_eq!(
                policy.attempts_when_every_draw_is([0; 16]),
                policy.max_attempts,
                "no wait: every attempt is made"
            );
            for n in 0..1000 {
                let attempts = policy.attempts_when_every_draw_is(draw(n));
                let waits: Vec<u64> = (1..attempts).map(|r| backoff_ms(r, draw(n))).collect();
                let waited: u64 = waits.iter().sum();
                assert!(waited <= policy.budget_ms, "{n}: {waits:?}");
                assert!(
                    attempts == policy.max_attempts
                        || waited + backoff_ms(attempts, draw(n)) > policy.budget_ms,
                    "{n}: stopped early after {waits:?}"
                );
            }
        }
    }
}
