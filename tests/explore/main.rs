//! The interleaving explorer: concurrent requests run call by call on the
//! component's own code (its router and catalogue), over a store that
//! stops at every call and inside every call that is not atomic on the
//! real backend, on every layout and from every state that matters; every
//! run finished and judged by the model of what the service promises
//! (`petstore_testkit::model`, whose rules are the sentences of
//! docs/decisions.md). As S3's ShardStore is checked: docs/testing.md.

// Built with `--features edge`, it explores the edge build's one layout;
// the default layouts' cases stay compiled but unused.
#![cfg_attr(feature = "edge", allow(dead_code, unused_imports))]

mod cases;
mod faults;
mod found;
mod invariants;
mod pairs;
mod schedules;
mod stalls;
mod world;

use cases::{kinds_from, states, steps_from, LAYOUTS};
use world::Layout;

/// Says what a test explored, and in how long: on stderr, and in
/// `target/explorer/{test}.txt`, which `scripts/test` prints (a passing
/// test's output is not shown).
fn report(test: &str, lines: &[String], began: std::time::Instant) {
    let took = format!(
        "explorer: {test} took {:.0} s",
        began.elapsed().as_secs_f64()
    );
    let text = lines.join("\n") + "\n" + &took + "\n";
    eprint!("{text}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer");
    if std::fs::create_dir_all(&dir).is_ok() {
        // The edge build's runs (`--features edge`) beside the default's.
        let build = if cfg!(feature = "edge") { "-edge" } else { "" };
        let _ = std::fs::write(dir.join(format!("{test}{build}.txt")), text);
    }
}

/// `explore` run on each layout of the build (with its index), its lines
/// reported as `test`'s.
fn per_layout(test: &str, explore: impl Fn(usize, Layout) -> String) {
    let began = std::time::Instant::now();
    let lines: Vec<String> = LAYOUTS
        .into_iter()
        .enumerate()
        .map(|(n, l)| explore(n, l))
        .collect();
    report(test, &lines, began);
}

/// Every ordered pair of kinds, exhaustively with one preemption, from
/// every state of `layout`, the second also a step of time or of
/// replication; the schedules run.
fn pairs_on(layout: Layout) -> usize {
    let (mut runs, began) = (0, std::time::Instant::now());
    for state in states(&layout) {
        let base = cases::world(layout, state);
        let seconds = [kinds_from(&layout, state), steps_from(&layout, state)].concat();
        for first in kinds_from(&layout, state) {
            for &second in &seconds {
                runs += pairs::explore(&base, layout, state, first, second);
            }
        }
    }
    report(
        &format!("pairs-{}", layout.name.replace(' ', "-")),
        &[format!(
            "explorer: {runs:>6} schedules of 2 requests or a request and a step (every point, one preemption) on {}",
            layout.name
        )],
        began,
    );
    runs
}

#[test]
#[cfg(not(feature = "edge"))]
fn pairs_counters_on_sqlite() {
    pairs_on(LAYOUTS[0]);
}

#[test]
#[cfg(not(feature = "edge"))]
fn pairs_counters_on_redis() {
    pairs_on(LAYOUTS[1]);
}

#[test]
#[cfg(not(feature = "edge"))]
fn pairs_counters_on_dynamodb() {
    pairs_on(LAYOUTS[2]);
}

#[test]
#[cfg(not(feature = "edge"))]
fn pairs_on_32_lanes() {
    pairs_on(LAYOUTS[3]);
}

#[test]
#[cfg(not(feature = "edge"))]
fn pairs_on_16_lanes() {
    pairs_on(LAYOUTS[4]);
}

#[test]
#[cfg(not(feature = "edge"))]
fn pairs_while_moving_to_lanes() {
    pairs_on(LAYOUTS[5]);
}

#[test]
#[cfg(feature = "edge")]
fn pairs_on_the_replicated_layout() {
    pairs_on(LAYOUTS[0]);
}

/// The two requests served by two replicas, neither seeing the other's
/// writes until the run settles.
#[test]
#[cfg(feature = "edge")]
fn pairs_on_the_replicated_layout_on_3_replicas() {
    pairs_on(LAYOUTS[1]);
}

/// Schedules of three and four requests under PCT, per layout.
const SCHEDULES: usize = 3500;

#[test]
fn schedules_on_every_layout() {
    per_layout("schedules", |n, layout| {
        let runs = schedules::explore(layout, SCHEDULES, n as u64 + 1);
        format!(
            "explorer: {runs:>6} schedules of 3-4 requests (PCT, a fault in a third) on {}",
            layout.name
        )
    });
}

/// A create and a keyed create paused twice, another request between
/// (`stalls.rs`): the default build's windows.
#[test]
#[cfg(not(feature = "edge"))]
fn a_create_paused_twice() {
    per_layout("stalls", |_, layout| {
        let runs = stalls::explore(layout);
        format!("explorer: {runs:>6} runs of a create paused twice, another request at the second pause, on {}", layout.name)
    });
}

#[test]
fn faults_at_the_calls_of_one_request() {
    per_layout("faults", |_, layout| {
        let runs = faults::explore(layout);
        format!(
            "explorer: {:>6} runs of 1 request, a fault at each of its calls, and {:>6} with two, on {}",
            runs.one, runs.two, layout.name
        )
    });
}
