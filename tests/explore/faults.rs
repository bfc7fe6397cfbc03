//! Faults at the calls of one request: each of its calls failed, applied
//! with its reply lost, a `set-many` applied in part (its first pair, or
//! its last), or the instance dying there; then every ordered pair of
//! them (a second strike at each later call of the run the first made).
//! From every state of every layout, each run finished and judged.

use petstore_testkit::explore::{Fault, Strike};

use crate::cases::{self, finish, kinds_from, states, Kind, State};
use crate::pairs::report;
use crate::world::{Layout, World};

/// The runs made: with one strike, and with two.
pub struct Runs {
    pub one: usize,
    pub two: usize,
}

/// Every strike at every call of every kind on `layout`, and every
/// ordered pair of them; the runs made.
pub fn explore(layout: Layout) -> Runs {
    let mut runs = Runs { one: 0, two: 0 };
    for state in states(&layout) {
        let base = cases::world(layout, state);
        for kind in kinds_from(&layout, state) {
            let trial = base.fork();
            cases::run(&trial, kind, 0);
            for first in strikes(&trial, 0) {
                let world = run(&base, (layout, state, kind), &[first]);
                runs.one += 1;
                if first.strike == Strike::Crash {
                    continue;
                }
                for second in strikes(&world, first.call) {
                    run(&base, (layout, state, kind), &[first, second]);
                    runs.two += 1;
                }
            }
        }
    }
    runs
}

/// Each strike that means something at each call of request 0 in `run`
/// after call `after` (a `set-many` applied in part: only a `set-many`
/// where it is not atomic).
fn strikes(run: &World, after: u64) -> Vec<Fault> {
    let calls = after + 1..=run.shared.calls(0);
    let in_part = run.shared.batches_in_part();
    let at = move |call| {
        let partial = in_part && run.shared.call_name(0, call) == Some("set-many");
        Strike::ALL
            .into_iter()
            .filter(move |s| partial || !matches!(s, Strike::PartialFirst | Strike::PartialLast))
            .map(move |strike| Fault {
                request: 0,
                call,
                strike,
            })
    };
    calls.flat_map(at).collect()
}

/// One run of `kind` from `base` under `faults`, finished and judged
/// (request 0's calls are its own: the finish's requests are numbered
/// apart); panics with its history if a promise breaks.
fn run(base: &World, (layout, state, kind): (Layout, State, Kind), faults: &[Fault]) -> World {
    let mut world = base.fork();
    faults.iter().for_each(|f| world.inject(*f));
    cases::run(&world, kind, 0);
    finish(&world);
    let violations = world.check();
    if !violations.is_empty() {
        let what = format!("{} from {state:?}: {kind:?}, {faults:?}", layout.name);
        panic!("{}", report(&what, &violations, &world));
    }
    world
}
