//! Layout v3, a store declared `aws_dynamo` that held no pet before 1.3.0:
//! ids come from 16 sequences (`ids:{k}`), interleaved, so that no store
//! item is written by every create, and which layout a store holds.
//!
//! Sequence `k` (0 to 15) hands out ids `k + 1`, `k + 17`, `k + 33`, …: its
//! `n`th id is `16·(n − 1) + k + 1`. A create reads every sequence in one
//! `get-many` and takes one of the least used: the next in turn when they
//! were filled one at a time (so that alone creates get 1, 2, 3, …), else
//! one drawn at random, as creates are running at the same moment; after a
//! failed `increment` (on DynamoDB, a race lost), another drawn so. An id is *issued* once its
//! sequence's counter reached it; the others are not a hole, only not yet
//! handed out, and a reader skips them for free (docs/key-value-layout.md).

use crate::errors::{ApiError, Misconfiguration};
use crate::retry::Retrying;
use crate::store::{KvStore, StoreError, SwapReport};

use super::keys::{decode_counter, ID_COUNTER};
use super::record::Catalogue;

/// Sequences of layout v3.
pub const SEQUENCES: usize = 16;

/// What `ctr:id` holds in a store of layout v3, claimed by the first create
/// (put-if-absent). Far above any id the sequences reach, so that an
/// `increment` of it by a release that knows only layout v2 hands out an id
/// no sequence can, and tells that release that the store is not its own.
pub const V3_MARK: i64 = 1 << 60;

/// `ids:{k}`: the last number sequence `k` handed out.
pub fn sequence_key(k: usize) -> String {
    format!("ids:{k}")
}

/// The keys a create or a page reads to learn the layout and, in layout v3,
/// where each sequence is: `ctr:id`, then `ids:0` … `ids:15`.
pub fn survey_keys() -> Vec<String> {
    let mut keys = Vec::with_capacity(SEQUENCES + 1);
    keys.push(ID_COUNTER.to_string());
    keys.extend((0..SEQUENCES).map(sequence_key));
    keys
}

/// Which layout a store holds, from what `ctr:id` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// No `ctr:id`: no create ever ran on this store.
    Unclaimed,
    /// `ctr:id` is a counter: layout v2, one sequence of ids, a counter and
    /// slots per status (every store of 1.0.0–1.2.0, and every store on
    /// SQLite or Redis).
    Counters,
    /// `ctr:id` holds [`V3_MARK`]: ids from [`Sequences`]; status lists are
    /// read from the unfiltered list.
    Sequences(Sequences),
}

/// Where each sequence is: the number of ids each handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sequences {
    taken: [i64; SEQUENCES],
}

impl Layout {
    /// The layout, from the values `survey_keys` read (`value(key)`).
    pub fn of<'v>(value: impl Fn(&str) -> Option<&'v [u8]>) -> Result<Layout, ApiError> {
        let Some(word) = value(ID_COUNTER) else {
            return Ok(Layout::Unclaimed);
        };
        if counter(ID_COUNTER, Some(word))? < V3_MARK {
            return Ok(Layout::Counters);
        }
        let mut taken = [0; SEQUENCES];
        for (k, n) in taken.iter_mut().enumerate() {
            let key = sequence_key(k);
            *n = counter(&key, value(&key))?;
        }
        Ok(Layout::Sequences(Sequences { taken }))
    }
}

fn counter(key: &str, word: Option<&[u8]>) -> Result<i64, ApiError> {
    match word {
        None => Ok(0),
        Some(bytes) => decode_counter(bytes)
            .filter(|n| *n >= 0)
            .ok_or_else(|| ApiError::Internal(format!("stored counter '{key}' is unreadable"))),
    }
}

impl Sequences {
    /// The `n`th id of sequence `k` (`n` from 1).
    pub fn id(k: usize, n: i64) -> i64 {
        (n - 1) * SEQUENCES as i64 + k as i64 + 1
    }

    fn sequence_of(id: i64) -> (usize, i64) {
        let k = ((id - 1) % SEQUENCES as i64) as usize;
        (k, (id - 1) / SEQUENCES as i64 + 1)
    }

    /// Whether `id` was handed out (its sequence reached it).
    pub fn issued(&self, id: i64) -> bool {
        if id < 1 {
            return false;
        }
        let (k, n) = Sequences::sequence_of(id);
        n <= self.taken[k]
    }

