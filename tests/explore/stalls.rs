//! A create paused twice: at one call for the longest the design allows a
//! commit in flight (`SEAL_AFTER_MS` − `COMMIT_WITHIN_MS`, 1 ms short),
//! then, at each later call, every clock moved past a keyed create's
//! commit window and another request run whole (a keyed create with the
//! same key, a follower's page). The sum passes the record's seal: a create
//! that commits after both pauses has not checked its window, and its pet
//! lands after readers gave its place up. Pairs cannot make it (one pause,
//! and a single pause that long inside a commit is past what the design
//! allows); each run is finished and judged.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::cases::{self, finish, kinds_from, states, Kind, State, Step, Then, Window};
use crate::pairs::report;
use crate::world::{Layout, World};

/// What runs after the second pause.
const AFTER: [Kind; 2] = [
    Kind::Then(Step::Past(Window::Commit), Then::Keyed),
    Kind::Then(Step::Past(Window::Commit), Then::CursorPage),
];

/// Every first pause at every call of a create and a keyed create, and
/// every second at each later call, from the states of few pets; the runs.
pub fn explore(layout: Layout) -> usize {
    let mut runs = 0;
    let few = |s: &State| !matches!(s, State::Merged | State::MergedBehind | State::Pieces);
    for state in states(&layout).into_iter().filter(few) {
        let base = cases::world(layout, state);
        let kinds = kinds_from(&layout, state).into_iter();
        for kind in kinds.filter(|k| matches!(k, Kind::Create | Kind::Keyed)) {
            let trial = base.fork();
            cases::run(&trial, kind, 0);
            for first in 1..=trial.shared.calls(0) {
                let once = run(&base, (state, kind), first, None);
                runs += 1;
                for second in first + 1..=once.shared.calls(0) {
                    for then in AFTER {
                        run(&base, (state, kind), first, Some((second, then)));
                        runs += 1;
                    }
                }
            }
        }
    }
    runs
}

/// `kind` as request 0, paused before call `first` and, if asked, before
/// call `second` with `then` run there as request 1; finished and judged.
fn run(
    base: &World,
    (state, kind): (State, Kind),
    first: u64,
    second: Option<(u64, Kind)>,
) -> World {
    let world = Arc::new(base.fork());
    let (w, paused, ran) = (
        world.clone(),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    world.shared.set_yielder(Some(Arc::new(move |request| {
        if request != 0 {
            return;
        }
        // The next call of request 0 is call `made + 1`.
        let made = w.shared.calls(0);
        if made + 1 == first && !paused.swap(true, Ordering::SeqCst) {
            w.stall_ms(Window::InFlight.past_ms(&w.layout));
        }
        if let Some((at, then)) = second {
            if made + 1 == at && !ran.swap(true, Ordering::SeqCst) {
                cases::run(&w, then, 1);
            }
        }
    })));
    cases::run(&world, kind, 0);
    world.shared.set_yielder(None);
    let world = Arc::into_inner(world).expect("the run's one owner");
    finish(&world);
    let violations = world.check();
    if !violations.is_empty() {
        let layout = world.layout.name;
        let what =
            format!("{layout} from {state:?}: {kind:?} paused at call {first}, then {second:?}");
        panic!("{}", report(&what, &violations, &world));
    }
    world
}
