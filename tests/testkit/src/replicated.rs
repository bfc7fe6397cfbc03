//! A store replicated as Akamai Functions' `default` store is
//! (docs/replicated-layout.md, "The store it is for"), for the tests of a
//! layout without atomics: N replicas; a request is served by one
//! ([`Replicated::serve`]) and sees its own writes at once; a write reaches
//! the other replicas after a delay drawn for each (so writes arrive out of
//! order); two writes of one key that did not see each other resolve either
//! way, the same way everywhere; no `increment` or compare-and-swap; the
//! platform's quotas as errors. Time is the test's: [`Replicated::advance`].
//! The explorer shares it between threads, delivering writes one at a time
//! at its scheduling points ([`Replicated::deliver_one`]).

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard};

use petstore::store::{KvStore, StoreError, SwapReport};

/// What a replica holds of a key: its value (`None`: deleted) and the
/// write's stamp, which decides between two writes of the key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Versioned {
    value: Option<Vec<u8>>,
    stamp: Stamp,
}

/// A write's place in the order every replica agrees on: a later write of
/// a key that a replica had seen is above it; two that had not seen each
/// other are ordered by the draw (`rank`), so either may win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Stamp {
    rank: u64,
    /// Unique, so that no two writes tie.
    seq: u64,
}

/// A write on its way to one replica.
#[derive(Clone)]
struct InFlight {
    due_ms: u64,
    replica: usize,
    key: String,
    version: Versioned,
}

/// The platform's per-app limits: calls a second (a `get-many` counts once
/// per key it reads, a `set-many` once per key it writes).
#[derive(Debug, Clone, Copy)]
pub struct Quota {
    pub reads_per_second: u64,
    pub writes_per_second: u64,
}

impl Quota {
    /// Akamai Functions' quota table: 1,000 reads and 50 writes a second.
    pub const AKAMAI: Quota = Quota {
        reads_per_second: 1000,
        writes_per_second: 50,
    };
}

#[derive(Clone)]
struct State {
    replicas: Vec<BTreeMap<String, Versioned>>,
    in_flight: Vec<InFlight>,
    delay_ms: RangeInclusive<u64>,
    now_ms: u64,
    seq: u64,
    random: u64,
    quota: Option<Quota>,
    /// The second the counts below are of, and the counts.
    window: u64,
    reads: u64,
    writes: u64,
}

impl State {
    fn draw(&mut self) -> u64 {
        // xorshift64*: the test's seed decides every delay and every tie.
        self.random ^= self.random >> 12;
        self.random ^= self.random << 25;
        self.random ^= self.random >> 27;
        self.random.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn charge(&mut self, reads: u64, writes: u64) -> Result<(), StoreError> {
        let Some(quota) = self.quota else {
            return Ok(());
        };
        let second = self.now_ms / 1000;
        if second != self.window {
            (self.window, self.reads, self.writes) = (second, 0, 0);
        }
        if self.reads + reads > quota.reads_per_second {
            return Err(StoreError(format!(
                "quota: more than {} reads a second",
                quota.reads_per_second
            )));
        }
        if self.writes + writes > quota.writes_per_second {
            return Err(StoreError(format!(
                "quota: more than {} writes a second",
                quota.writes_per_second
            )));
        }
        self.reads += reads;
        self.writes += writes;
        Ok(())
    }

    /// Keeps `version` at `replica` if it is above what the replica holds.
    fn apply(&mut self, replica: usize, key: &str, version: Versioned) {
        let held = self.replicas[replica].get(key);
        if held.is_none_or(|h| h.stamp < version.stamp) {
            self.replicas[replica].insert(key.to_string(), version);
        }
    }

    /// A write taken by `replica`: applied there at once, sent to the
    /// others with a delay drawn for each.
    fn write(&mut self, replica: usize, key: &str, value: Option<Vec<u8>>) {
        self.seq += 1;
        let seen = self.replicas[replica].get(key).map(|v| v.stamp.rank);
        // Above what this replica had seen of the key; else drawn, so two
        // writes that did not see each other resolve either way.
        let rank = match seen {
            Some(rank) => rank + 1 + self.draw() % 1024,
            None => self.draw() % 1024,
        };
        let version = Versioned {
            value,
            stamp: Stamp {
                rank,
                seq: self.seq,
            },
        };
        self.apply(replica, key, version.clone());
        for other in (0..self.replicas.len()).filter(|r| *r != replica) {
            let (low, high) = (*self.delay_ms.start(), *self.delay_ms.end());
            let delay = low + self.draw() % (high - low + 1);
            self.in_flight.push(InFlight {
                due_ms: self.now_ms + delay,
                replica: other,
                key: key.to_string(),
                version: version.clone(),
            });
        }
    }

    fn deliver_due(&mut self) {
        let now = self.now_ms;
        let (due, later): (Vec<InFlight>, Vec<InFlight>) = std::mem::take(&mut self.in_flight)
            .into_iter()
            .partition(|w| w.due_ms <= now);
        self.in_flight = later;
        for w in due {
            self.apply(w.replica, &w.key, w.version);
        }
    }
}

/// The replicated store; clones share it.
#[derive(Clone)]
pub struct Replicated(Arc<Mutex<State>>);

impl Replicated {
    /// `replicas` replicas; each write reaches each other replica after a
    /// delay drawn from `delay_ms`; `seed` draws the delays and the ties.
    pub fn new(replicas: usize, delay_ms: RangeInclusive<u64>, seed: u64) -> Replicated {
        assert!(replicas >= 1 && delay_ms.start() <= delay_ms.end());
        Replicated(Arc::new(Mutex::new(State {
            replicas: vec![BTreeMap::new(); replicas],
            in_flight: Vec::new(),
            delay_ms,
            now_ms: 0,
            seq: 0,
            random: seed.max(1),
            quota: None,
            window: 0,
            reads: 0,
            writes: 0,
        })))
    }

