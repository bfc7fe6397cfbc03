//! Every schedule the explorer found that broke a promise, kept as a test
//! once the code was fixed: each runs its one schedule and asserts that
//! the model finds nothing. docs/testing.md lists them.

use crate::cases::{self, Kind, State, LANES_32, LAYOUTS};
use crate::pairs::{self, Schedule};
use crate::world::World;

/// Runs `schedule` from its state; panics with its history if a promise
/// breaks.
fn replay(schedule: Schedule) {
    let base = cases::world(schedule.layout, schedule.state);
    let outcome = pairs::run(&base, &schedule);
    assert!(
        outcome.preempted,
        "the schedule no longer reaches its point"
    );
    pairs::fail_on(&schedule, &outcome);
}

/// getPet of a pet its lane's head held read `pet:{id}` (absent), then a
/// create in that lane stored the pet and moved the head on, then getPet
/// read the head: 404 for a pet committed long before (1.4.0). Fixed:
/// a head past the id's round means the pet is stored; getPet reads it
/// again.
// A lanes schedule: the edge build has no lanes.
#[test]
#[cfg(not(feature = "edge"))]
fn getpet_between_a_create_storing_its_pet_and_moving_its_head() {
    replay(Schedule {
        layout: LANES_32,
        state: State::Round,
        first: Kind::GetOldest,
        second: Kind::Create,
        at: 1,
        fault: None,
    });
}

/// Pages over a cold index (right after a burst of creates) ended early
/// when their reads ran out: at 64 look-ups one by one (SQLite, Redis),
/// and on lanes when a status sat in one lane (17 of 100: each batch asked
/// every lane for an even share). decisions.md promises full pages; they
/// are now, on every layout: a status in every lane, and in one.
#[test]
fn pages_over_a_cold_index_are_full() {
    for layout in LAYOUTS {
        let world = World::new(layout);
        let one_lane = layout.layout == "lanes";
        let creates = if one_lane { 3300 } else { 450 };
        for i in 0..creates {
            let status = match one_lane {
                true if i % 32 == 0 => "sold",
                true => "available",
                false => ["available", "pending", "sold"][i % 3],
            };
            world.create_named(i, &format!("b{i}"), status);
        }
        for status in [None, Some("sold")] {
            let walk = world.begin_walk(status, 100);
            world.walk_to_end(creates, walk, 40);
        }
        let violations = world.check();
        assert!(violations.is_empty(), "{}: {}", layout.name, violations[0]);
    }
}
