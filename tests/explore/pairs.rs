//! Two concurrent requests, explored exhaustively with one preemption: the
//! second run whole at every scheduling point of the first (every call,
//! and inside the calls that are not atomic), for every ordered pair of
//! kinds, on every layout, from every state; each run finished and judged
//! by the model.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use petstore_testkit::explore::Fault;

use crate::cases::{self, finish, Kind, State};
use crate::world::{Layout, World};

/// One schedule: `second` run whole at point `at` of `first` (from 0:
/// before its first call), with a fault, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub layout: Layout,
    pub state: State,
    pub first: Kind,
    pub second: Kind,
    pub at: usize,
    pub fault: Option<Fault>,
}

/// What one schedule did: whether the second request ran (the first
/// reached point `at`), and what the model said.
pub struct Outcome {
    pub preempted: bool,
    pub violations: Vec<String>,
    pub world: World,
}

/// Runs one schedule from `base` (a store in the schedule's state).
pub fn run(base: &World, schedule: &Schedule) -> Outcome {
    let mut world = base.fork();
    if let Some(fault) = schedule.fault {
        world.inject(fault);
    }
    let world = Arc::new(world);
    let points = AtomicUsize::new(0);
    let preempted = Arc::new(AtomicBool::new(false));
    let second = Mutex::new(Some(schedule.second));
    let (w, p, at) = (world.clone(), preempted.clone(), schedule.at);
    world.shared.set_yielder(Some(Arc::new(move |request| {
        if request != 0 || points.fetch_add(1, Ordering::SeqCst) != at {
            return;
        }
        if let Some(kind) = second.lock().unwrap().take() {
            p.store(true, Ordering::SeqCst);
            cases::run(&w, kind, 1);
        }
    })));
    cases::run(&world, schedule.first, 0);
    world.shared.set_yielder(None);
    let world = Arc::into_inner(world).expect("the run's one owner");
    finish(&world);
    Outcome {
        preempted: preempted.load(Ordering::SeqCst),
        violations: world.check(),
        world,
    }
}

/// Every point of `first` for `second`, from `base`; the schedules run.
/// Panics with the first failing schedule.
pub fn explore(base: &World, layout: Layout, state: State, first: Kind, second: Kind) -> usize {
    let mut runs = 0;
    for at in 0.. {
        let schedule = Schedule {
            layout,
            state,
            first,
            second,
            at,
            fault: None,
        };
        let outcome = run(base, &schedule);
        runs += 1;
        fail_on(&schedule, &outcome);
        if !outcome.preempted {
            return runs;
        }
    }
    runs
}

/// Panics with the schedule and its history if the model found violations.
pub fn fail_on(schedule: &Schedule, outcome: &Outcome) {
    if !outcome.violations.is_empty() {
        let what = format!("{schedule:?}");
        panic!("{}", report(&what, &outcome.violations, &outcome.world));
    }
}

/// What a failing run shows: what ran, what broke, the history.
pub fn report(what: &str, violations: &[String], world: &World) -> String {
    let mut report = format!("the explorer found a run the promises do not allow:\n  {what}\n");
    for v in violations {
        report.push_str(&format!("  violation: {v}\n"));
    }
    report.push_str("history:\n");
    for (n, e) in world.history().events.iter().enumerate() {
        report.push_str(&format!("  {n:3} {e}\n"));
    }
    report
}