    /// The same store, refusing calls past `quota`.
    pub fn with_quota(self, quota: Quota) -> Replicated {
        self.state().quota = Some(quota);
        self
    }

    /// Poisoning aside: a failed check in one thread of the explorer must
    /// not hide the store from its report.
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A store of its own holding what this one holds, with the same
    /// writes on their way and the same draws to come.
    pub fn fork(&self) -> Replicated {
        Replicated(Arc::new(Mutex::new(self.state().clone())))
    }

    pub fn replicas(&self) -> usize {
        self.state().replicas.len()
    }

    /// One request, served by `replica`.
    pub fn serve(&self, replica: usize) -> ReplicaStore {
        assert!(replica < self.replicas());
        ReplicaStore {
            set: self.clone(),
            replica,
        }
    }

    /// Moves the test's clock on by `ms`, delivering the writes due by then.
    pub fn advance(&self, ms: u64) {
        let mut state = self.state();
        state.now_ms += ms;
        state.deliver_due();
    }

    /// Moves the clock to `ms` (a clock the caller keeps; never back),
    /// delivering the writes due by then.
    pub fn advance_to(&self, ms: u64) {
        let mut state = self.state();
        state.now_ms = state.now_ms.max(ms);
        state.deliver_due();
    }

    /// Delivers one write on its way, early: number `pick` (modulo those
    /// on their way), so that a scheduler's draws reorder them. Whether
    /// one was on its way.
    pub fn deliver_one(&self, pick: usize) -> bool {
        let mut state = self.state();
        if state.in_flight.is_empty() {
            return false;
        }
        let at = pick % state.in_flight.len();
        let w = state.in_flight.remove(at);
        state.apply(w.replica, &w.key, w.version);
        true
    }

    /// Delivers every write still on its way.
    pub fn settle(&self) {
        let mut state = self.state();
        let last = state.in_flight.iter().map(|w| w.due_ms).max();
        if let Some(last) = last {
            state.now_ms = state.now_ms.max(last);
        }
        state.deliver_due();
    }

    pub fn now_ms(&self) -> u64 {
        self.state().now_ms
    }

    /// Writes still on their way to some replica.
    pub fn in_flight(&self) -> usize {
        self.state().in_flight.len()
    }

    /// What `replica` holds of `key`, bypassing quotas.
    pub fn peek(&self, replica: usize, key: &str) -> Option<Vec<u8>> {
        self.state().replicas[replica]
            .get(key)
            .and_then(|v| v.value.clone())
    }

    /// Whether every replica holds the same keys and values.
    pub fn converged(&self) -> bool {
        let state = self.state();
        let first = &state.replicas[0];
        state.replicas.iter().all(|r| r == first)
    }
}

/// One request's view: the replica serving it.
pub struct ReplicaStore {
    set: Replicated,
    replica: usize,
}

impl ReplicaStore {
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let mut state = self.set.state();
        state.charge(0, 1)?;
        state.write(self.replica, key, None);
        Ok(())
    }