    /// The highest id handed out, 0 if none.
    pub fn last(&self) -> i64 {
        (0..SEQUENCES)
            .filter(|k| self.taken[*k] > 0)
            .map(|k| Sequences::id(k, self.taken[k]))
            .max()
            .unwrap_or(0)
    }

    /// The sequence a create tries first, always among those that handed
    /// out the fewest ids (so that they stay within a round of each other;
    /// a rule that took the next id above all from any sequence let one
    /// that got ahead in a race take every create after). When the
    /// sequences were filled one at a time (the first `j` one id ahead of
    /// the rest), the next in turn, `j`: creates one at a time get 1, 2, 3,
    /// … Otherwise creates are running at the same moment: one drawn from
    /// `random`, so that they spread over the sequences instead of all
    /// racing for one.
    pub fn first_choice(&self, random: [u8; 16]) -> usize {
        let fewest = self.taken.iter().copied().min().unwrap_or(0);
        let in_turn = self.taken.windows(2).all(|w| w[0] >= w[1]) && self.taken[0] - fewest <= 1;
        if in_turn {
            return (0..SEQUENCES)
                .find(|k| self.taken[*k] == fewest)
                .unwrap_or(0);
        }
        self.draw(None, random)
    }

    /// The sequence to try after `tried` failed (a race lost to a create
    /// at the same moment): drawn from `random`, among those that handed
    /// out the fewest ids if one of them is left, else among all but
    /// `tried`, so that racing creates spread and the sequences stay even.
    pub fn other_choice(&self, tried: usize, random: [u8; 16]) -> usize {
        self.draw(Some(tried), random)
    }

    /// One of the least used sequences but `tried`, drawn from `random`
    /// (any but `tried` if none is left).
    fn draw(&self, tried: Option<usize>, random: [u8; 16]) -> usize {
        let fewest = self.taken.iter().copied().min().unwrap_or(0);
        let others = (0..SEQUENCES).filter(|k| Some(*k) != tried);
        let even: Vec<usize> = others
            .clone()
            .filter(|k| self.taken[*k] == fewest)
            .collect();
        let pool: Vec<usize> = if even.is_empty() {
            others.collect()
        } else {
            even
        };
        let draw = u64::from_le_bytes([
            random[8], random[9], random[10], random[11], random[12], random[13], random[14],
            random[15],
        ]);
        pool[(draw % pool.len() as u64) as usize]
    }
}

impl<S: KvStore> Catalogue<'_, Retrying<'_, S>> {
    /// The store's layout and its sequences: one `get-many` (DynamoDB's).
    pub fn survey(&self) -> Result<Layout, ApiError> {
        let found = self.store.get_many(&survey_keys())?;
        Layout::of(|key| {
            found
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_slice())
        })
    }

    /// The layout a create on a store declared `aws_dynamo` writes: the
    /// store's, or, on a store no create ran on, layout v3.
    pub fn layout_for_create(&self) -> Result<Layout, ApiError> {
        match self.survey()? {
            Layout::Unclaimed => self.claim_layout(),
            layout => Ok(layout),
        }
    }

    /// A store no create ran on becomes layout v3: `ctr:id` is claimed with
    /// [`V3_MARK`] by put-if-absent (DynamoDB's compare-and-swap on an
    /// absent key). A release of layout v2 that created first made it a
    /// counter, and the store stays v2. Returns the layout it holds then.
    pub fn claim_layout(&self) -> Result<Layout, ApiError> {
        let mut backoff = self.store.backoff();
        let mut failure = StoreError("the layout's claim did not land".into());
        loop {
            match self.store.cas_begin(ID_COUNTER) {
                Ok((cas, None)) => match self.store.cas_swap(cas, V3_MARK.to_string().as_bytes()) {
                    Ok(SwapReport::Swapped) => {
                        return Ok(Layout::Sequences(Sequences {
                            taken: [0; SEQUENCES],
                        }))
                    }
                    Ok(SwapReport::Conflict) => {}
                    Err(e) => failure = e,
                },
                Ok((_, Some(_))) => return self.survey(),
                Err(e) => failure = e,
            }
            // Whatever the swap reported, what the key holds decides.
            match self.survey()? {
                Layout::Unclaimed if backoff.wait() => continue,
                Layout::Unclaimed => return Err(ApiError::StoreUnavailable(failure)),
                layout => return Ok(layout),
            }
        }
    }

    /// An id from the sequences: `increment ids:{k}` of the
    /// [first choice](Sequences::first_choice); after a failure, another
    /// sequence (a race lost on one says nothing of the others), under the
    /// retry policy's bound. A failed `increment` was not applied; one whose
    /// reply was lost leaves an id no pet will hold: a hole.
    pub fn reserve_in(&self, sequences: &Sequences) -> Result<i64, ApiError> {
        let mut backoff = self.store.backoff();
        let mut k = sequences.first_choice(self.store.random());
        loop {
            match self.store.inner().increment(&sequence_key(k), 1) {
                Ok(n) => return Ok(Sequences::id(k, n)),
                Err(e) => {
                    self.store.learn(&e, &mut backoff);
                    if !backoff.wait() {
                        return Err(ApiError::StoreUnavailable(e));
                    }
                    k = sequences.other_choice(k, self.store.random());
                }
            }
        }
    }
}

