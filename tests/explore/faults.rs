//! A fault at every call of one request: each of its calls failed, applied
//! with its reply lost, a `set-many` applied in part (its first pair, or
//! its last), or the instance dying there; from every state of every
//! layout, each run finished and judged by the model.

use petstore_testkit::explore::{Fault, Strike};

use crate::cases::{self, finish, kinds_from, states};
use crate::pairs::report;
use crate::world::Layout;

/// Every strike at every call of every kind on `layout`; the runs made.
pub fn explore(layout: Layout) -> usize {
    let mut runs = 0;
    for state in states(&layout) {
        let base = cases::world(layout, state);
        for kind in kinds_from(&layout, state) {
            let trial = base.fork();
            cases::run(&trial, kind, 0);
            for call in 1..=trial.shared.calls(0) {
                for strike in Strike::ALL {
                    let mut world = base.fork();
                    let fault = Fault {
                        request: 0,
                        call,
                        strike,
                    };
                    world.inject(fault);
                    cases::run(&world, kind, 0);
                    finish(&world);
                    runs += 1;
                    let violations = world.check();
                    if !violations.is_empty() {
                        let what = format!("{} from {state:?}: {kind:?}, {fault:?}", layout.name);
                        panic!("{}", report(&what, &violations, &world));
                    }
                }
            }
        }
    }
    runs
}
