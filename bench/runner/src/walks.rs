//! Status lists on a store a network away: a DynamoDB Local table of the
//! lanes layout, served by two `spin up` instances, one straight to it and
//! one through a line adding `--dynamo-rtt-ms` to every call. For a status
//! holding 1 in 2 pets, 1 in 500 and 1 in 100,000 (two catalogues of
//! `--pets` each, preloaded by the component's own code):
//!
//! - a warm page of 20 and of 100 (the first, and one from the middle of
//!   the list): its calls, and its round trips = (p50 far − p50 near) ÷ the
//!   line's round trip, one client alternating between the two;
//! - the whole walk at `limit=100` through the line, along the `next` links:
//!   pages, short and empty pages, calls, time; every pet of the status
//!   listed once;
//! - the page right after a burst of 100 creates of that status: the walk's
//!   last page requested again (as a syncing client does), on each side in
//!   turn.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Result};
use petstore::model::PetStatus;
use petstore_e2e::client::{pet_body, Api};
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};

use crate::load;
use crate::options::Options;
use crate::setup::{Deployment, Serving};

/// Bursts after each walk (alternately timed through the line and not).
pub const BURSTS: usize = 10;
const BURST: usize = 100;

/// The two catalogues each size is measured on.
#[derive(Clone, Copy)]
enum Catalogue {
    /// Even ids `available` (1 in 2), `n % 500 == 1` `sold` (1 in 500), the
    /// rest `pending`.
    Shares,
    /// One `sold` pet in 100,000 (id 50,000, 150,000, …; the middle one in
    /// a smaller catalogue), the rest alternating.
    Rare,
}

impl Catalogue {
    fn status(self, pets: usize) -> impl Fn(usize) -> PetStatus {
        move |n| match self {
            Catalogue::Shares if n % 2 == 0 => PetStatus::Available,
            Catalogue::Shares if n % 500 == 1 => PetStatus::Sold,
            Catalogue::Shares => PetStatus::Pending,
            Catalogue::Rare if n % 100_000 == 50_000 || (pets < 100_000 && n == pets / 2) => {
                PetStatus::Sold
            }
            Catalogue::Rare if n % 2 == 0 => PetStatus::Available,
            Catalogue::Rare => PetStatus::Pending,
        }
    }

    /// The lists measured, with the share each status holds.
    fn lists(self) -> &'static [(PetStatus, &'static str)] {
        match self {
            Catalogue::Shares => &[
                (PetStatus::Available, "1 in 2"),
                (PetStatus::Sold, "1 in 500"),
            ],
            Catalogue::Rare => &[(PetStatus::Sold, "1 in 100,000")],
        }
    }
}

/// The tables, filled as the run goes and printed at its end.
#[derive(Default)]
struct Tables {
    warm: Vec<String>,
    walks: Vec<String>,
    bursts: Vec<String>,
}

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    let rtt = serving.rtt("walks")?;
    let straight = serving.straight();
    let mut tables = Tables::default();
    for &pets in &o.pets {
        for catalogue in [Catalogue::Shares, Catalogue::Rare] {
            let store = Store::new(Backend::Dynamo);
            ensure!(store.layout == "lanes", "a DynamoDB store of layout lanes");
            let started = Instant::now();
            let status = catalogue.status(pets);
            store.preload(pets, &status);
            eprintln!(
                "{pets} pets preloaded in {:.0} s",
                started.elapsed().as_secs_f64()
            );
            let expected = |wanted: PetStatus| {
                (1..=pets)
                    .filter(|n| status(*n) == wanted)
                    .map(|n| n as i64)
                    .collect::<BTreeSet<i64>>()
            };
            let near = Deployment::serve(store, &straight);
            let far = near.beside(serving);
            for &(wanted, share) in catalogue.lists() {
                let label = format!("{} ({share})", wanted.as_str());
                let listed = expected(wanted);
                let first = format!("/v1/pets?status={}&limit=100", wanted.as_str());
                let walk = walk(&far.spin, &first, 100, &listed)?;
                let row = format!("| {pets} | {label} | {} |", listed.len());
                tables.walks.push(format!(
                    "{row} {} | {} | {} |",
                    walk.pages,
                    listed.len().div_ceil(100),
                    walk.summary()
                ));
                for limit in [20, 100] {
                    let first = format!("/v1/pets?status={}&limit={limit}", wanted.as_str());
                    let (calls, near_ms, far_ms) = warm(&near.spin, &far.spin, &first, o.seconds)?;
                    tables.warm.push(format!(
                        "{row} first page of {limit} | {calls} | {near_ms:.2} | {far_ms:.2} | {:.2} |",
                        (far_ms - near_ms) / rtt
                    ));
                }
                if let Some(middle) = &walk.middle {
                    let (calls, near_ms, far_ms) = warm(&near.spin, &far.spin, middle, o.seconds)?;
                    tables.warm.push(format!(
                        "{row} a page of 100 mid-list | {calls} | {near_ms:.2} | {far_ms:.2} | {:.2} |",
                        (far_ms - near_ms) / rtt
                    ));
                }
                for line in bursts(&near.spin, &far.spin, wanted, &walk.end, rtt)? {
                    tables.bursts.push(format!("{row} {line}"));
                }
            }
        }
    }
    print(&tables, rtt);
    Ok(())
}

