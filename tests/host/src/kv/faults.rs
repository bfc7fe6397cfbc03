//! The faults armed on the store: the N-th call from arming fails, loses
//! its reply or applies a batch in part; forced `cas-failed` swaps; failed
//! opens. What each call's fate is, and the errors the guest then sees.

use super::{Fault, KvError, Part};

/// What becomes of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Normal,
    Fail,
    LoseReply,
    Partial(Part),
}

/// The faults armed, and what is forced on the next swaps and opens.
#[derive(Debug, Default)]
pub(super) struct Armed {
    faults: Vec<Fault>,
    /// Calls made since the faults were armed.
    calls_since_arm: u64,
    forced_cas_failures: u64,
    failing_opens: u64,
}

impl Armed {
    /// Arms `faults` counted from the next call (replacing any armed ones).
    pub(super) fn arm(&mut self, faults: &[Fault]) {
        self.faults = faults.to_vec();
        self.calls_since_arm = 0;
    }

    pub(super) fn fail_next_swaps(&mut self, k: u64) {
        self.forced_cas_failures = k;
    }

    pub(super) fn fail_next_opens(&mut self, k: u64) {
        self.failing_opens = k;
    }

    /// Whether this swap is one forced to report `cas-failed`.
    pub(super) fn swap_fails(&mut self) -> bool {
        let fails = self.forced_cas_failures > 0;
        if fails {
            self.forced_cas_failures -= 1;
        }
        fails
    }

    /// Whether this open is one forced to fail.
    pub(super) fn open_fails(&mut self) -> bool {
        let fails = self.failing_opens > 0;
        if fails {
            self.failing_opens -= 1;
        }
        fails
    }

    /// Counts a call and decides its fate: the fault armed at it, if any.
    pub(super) fn strike(&mut self) -> Outcome {
        self.calls_since_arm += 1;
        let n = self.calls_since_arm;
        let hit = self.faults.iter().position(|f| f.call() == n);
        match hit.map(|i| self.faults.remove(i)) {
            // The host's engines fail as they fail; a lock is a failure.
            Some(Fault::Fail(_) | Fault::Locked(_)) => Outcome::Fail,
            Some(Fault::LoseReply(_)) => Outcome::LoseReply,
            Some(Fault::Partial(_, part)) => Outcome::Partial(part),
            None => Outcome::Normal,
        }
    }
}

pub(super) fn failed() -> KvError {
    KvError::Store("injected fault: the backend did not answer".into())
}

pub(super) fn lost() -> KvError {
    KvError::Store("injected fault: the reply was lost after the operation was applied".into())
}

pub(super) fn partly() -> KvError {
    KvError::Store("injected fault: the batch was applied only in part".into())
}

#[cfg(test)]
mod tests {
    use crate::kv::{Backend, Fault, KvStore};

    #[test]
    fn faults_count_from_arming_and_a_lost_reply_is_applied() {
        let kv = KvStore::new(Backend::Memory).unwrap();
        kv.set("a", b"1").unwrap();
        kv.inject(&[Fault::Fail(1), Fault::LoseReply(2)]);
        assert!(kv.set("b", b"2").is_err());
        assert_eq!(kv.peek("b"), None);
        assert!(kv.set("c", b"3").is_err());
        assert_eq!(kv.peek("c").unwrap(), b"3");
        assert!(kv.set("d", b"4").is_ok());
        let stats = kv.stats();
        assert_eq!((stats.calls, stats.writes, stats.bytes), (4, 4, 4));
    }

    #[test]
    fn a_partial_batch_applies_one_pair_in_either_order() {
        let kv = KvStore::new(Backend::Memory).unwrap();
        let pairs = [
            ("x".to_string(), b"1".to_vec()),
            ("y".to_string(), b"2".to_vec()),
        ];
        kv.inject(&["partial-first:1".parse().unwrap()]);
        assert!(kv.set_many(&pairs).is_err());
        assert_eq!((kv.peek("x"), kv.peek("y")), (Some(b"1".to_vec()), None));
        let kv = KvStore::new(Backend::Memory).unwrap();
        kv.inject(&["partial-last:1".parse().unwrap()]);
        assert!(kv.set_many(&pairs).is_err());
        assert_eq!((kv.peek("x"), kv.peek("y")), (None, Some(b"2".to_vec())));
        assert_eq!("fail:3".parse::<Fault>(), Ok(Fault::Fail(3)));
        assert!("partial:3".parse::<Fault>().is_err());
    }

    #[test]
    fn forced_cas_failures_write_nothing() {
        let kv = KvStore::new(Backend::Memory).unwrap();
        kv.set("k", b"old").unwrap();
        kv.fail_next_swaps(1);
        let mut cas = kv.cas_new("k").unwrap();
        assert_eq!(kv.cas_current(&mut cas).unwrap().unwrap(), b"old");
        assert!(!kv.swap(&mut cas, b"new").unwrap());
        assert_eq!(kv.peek("k").unwrap(), b"old");
        assert!(kv.swap(&mut cas, b"new").unwrap());
        assert_eq!(kv.peek("k").unwrap(), b"new");
    }
}
