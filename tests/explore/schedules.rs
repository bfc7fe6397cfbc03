//! Three and four concurrent requests under a controlled scheduler
//! (shuttle's PCT: priorities drawn per run, changed at a few random
//! points, which finds bugs of small depth with a known probability), each
//! request a thread that yields at every scheduling point of the store; a
//! fault at a chosen call in a third of the runs; on replicas, a thread
//! that delivers writes to replicas early. Every run is finished
//! and judged by the model; a failing run prints the schedule that
//! replays it: kept in `found.rs` as
//! `shuttle::replay(move || one(&bases(layout)), "…")`.

use std::sync::Arc;

use petstore_testkit::explore::{Fault, Strike};
use shuttle::rand::Rng;
use shuttle::scheduler::PctScheduler;
use shuttle::{Config, Runner};

use crate::cases::{self, finish, kinds_from, states, State};
use crate::pairs::report;
use crate::world::{Layout, World};

/// PCT's depth: bugs that need up to this many priority changes.
const DEPTH: usize = 3;

/// On replicas, how many times a run's replicator thread delivers a write
/// early (the rest arrive once the clock passes their delay).
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
    let fault = rng.gen_bool(1.0 / 3.0).then(|| Fault {
        request: rng.gen_range(0..count),
        call: rng.gen_range(1..=6),
        strike: Strike::ALL[rng.gen_range(0..Strike::ALL.len())],
    });
    if let Some(fault) = fault {
        world.inject(fault);
    }
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
    if base.layout.replicas > 1 {
        let world = world.clone();
        threads.push(shuttle::thread::spawn(move || deliver(&world)));
    }
    for thread in threads {
        thread.join().expect("a request's thread");
    }
    world.shared.set_yielder(None);
    finish(&world);
    let violations = world.check();
    if !violations.is_empty() {
        let what = format!(
            "{} from {state:?}: {requests:?}, {fault:?}",
            base.layout.name
        );
        panic!("{}", report(&what, &violations, &world));
    }
}

/// The replication of a run on replicas, as a thread of its own: at points
/// the scheduler picks, one write on its way (drawn: so they arrive out of
/// order) reaches its replica.
fn deliver(world: &World) {
    let mut rng = shuttle::rand::thread_rng();
    for _ in 0..DELIVERIES {
        shuttle::thread::yield_now();
        if rng.gen_bool(0.5) {
            world.shared.deliver_one(rng.gen_range(0..64));
        } else {
            world.advance_ms(TICK_MS);
        }
    }
}