    fn read(&self, key: &str) -> Option<Vec<u8>> {
        self.set.state().replicas[self.replica]
            .get(key)
            .and_then(|v| v.value.clone())
    }
}

/// The platform has no `wasi:keyvalue/atomics`: a layout for it never
/// calls them, and a build for it does not import them.
fn no_atomics(what: &str) -> StoreError {
    StoreError(format!("{what}: this store has no wasi:keyvalue/atomics"))
}

impl KvStore for ReplicaStore {
    type Cas = ();

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.set.state().charge(1, 0)?;
        Ok(self.read(key))
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.set.state().charge(keys.len() as u64, 0)?;
        Ok(keys
            .iter()
            .filter_map(|k| Some((k.clone(), self.read(k)?)))
            .collect())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let mut state = self.set.state();
        state.charge(0, 1)?;
        state.write(self.replica, key, Some(value.to_vec()));
        Ok(())
    }

    /// Refused whole when it would pass the quota: the platform's batch is
    /// not promised atomic, but a refusal by quota writes nothing here.
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        let mut state = self.set.state();
        state.charge(0, pairs.len() as u64)?;
        for (key, value) in pairs {
            state.write(self.replica, key, Some(value.clone()));
        }
        Ok(())
    }

    fn increment(&self, _: &str, _: i64) -> Result<i64, StoreError> {
        Err(no_atomics("increment"))
    }

    fn cas_begin(&self, _: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError> {
        Err(no_atomics("compare-and-swap"))
    }

    fn cas_swap(&self, _: Self::Cas, _: &[u8]) -> Result<SwapReport, StoreError> {
        Err(no_atomics("compare-and-swap"))
    }

    /// Every key the replica holds, as `list-keys` answers (Spin 4.0.2
    /// answers every key at once): one read.
    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        let mut state = self.set.state();
        state.charge(1, 0)?;
        Ok(state.replicas[self.replica]
            .iter()
            .filter(|(_, v)| v.value.is_some())
            .map(|(k, _)| k.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(store: &ReplicaStore, key: &str) -> Option<Vec<u8>> {
        store.get(key).unwrap()
    }

    #[test]
    fn a_write_is_seen_at_once_where_it_was_taken_and_elsewhere_only_after_its_delay() {
        let set = Replicated::new(3, 100..=1000, 7);
        let a = set.serve(0);
        a.set("k", b"1").unwrap();
        assert_eq!(value(&a, "k").as_deref(), Some(&b"1"[..]), "its own write");
        assert_eq!(value(&set.serve(0), "k").as_deref(), Some(&b"1"[..]));
        assert_eq!(value(&set.serve(1), "k"), None, "not replicated yet");
        set.advance(99);
        assert_eq!(value(&set.serve(2), "k"), None, "before the least delay");
        set.advance(901);
        for r in 0..3 {
            assert_eq!(value(&set.serve(r), "k").as_deref(), Some(&b"1"[..]), "{r}");
        }
        assert!(set.converged());
        assert_eq!(set.in_flight(), 0);
    }

    #[test]
    fn writes_that_did_not_see_each_other_resolve_either_way_and_the_same_everywhere() {
        let mut kept = std::collections::BTreeSet::new();
        for seed in 1..40 {
            let set = Replicated::new(3, 0..=500, seed);
            set.serve(0).set("k", b"a").unwrap();
            set.serve(1).set("k", b"b").unwrap();
            set.settle();
            assert!(set.converged(), "seed {seed}");
            kept.insert(set.peek(2, "k").unwrap());
        }
        assert_eq!(kept.len(), 2, "either write may be kept: {kept:?}");
    }

    #[test]
    fn a_write_after_another_it_saw_is_kept_whatever_order_they_arrive_in() {
        for seed in 1..40 {
            let set = Replicated::new(3, 0..=1000, seed);
            set.serve(0).set("k", b"old").unwrap();
            set.advance(1000);
            set.serve(1).set("k", b"new").unwrap();
            set.serve(1).delete("gone").unwrap();
            set.settle();
            assert_eq!(
                set.peek(0, "k").as_deref(),
                Some(&b"new"[..]),
                "seed {seed}"
            );
            assert!(set.converged());
        }
        // Out of order: two writes of one replica, the second delivered
        // first somewhere (delays are drawn per write and replica).
        let mut reordered = false;
        for seed in 1..200 {
            let set = Replicated::new(2, 0..=1000, seed);
            let a = set.serve(0);
            a.set("k", b"1").unwrap();
            a.set("k", b"2").unwrap();
            let delays: Vec<u64> = set.state().in_flight.iter().map(|w| w.due_ms).collect();
            reordered |= delays[1] < delays[0];
            set.settle();
            assert_eq!(set.peek(1, "k").as_deref(), Some(&b"2"[..]), "seed {seed}");
        }
        assert!(reordered, "some seed delivers the later write first");
    }

    #[test]
    fn the_explorer_delivers_one_write_early_or_all_once_its_clock_passes_their_delay() {
        let set = Replicated::new(3, 1000..=1000, 5);
        set.advance_to(10_000);
        set.serve(0).set("a", b"1").unwrap();
        set.serve(0).set("b", b"2").unwrap();
        let fork = set.fork();
        assert_eq!(set.in_flight(), 4, "two writes, each to two replicas");
        assert!(set.deliver_one(3));
        assert_eq!(set.in_flight(), 3);
        let delivered =
            (1..3).filter(|r| set.peek(*r, "a").is_some() || set.peek(*r, "b").is_some());
        assert_eq!(delivered.count(), 1, "one write reached one replica");
        assert_eq!(fork.in_flight(), 4, "a fork is a store of its own");
        set.advance_to(10_999);
        assert_eq!(set.in_flight(), 3, "not yet due");
        set.advance_to(5_000);
        assert_eq!(set.now_ms(), 10_999, "the clock never goes back");
        set.advance_to(11_000);
        assert!(set.converged());
        assert!(!set.deliver_one(0), "nothing left on its way");
        assert_eq!(fork.peek(1, "a"), None);
    }

    #[test]
    fn there_are_no_atomics_and_the_quotas_refuse_what_passes_them() {
        let set = Replicated::new(2, 0..=0, 1).with_quota(Quota::AKAMAI);
        let a = set.serve(0);
        assert!(a.increment("n", 1).is_err());
        assert!(a.cas_begin("n").is_err());
        for n in 0..25 {
            a.set_many(&[(format!("pet:{n}"), vec![1]), (format!("ix:{n}"), vec![1])])
                .unwrap();
        }
        let refused = a.set("one-more", b"x").unwrap_err();
        assert!(refused.0.contains("50 writes"), "{refused}");
        assert_eq!(a.get("one-more").unwrap(), None, "nothing written");
        set.advance(1000);
        a.set("one-more", b"x").unwrap();
        let keys: Vec<String> = (0..999).map(|n| format!("k{n}")).collect();
        a.get_many(&keys).unwrap();
        assert!(a.get("k").is_ok(), "the 1,000th read");
        assert!(a.list_keys().unwrap_err().0.contains("1000 reads"));
        set.advance(1000);
        assert_eq!(a.list_keys().unwrap().len(), 51);
    }

    /// The chances docs/replicated-layout.md states for a duplicate id,
    /// from their formula: creates at the write quota (2 writes each),
    /// each pair drawn within the replication delay colliding with
    /// probability 2^-53 (the read before writing catches the others); and
    /// the birthday bound over a year's ids without that read.
    #[test]
    fn the_duplicate_id_chances_the_design_states_follow_from_its_formula() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/replicated-layout.md"),
        )
        .unwrap();
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let rate = f64::from(Quota::AKAMAI.writes_per_second as u32) / 2.0;
        let year = 365.25 * 24.0 * 3600.0;
        let space = 2f64.powi(53);
        let with_read = |delay_s: f64| rate * rate * delay_s / space * year;
        let without = (rate * year).powi(2) / 2.0 / space;
        let shown = |x: f64| {
            let exponent = x.log10().floor() as i32;
            format!("{:.1} × 10^−{}", x / 10f64.powi(exponent), -exponent)
        };
        for (delay_s, said) in [(10.0, "a year at D = 10 s"), (1.0, "at 1 s")] {
            let figure = shown(with_read(delay_s));
            assert!(doc.contains(&format!("{figure} {said}")), "{figure} {said}");
        }
        assert!(
            doc.contains(&format!("about {} a year", without.round())),
            "{without}"
        );
        assert!(doc.contains(&format!("({} creates/s, two writes each)", rate)));
    }
}
