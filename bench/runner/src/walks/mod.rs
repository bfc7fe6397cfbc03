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

mod bursts;
mod walk;

use std::collections::BTreeSet;
use std::time::Instant;

use anyhow::{ensure, Result};
use petstore::model::PetStatus;
use petstore_e2e::client::Api;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};

use crate::load;
use crate::options::Options;
use crate::setup::{Deployment, Serving};
use bursts::BURST;
pub(crate) use bursts::{bursts, BURSTS};
pub(crate) use walk::walk;
use walk::{fresh, logged_calls};

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