/// A create of layout v2 that drew an id at or above [`V3_MARK`]: the store
/// holds layout v3, which only an instance declared `aws_dynamo` writes.
pub fn not_this_layout() -> ApiError {
    ApiError::Misconfigured(Misconfiguration {
        variable: "key_value_backend",
        why: "the store holds layout v3 (ids from sequences), which only an \
              instance declared 'aws_dynamo' writes: declare it so"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(taken: [i64; SEQUENCES]) -> Sequences {
        Sequences { taken }
    }

    #[test]
    fn ids_interleave_and_alone_a_create_takes_the_next_one() {
        let mut s = at([0; SEQUENCES]);
        for expected in 1..=40 {
            let k = s.first_choice([expected as u8; 16]);
            s.taken[k] += 1;
            assert_eq!(Sequences::id(k, s.taken[k]), expected);
            assert_eq!(s.last(), expected);
            assert!((1..=expected).all(|id| s.issued(id)));
            assert!(!s.issued(expected + 1));
        }
    }

    #[test]
    fn after_a_race_creates_spread_over_the_least_used() {
        // Sequences 0 and 5 took one id each at the same moment: 1 and 6.
        let mut taken = [0; SEQUENCES];
        taken[0] = 1;
        taken[5] = 1;
        let s = at(taken);
        assert_eq!(s.last(), 6);
        assert!(!s.issued(2) && s.issued(6) && !s.issued(7));
        let drawn: std::collections::BTreeSet<usize> =
            (0..=255u8).map(|b| s.first_choice([b; 16])).collect();
        assert!(drawn.len() > 8, "{drawn:?}");
        assert!(drawn.iter().all(|k| taken[*k] == 0), "{drawn:?}");
        // Uneven: 3 left behind by a race is the one to catch up, so that
        // no sequence runs away from the others.
        let mut taken = [2; SEQUENCES];
        taken[3] = 1;
        taken[12] = 3;
        let s = at(taken);
        assert!((0..=255u8).all(|b| s.first_choice([b; 16]) == 3));
    }

    #[test]
    fn another_choice_is_never_the_one_that_failed_and_keeps_sequences_even() {
        let mut taken = [3; SEQUENCES];
        taken[2] = 2;
        taken[9] = 2;
        let s = at(taken);
        for byte in 0..=255u8 {
            let k = s.other_choice(2, [byte; 16]);
            assert_eq!(k, 9);
        }
        let k = s.other_choice(9, [1; 16]);
        assert_eq!(k, 2);
        let s = at([4; SEQUENCES]);
        assert!((0..=255u8).all(|b| s.other_choice(0, [b; 16]) != 0));
    }

    #[test]
    fn the_layout_is_what_ctr_id_holds() {
        let none = |_: &str| None;
        assert_eq!(Layout::of(none).unwrap(), Layout::Unclaimed);
        let v2 = |k: &str| (k == ID_COUNTER).then_some(&b"41"[..]);
        assert_eq!(Layout::of(v2).unwrap(), Layout::Counters);
        let mark = V3_MARK.to_string();
        let v3 = |k: &str| match k {
            ID_COUNTER => Some(mark.as_bytes()),
            "ids:3" => Some(&b"2"[..]),
            _ => None,
        };
        let Layout::Sequences(s) = Layout::of(v3).unwrap() else {
            panic!("not v3")
        };
        assert_eq!(s.last(), Sequences::id(3, 2));
        assert!(s.issued(4) && s.issued(20) && !s.issued(36) && !s.issued(1));
    }
}
