//! Three and four concurrent requests under a controlled scheduler
//! (shuttle's PCT: priorities drawn per run, changed at a few random
//! points, which finds bugs of small depth with a known probability), each
//! request a thread that yields at every scheduling point of the store; a
//! fault at a chosen call in a third of the runs, a second in a third of
//! those; a thread of time that, at points the scheduler picks, moves the
//! clocks 400 ms or past a window the code keeps, and on replicas
//! delivers writes early, out of order. Every run is finished
//! and judged by the model; a failing run prints the schedule that
//! replays it: kept in `found.rs` as
//! `shuttle::replay(move || one(&bases(layout)), "…")`.

use std::sync::Arc;

use petstore_testkit::explore::{Fault, Strike};
use shuttle::rand::Rng;
use shuttle::scheduler::PctScheduler;
use shuttle::{Config, Runner};

use crate::cases::{self, finish, kinds_from, states, steps, Kind, State, Step};
use crate::pairs::report;
use crate::world::{Layout, World};

/// PCT's depth: bugs that need up to this many priority changes.
const DEPTH: usize = 3;

/// How many steps a run's thread of time takes: on replicas, each a write
/// delivered early (the rest arrive once the clock passes their delay) or
/// the clocks moved on; elsewhere the clocks moved on.
const DELIVERIES: usize = 8;
const TICK_MS: u64 = 400;

/// `iterations` runs of PCT on `layout`, from each of its states in turn;
/// the runs made.
pub fn explore(layout: Layout, iterations: usize, seed: u64) -> usize {
    let bases = Arc::new(bases(layout));
    let scheduler = PctScheduler::new_from_seed(seed, DEPTH, iterations);
    Runner::new(scheduler, Config::new()).run(move || one(&bases))
}

/// A store in each state of `layout`, to run from.
fn bases(layout: Layout) -> Vec<(State, World)> {
    states(&layout)
        .into_iter()
        .map(|state| (state, cases::world(layout, state)))
        .collect()
}

/// One run: a state, three or four requests of kinds drawn at random
/// (shuttle's random source, so that a schedule replays the same run),
/// perhaps a fault.
fn one(bases: &[(State, World)]) {
    let mut rng = shuttle::rand::thread_rng();
    let (state, base) = &bases[rng.gen_range(0..bases.len())];
    let drawn = kinds_from(&base.layout, *state);
    let count = rng.gen_range(3..=4);
    let requests: Vec<_> = (0..count)
        .map(|_| drawn[rng.gen_range(0..drawn.len())])
        .collect();
    let mut world = base.fork();
    // A fault in a third of the runs, a second in a third of those.
    let first = rng.gen_bool(1.0 / 3.0);
    let strikes = first as usize + (first && rng.gen_bool(1.0 / 3.0)) as usize;
    let faults: Vec<Fault> = (0..strikes)
        .map(|_| Fault {
            request: rng.gen_range(0..count),
            call: rng.gen_range(1..=6),
            strike: Strike::ALL[rng.gen_range(0..Strike::ALL.len())],
        })
        .collect();
    faults.iter().for_each(|f| world.inject(*f));
    let world = Arc::new(world);
    world
        .shared
        .set_yielder(Some(Arc::new(|_| shuttle::thread::yield_now())));
    let mut threads: Vec<_> = requests
        .iter()
        .enumerate()
        .map(|(n, kind)| {
            let (world, kind) = (world.clone(), *kind);
            shuttle::thread::spawn(move || cases::run(&world, kind, n))
        })
        .collect();
    let time = world.clone();
    threads.push(shuttle::thread::spawn(move || deliver(&time)));
    for thread in threads {
        thread.join().expect("a request's thread");
    }
    world.shared.set_yielder(None);
    finish(&world);
    let violations = world.check();
    if !violations.is_empty() {
        let what = format!(
            "{} from {state:?}: {requests:?}, {faults:?}",
            base.layout.name
        );
        panic!("{}", report(&what, &violations, &world));
    }
}

/// Time and replication, as a thread of their own: at points the
/// scheduler picks, one write on its way (drawn: so they arrive out of
/// order) reaches its replica, or the clocks move on 400 ms, or (one step
/// in four) past a window the layout's code keeps.
fn deliver(world: &World) {
    let mut rng = shuttle::rand::thread_rng();
    let windows: Vec<Step> = steps(&world.layout)
        .into_iter()
        .filter_map(|k| match k {
            Kind::Step(step @ Step::Past(_)) => Some(step),
            _ => None,
        })
        .collect();
    for _ in 0..DELIVERIES {
        shuttle::thread::yield_now();
        if world.layout.replicas > 1 && rng.gen_bool(0.5) {
            world.shared.deliver_one(rng.gen_range(0..64));
        } else if rng.gen_bool(0.25) {
            cases::take(world, windows[rng.gen_range(0..windows.len())]);
        } else {
            world.advance_ms(TICK_MS);
        }
    }
}