fn print(tables: &Tables, rtt: f64) {
    println!(
        "\n## Warm status pages, DynamoDB Local, layout lanes, straight and +{rtt} ms a call\n"
    );
    println!("| pets | status (share) | pets of it | page | calls | p50 straight ms | p50 through the line ms | round trips |");
    println!("|---:|---|---:|---|---:|---:|---:|---:|");
    for row in &tables.warm {
        println!("{row}");
    }
    println!("\n## Status walks at limit=100, along the `next` links, +{rtt} ms a call\n");
    println!("| pets | status (share) | pets of it | pages | full pages needed | short pages before the last | empty pages | calls a page: p50 / max | walk ms |");
    println!("|---:|---|---:|---:|---:|---:|---:|---|---:|");
    for row in &tables.walks {
        println!("{row}");
    }
    println!("\n## The walk's last page requested again after a burst of {BURST} creates of its status\n");
    println!("| pets | status (share) | pets of it | calls | ms straight (median) | ms through the line | round trips |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for row in &tables.bursts {
        println!("{row}");
    }
}

/// What a walk found.
pub struct Walk {
    pages: usize,
    short_before_last: usize,
    empty: usize,
    calls: Vec<u64>,
    ms: f64,
    /// The last page's target: where a syncing client resumes.
    pub end: String,
    /// A page from the middle of the walk.
    middle: Option<String>,
}

impl Walk {
    fn summary(&self) -> String {
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
pub fn walk(spin: &SpinUp, first: &str, limit: usize, expected: &BTreeSet<i64>) -> Result<Walk> {
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

/// A warm page: its calls (read once, through the line), and p50 on each
/// side with one client alternating between them.
fn warm(near: &SpinUp, far: &SpinUp, target: &str, seconds: f64) -> Result<(u64, f64, f64)> {
    let id = format!("warm-{}", fresh());
    let r = far.api.get_with(target, &[("x-request-id", &id)]);
    ensure!(r.status == 200, "{target}: {} {}", r.status, r.body);
    near.api.get(target);
    let calls = logged_calls(far, &id)?;
    let auth = format!("Bearer {}", petstore_e2e::client::KEY);
    let request = load::Request {
        fixed: load::raw("GET", target, &[("authorization", &auth)], ""),
        fresh: None,
        expect: 200,
    };
    let address = |api: &Api| api.base.trim_start_matches("http://").to_string();
    let (a, b) = load::alternate(
        [&address(&near.api), &address(&far.api)],
        &request,
        &request,
        1,
        seconds,
    )?;
    Ok((calls, a.percentile(0.5), b.percentile(0.5)))
}

/// A number no earlier request id of the run used.
fn fresh() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// [`BURSTS`] bursts of `BURST` creates of `status`, each followed by the
/// list's last page (`end`) requested again, alternately through the line
/// (`far`) and straight (`near`): per burst through the line, its calls,
/// its time, the median time straight, and the round trips that makes.
pub fn bursts(
    near: &SpinUp,
    far: &SpinUp,
    status: PetStatus,
    end: &str,
    rtt: f64,
) -> Result<Vec<String>> {
    let mut end = end.to_string();
    let (mut straight, mut through) = (Vec::new(), Vec::new());
    for burst in 0..BURSTS {
        let side = if burst % 2 == 0 { far } else { near };
        let (ms, calls, next_end) = after_burst(near, side, status, &end, burst)?;
        if burst % 2 == 0 {
            through.push((ms, calls));
        } else {
            straight.push(ms);
        }
        end = next_end;
    }
    straight.sort_by(f64::total_cmp);
    let median = straight[straight.len() / 2];
    Ok(through
        .into_iter()
        .map(|(ms, calls)| {
            format!(
                "{calls} | {median:.1} | {ms:.1} | {:.2} |",
                (ms - median) / rtt
            )
        })
        .collect())
}

/// `BURST` creates of `status` from 8 clients through `near`, then `end`
/// (the walk's last page) requested again on `side`: its time and calls,
/// and the new end of the walk. The page must list the burst's pets.
pub fn after_burst(
    near: &SpinUp,
    side: &SpinUp,
    status: PetStatus,
    end: &str,
    burst: usize,
) -> Result<(f64, u64, String)> {
    let body = pet_body("burst", status.as_str());
    let created: Vec<i64> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..8)
            .map(|c| {
                let (api, body) = (&near.api, &body);
                scope.spawn(move || {
                    (c..BURST)
                        .step_by(8)
                        .map(|_| api.post(body))
                        .filter(|r| r.status == 201)
                        .map(|r| r.created_id())
                        .collect::<Vec<i64>>()
                })
            })
            .collect();
        clients
            .into_iter()
            .flat_map(|c| c.join().unwrap_or_default())
            .collect()
    });
    ensure!(
        created.len() == BURST,
        "burst {burst}: {} created",
        created.len()
    );
    let id = format!("burst-{}-{burst}-{}", status.as_str(), fresh());
    let sent = Instant::now();
    let r = side.api.get_with(end, &[("x-request-id", &id)]);
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    ensure!(r.status == 200, "{end}: {} {}", r.status, r.body);
    let listed: BTreeSet<i64> = r.ids().into_iter().collect();
    let wanted: BTreeSet<i64> = created.into_iter().collect();
    ensure!(
        listed == wanted,
        "burst {burst}: the page after it listed {} of {BURST}",
        listed.len()
    );
    // On to the new end: the page after lists nothing, and has no link.
    let mut next = r
        .next_link()
        .ok_or_else(|| anyhow::anyhow!("no next link"))?;
    loop {
        let page = near.api.get(&next);
        ensure!(page.ids().is_empty(), "pets after the burst's");
        match page.next_link() {
            Some(more) => next = more,
            None => break,
        }
    }
    Ok((ms, logged_calls(side, &id)?, next))
}

/// The `kv_calls` of the request `id` in the access log.
fn logged_calls(spin: &SpinUp, id: &str) -> Result<u64> {
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
