//! A walk of a list along its `next` links, checked against the pets it
//! must list; and the access log's `kv_calls` of the requests this bench
//! names with ids of their own.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Result};
use petstore_e2e::spin::SpinUp;

/// What a walk found.
pub(crate) struct Walk {
    pub(super) pages: usize,
    short_before_last: usize,
    empty: usize,
    calls: Vec<u64>,
    ms: f64,
    /// The last page's target: where a syncing client resumes.
    pub(crate) end: String,
    /// A page from the middle of the walk.
    pub(super) middle: Option<String>,
}

impl Walk {
    pub(super) fn summary(&self) -> String {
        let mut calls = self.calls.clone();
        calls.sort_unstable();
        format!(
            "{} | {} | {} / {} | {:.0}",
            self.short_before_last,
            self.empty,
            calls[calls.len() / 2],
            calls[calls.len() - 1],
            self.ms
        )
    }
}

/// Walks a list from `first` (a page of `limit`) along its `next` links,
/// through `spin`; every pet of `expected` must be listed once, and
/// nothing else.
pub(crate) fn walk(
    spin: &SpinUp,
    first: &str,
    limit: usize,
    expected: &BTreeSet<i64>,
) -> Result<Walk> {
    let api = &spin.api;
    let run = format!("walk-{}", fresh());
    let mut target = first.to_string();
    let mut targets = Vec::new();
    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    let started = Instant::now();
    loop {
        let id = format!("{run}-{}", targets.len());
        let r = api.get_with(&target, &[("x-request-id", &id)]);
        ensure!(r.status == 200, "{target}: {} {}", r.status, r.body);
        let ids = r.ids();
        sizes.push(ids.len());
        seen.extend(ids.iter().copied());
        targets.push(target.clone());
        match r.next_link() {
            Some(next) => target = next,
            None => break,
        }
    }
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    // Pages that list pets, the last of them aside, must be full.
    let listing: Vec<usize> = sizes.iter().copied().filter(|n| *n > 0).collect();
    let short_before_last = listing
        .iter()
        .take(listing.len().saturating_sub(1))
        .filter(|n| **n < limit)
        .count();
    let empty = sizes.len() - listing.len();
    let distinct: BTreeSet<i64> = seen.iter().copied().collect();
    ensure!(
        distinct.len() == seen.len() && &distinct == expected,
        "{run}: listed {} ({} distinct), expected {}",
        seen.len(),
        distinct.len(),
        expected.len()
    );
    let calls = calls_of_run(spin, &run, targets.len())?;
    Ok(Walk {
        pages: targets.len(),
        short_before_last,
        empty,
        calls,
        ms,
        end: target,
        middle: (targets.len() > 2).then(|| targets[targets.len() / 2].clone()),
    })
}

/// A number no earlier request id of the run used.
pub(super) fn fresh() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The `kv_calls` of the request `id` in the access log.
pub(super) fn logged_calls(spin: &SpinUp, id: &str) -> Result<u64> {
    Ok(calls_of_run(spin, id, 1)?[0])
}

/// The `kv_calls` of the requests `<run>-0` … `<run>-<n-1>` (or of `run`
/// itself when `n` is 1) in the access log, in that order; Spin writes
/// each line after its response: wait for them.
fn calls_of_run(spin: &SpinUp, run: &str, n: usize) -> Result<Vec<u64>> {
    let id = |i: usize| {
        if n == 1 {
            run.to_string()
        } else {
            format!("{run}-{i}")
        }
    };
    for _ in 0..200 {
        let found: std::collections::BTreeMap<String, u64> = spin
            .log_lines()
            .iter()
            .filter_map(|l| {
                Some((
                    l["request_id"].as_str()?.to_string(),
                    l["kv_calls"].as_u64()?,
                ))
            })
            .filter(|(k, _)| k.starts_with(run))
            .collect();
        if let Some(calls) = (0..n).map(|i| found.get(&id(i)).copied()).collect() {
            return Ok(calls);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("the access log lacks lines of {run}")
}
