//! What the core asks of its host besides the key-value store: the
//! deployment's variables, the wall clock, randomness, and waiting. The Spin layer
//! answers with host calls, tests with values of their own. Each is asked
//! for only when a request needs it, since on Spin every one is a host call.

pub trait Platform {
    /// The value of the Spin variable `name`, or why it cannot be had.
    fn variable(&self, name: &str) -> Result<String, String>;
    /// Now, in Unix milliseconds.
    fn now_ms(&self) -> u64;
    /// 128 fresh random bits.
    fn random(&self) -> [u8; 16];
    /// Waits `ms` milliseconds (between retries).
    fn sleep_ms(&self, ms: u64);
}
