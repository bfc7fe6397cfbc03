//! Every schedule the explorer found that broke a promise, kept as a test
//! once the code was fixed: each runs its one schedule and asserts that
//! the model finds nothing. docs/testing.md lists them.

use crate::cases::{self, Kind, State, LANES_32};
use crate::pairs::{self, Schedule};

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
#[test]
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
