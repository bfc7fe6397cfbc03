//! What the explorer explores: each layout on the backends that hold it,
//! the store states that matter, the kinds of request, and how a run is
//! finished (every walk and keyed create taken to its end, every pet
//! fetched) so that the model sees every promise's outcome.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use petstore_testkit::explore::{Fault, Strike};
use petstore_testkit::model::{Answer, Call, IdOrder, Promise};
use petstore_testkit::Backend;

use crate::world::{pet_body, Layout, World, COMMIT_WITHIN_MS, LANDS_WITHIN_MS, LEASE_MS};
use crate::world::{REPLICATION_MS, SEAL_AFTER_MS};

const COUNTER: Promise = Promise {
    ids: IdOrder::Above,
    corrupt: false,
    faults: false,
    settles: false,
};

pub const COUNTERS_SQLITE: Layout = Layout {
    name: "counters on SQLite",
    backend: Backend::Sqlite,
    declared: "spin",
    layout: "counters",
    promise: COUNTER,
    replicas: 1,
    skew_ms: 0,
    interval_ms: 0,
};
pub const COUNTERS_REDIS: Layout = Layout {
    name: "counters on Redis",
    backend: Backend::Redis,
    declared: "redis",
    layout: "counters",
    promise: COUNTER,
    replicas: 1,
    skew_ms: 0,
    interval_ms: 0,
};
pub const COUNTERS_DYNAMO: Layout = Layout {
    name: "counters on DynamoDB",
    backend: Backend::Dynamo,
    declared: "aws_dynamo",
    layout: "counters",
    promise: COUNTER,
    replicas: 1,
    skew_ms: 0,
    interval_ms: 0,
};
pub const LANES_32: Layout = Layout {
    name: "32 lanes",
    backend: Backend::Dynamo,
    declared: "aws_dynamo",
    layout: "lanes",
    promise: Promise {
        ids: IdOrder::Within(127),
        corrupt: false,
        faults: false,
        settles: false,
    },
    replicas: 1,
    skew_ms: 0,
    interval_ms: 0,
};
/// A store 1.3.0 claimed: 16 lanes.
pub const LANES_16: Layout = Layout {
    name: "16 lanes",
    promise: Promise {
        ids: IdOrder::Within(63),
        corrupt: false,
        faults: false,
        settles: false,
    },
    ..LANES_32
};
/// A store in the middle of a move from counters to lanes.
pub const MOVING: Layout = Layout {
    name: "moving to lanes",
    ..LANES_32
};

#[cfg(not(feature = "edge"))]
pub const LAYOUTS: [Layout; 6] = [
    COUNTERS_SQLITE,
    COUNTERS_REDIS,
    COUNTERS_DYNAMO,
    LANES_32,
    LANES_16,
    MOVING,
];

/// The edge build's one layout (`--features edge`), on one SQLite store:
/// ids at random, lists of what has settled (docs/decisions.md, "The
/// replicated layout"). Its instances' clocks 1.5 s apart (more than a
/// create's window: a horizon that forgot the skew passes a create still
/// in flight on the slowest), its open piece made again 0.5 s on (within a
/// create's window: a page may make it while a create is in flight).
#[cfg(feature = "edge")]
pub const REPLICATED: Layout = Layout {
    name: "replicated (edge build)",
    backend: Backend::Sqlite,
    declared: "spin",
    layout: "replicated",
    promise: Promise {
        ids: IdOrder::Random,
        corrupt: false,
        faults: false,
        settles: true,
    },
    replicas: 1,
    skew_ms: 1_500,
    interval_ms: 500,
};
/// The same on the replicated test store, as Akamai Functions' is: three
/// replicas, request n served by replica n mod 3, each write reaching the
/// others when the explorer delivers it or within `replication_ms`.
#[cfg(feature = "edge")]
pub const REPLICATED_3: Layout = Layout {
    name: "replicated (edge build) on 3 replicas",
    replicas: 3,
    ..REPLICATED
};

#[cfg(feature = "edge")]
pub const LAYOUTS: [Layout; 2] = [REPLICATED, REPLICATED_3];

const STATUSES: [&str; 3] = ["available", "pending", "sold"];

/// The state of the store the explored requests meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No create ran.
    Empty,
    /// Five pets, every list walked (its index written), a walk begun.
    Warm,
    /// Five pets, never walked but for a walk begun.
    Cold,
    /// Three pets walked, three more since: pieces behind.
    Stale,
    /// Warm, then every index piece overwritten with garbage.
    Corrupt,
    /// Lanes: every lane one round (the next create takes lane 0, whose
    /// head holds pet 1).
    Round,
    /// Lanes: one lane a round ahead of the rest (the next create fills
    /// another).
    Ahead,
    /// A keyed create (`k-1`) that stopped before its last call.
    PendingKey,
    /// The same, its lease run out.
    StaleKey,
    /// The same, its record sealed (its lease and `SEAL_AFTER_MS` run
    /// out): a keyed create gives it up and takes the key.
    SealedKey,
    /// Replicated: a keyed create (`k-1`) whose `set-many` stored its
    /// key's record alone, then its instance died: a record naming a pet
    /// never stored.
    HalfKey,
    /// Replicated: five pets walked (their pieces made), the clock past
    /// the open piece's interval, then two creates through two instances
    /// whose entries have not settled: a page makes the open piece again,
    /// without them.
    Unsettled,
    /// A plain create that stopped before its last call. Replicated: two
    /// creates whose `set-many` applied only one pair (a pet without its
    /// entry, an entry without its pet), mended by a page that makes pieces.
    PendingCreate,
    /// Lanes: 130 pets, seven in eight `sold`, `sold` walked 10 at a time
    /// (its settled positions merged in blocks: 0 and 1 on 32 lanes, whose
    /// block 2 is whole but holds ids some lane has not stored; 0 to 2 on
    /// 16), and a walk of `sold` begun whose cursor says the next page's
    /// block is there.
    Merged,
    /// 32 lanes: 96 pets created in turn (round 1 `sold`, a quarter of
    /// round 2, none of round 3), then 50 `sold` racing for one lane
    /// (`burst`): those that lost drew other lanes, leaving lanes in round
    /// 3 behind ids stored past theirs (settled: ids to 64). `sold` walked
    /// 10 at a time (block 0 merged; block 1 whole, its first id settled,
    /// its last not) and a walk of it begun 25 a page. The explorer's
    /// keyed create (`sold`) takes an id behind, inside block 1: a block 1
    /// written unsettled no longer equals the walk of `sold` (the store's
    /// invariants judge it, no pin of what is written). Only the kinds
    /// that create or list `sold` run.
    MergedBehind,
    /// Replicated: 420 pets, every list walked 100 a page (its index
    /// pieces written: 200, 200 and an open 20 unfiltered, an open 140 a
    /// status), and a walk begun 100 a page whose cursor is in piece 1.
    Pieces,
}

pub const STATES: [State; 16] = [
    State::Empty,
    State::Warm,
    State::Cold,
    State::Stale,
    State::Corrupt,
    State::Round,
    State::Ahead,
    State::PendingKey,
    State::StaleKey,
    State::SealedKey,
    State::HalfKey,
    State::Unsettled,
    State::PendingCreate,
    State::Merged,
    State::MergedBehind,
    State::Pieces,
];

/// A request the explorer runs concurrently with others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Create,
    /// With `Idempotency-Key: k-1`; two of them are the same key twice.
    Keyed,
    /// `k-1` with another body.
    KeyReused,
    /// getPet of the newest pet (on lanes, in its lane's head).
    GetNewest,
    GetOldest,
    /// The first page of a new walk of every pet.
    Page,
    /// The first page of a new walk of `sold`.
    StatusPage,
    /// A client on the cursor of the walk the state began: its pages to
    /// the walk's end (four at most), then the last page again, as a
    /// client that follows the list does.
    CursorPage,
    /// A create through an instance configured for lanes: on a counters
    /// store on DynamoDB, the move.
    Move,
    Health,
    /// On replicas: a create, then getPet of its pet through another
    /// replica (a client whose next request reaches another region).
    CreateThenGet,
    /// On replicas: a keyed create (`k-1`), then its retry through another
    /// replica, one after the other.
    KeyedThenRetry,
    /// Not a request: time moves, or writes arrive ([`Step`]). Explored as
    /// the second of a pair, at every point of the first.
    Step(Step),
    /// A step, then a request.
    Then(Step, Then),
}

/// A window the code keeps, which a step moves every clock past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// A create's: counters and lanes commit within `COMMIT_WITHIN_MS`;
    /// on the replicated layout a write lands within `LANDS_WITHIN_MS`.
    Create,
    /// `replication_ms` + `clock_skew_ms` (the replicated layout).
    Replication,
    /// `piece_interval_ms` (the replicated layout).
    Interval,
    /// A keyed create's lease.
    Lease,
    /// The lease and the commit window: past it a keyed create's owner
    /// commits no more, but its commit begun may still land.
    Commit,
    /// The longest a commit begun in its window may take to land before
    /// readers give its record up (`SEAL_AFTER_MS` − `COMMIT_WITHIN_MS`):
    /// a pause 1 ms short of it, which the design allows at any call.
    InFlight,
}

impl Window {
    /// How far a step moves the clocks: 1 ms past the window.
    pub fn past_ms(self, layout: &Layout) -> u64 {
        1 + match self {
            Window::Create if layout.layout == "replicated" => LANDS_WITHIN_MS,
            Window::Create => COMMIT_WITHIN_MS,
            Window::Replication => REPLICATION_MS * (layout.replicas > 1) as u64 + layout.skew_ms,
            Window::Interval => layout.interval_ms,
            Window::Lease => LEASE_MS,
            Window::Commit => LEASE_MS + COMMIT_WITHIN_MS,
            // Not past it: the longest a call in flight may take.
            Window::InFlight => return SEAL_AFTER_MS - COMMIT_WITHIN_MS - 1,
        }
    }
}

/// What the explorer does between two calls that is not a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Every clock moves past the window: the request under way stalls so
    /// long (within what the design allows a call in flight: a keyed
    /// create's commit lands before its record is sealed).
    Past(Window),
    /// Instance 0's clock leaps ahead to the fastest's (a clock stepped
    /// within the skew).
    Leap,
    /// Every write on its way reaches its replicas, the newest first.
    Arrive,
    /// Only the newest write on its way arrives: out of order.
    ArriveNewest,
}

/// The request after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Keyed,
    CursorPage,
    GetNewest,
}

pub const KINDS: [Kind; 12] = [
    Kind::Create,
    Kind::Keyed,
    Kind::KeyReused,
    Kind::GetNewest,
    Kind::GetOldest,
    Kind::Page,
    Kind::StatusPage,
    Kind::CursorPage,
    Kind::Move,
    Kind::Health,
    Kind::CreateThenGet,
    Kind::KeyedThenRetry,
];

/// The request number of a kind's second request (served by the next
/// replica).
const THEN: usize = 100;

/// The kinds that mean something on `layout` (the move only where a
/// store can move: counters on DynamoDB; two replicas only on replicas).
pub fn kinds(layout: &Layout) -> Vec<Kind> {
    KINDS
        .into_iter()
        .filter(|k| *k != Kind::Move || *layout == COUNTERS_DYNAMO)
        .filter(|k| !matches!(k, Kind::CreateThenGet | Kind::KeyedThenRetry) || layout.replicas > 1)
        .collect()
}

/// The kinds explored from `state` on `layout`: from MergedBehind, those
/// that create or list `sold` (its point); from Pieces (420 pets, the
/// longest runs), those that create or list: to keep the explorer short.
pub fn kinds_from(layout: &Layout, state: State) -> Vec<Kind> {
    let sold = [
        Kind::Create,
        Kind::Keyed,
        Kind::StatusPage,
        Kind::CursorPage,
    ];
    let kinds = kinds(layout).into_iter();
    kinds
        .filter(|k| state != State::MergedBehind || sold.contains(k))
        .filter(|k| state != State::Pieces || sold.contains(k) || *k == Kind::Page)
        .collect()
}

/// The steps explored as the second of a pair on `layout`: past each
/// window its code keeps, alone and before the request a window is about;
/// on replicas, writes arriving early, in order and out of it.
pub fn steps(layout: &Layout) -> Vec<Kind> {
    use {Step::*, Window::*};
    if layout.layout != "replicated" {
        return vec![
            Kind::Step(Past(Create)),
            Kind::Step(Past(Lease)),
            Kind::Step(Past(Commit)),
            Kind::Then(Past(Lease), Then::Keyed),
            Kind::Then(Past(Commit), Then::Keyed),
        ];
    }
    let mut steps = vec![
        Kind::Step(Past(Create)),
        Kind::Step(Past(Replication)),
        Kind::Step(Past(Interval)),
        Kind::Step(Leap),
        Kind::Then(Past(Create), Then::CursorPage),
        Kind::Then(Past(Interval), Then::CursorPage),
    ];
    if layout.replicas > 1 {
        steps.extend([
            Kind::Step(Arrive),
            Kind::Step(ArriveNewest),
            Kind::Then(Arrive, Then::GetNewest),
            Kind::Then(Arrive, Then::Keyed),
            Kind::Then(Arrive, Then::CursorPage),
            Kind::Then(ArriveNewest, Then::Keyed),
            Kind::Then(ArriveNewest, Then::CursorPage),
        ]);
    }
    steps
}

/// The steps explored from `state`: from the states of hundreds of pets
/// (their runs the longest), those about what they hold: the open piece's
/// interval (Pieces), the creates' windows (Merged, MergedBehind).
pub fn steps_from(layout: &Layout, state: State) -> Vec<Kind> {
    let about = |k: &Kind| match state {
        State::Pieces => matches!(
            k,
            Kind::Step(Step::Past(Window::Interval)) | Kind::Then(Step::Past(Window::Interval), _)
        ),
        State::Merged | State::MergedBehind => matches!(k, Kind::Step(Step::Past(Window::Create))),
        // Lane heads: a create's window, and a keyed create past its own.
        State::Round | State::Ahead => matches!(
            k,
            Kind::Step(Step::Past(Window::Create)) | Kind::Then(Step::Past(Window::Commit), _)
        ),
        _ => true,
    };
    steps(layout).into_iter().filter(about).collect()
}

/// The states worth exploring on `layout`.
pub fn states(layout: &Layout) -> Vec<State> {
    STATES
        .into_iter()
        .filter(|s| {
            !matches!(s, State::Round | State::Ahead | State::Merged) || layout.layout == "lanes"
        })
        .filter(|s| {
            let replicated = matches!(s, State::Pieces | State::HalfKey | State::Unsettled);
            replicated == (layout.layout == "replicated") || !replicated
        })
        .filter(|s| *s != State::SealedKey || layout.layout != "replicated")
        // Halves need a `set-many` that applies in part: not one SQLite's.
        .filter(|s| {
            let halves = layout.layout == "replicated" && layout.replicas == 1;
            !(halves && matches!(s, State::PendingCreate | State::HalfKey))
        })
        .filter(|s| *s != State::Empty || *layout != MOVING)
        // A moved store's pages read no merged blocks.
        .filter(|s| *s != State::Merged || *layout != MOVING)
        .filter(|s| *s != State::MergedBehind || *layout == LANES_32)
        .collect()
}

/// Requests numbered from here build a state; from [`FINISH`] finish a run.
const SETUP: usize = 1000;
const FINISH: usize = 2000;

/// A store on `layout` in `state`.
pub fn world(layout: Layout, state: State) -> World {
    let mut world = World::new(layout);
    let mut n = SETUP;
    let mut next = || {
        n += 1;
        n
    };
    if layout == LANES_16 {
        world.shared.put("ctr:id", b"petstore-lanes 1 1 0 0");
    }
    // A moving store: three pets created the counters way (and, for a
    // pending create, one that stopped), then the move.
    if layout == MOVING {
        for i in 0..3 {
            world.create(
                next(),
                "counters",
                pet_body(&format!("old{i}"), STATUSES[i % 3]),
                None,
            );
        }
        if state == State::PendingCreate {
            stopped(&world, next(), Kind::Create, "counters");
        }
        world.create(next(), "lanes", pet_body("mover", "sold"), None);
    }
    let pets = match state {
        State::Empty => 0,
        State::Round if layout == LANES_16 => 16,
        State::Round => 32,
        State::Ahead if layout == LANES_16 => 17,
        State::Ahead => 33,
        State::Stale
        | State::PendingKey
        | State::StaleKey
        | State::SealedKey
        | State::HalfKey
        | State::PendingCreate => 3,
        State::Merged => 130,
        State::MergedBehind => 96,
        State::Pieces => 420,
        _ => 5,
    };
    for i in 0..pets {
        // Merged blocks are a status's: enough `sold` for several.
        let status = match state {
            State::Merged if i % 8 != 0 => "sold",
            // Round 1 `sold` (block 0, settled), a quarter of round 2
            // (block 1 begins settled, ends in the burst's ids).
            State::MergedBehind if i < 32 || (i < 64 && i % 4 == 0) => "sold",
            State::MergedBehind => "pending",
            _ => STATUSES[i % 3],
        };
        world.create_named(next(), &format!("p{i}"), status);
    }
    if state == State::MergedBehind {
        let racing: Vec<usize> = (0..50).map(|_| next()).collect();
        world = burst(world, &racing, "sold");
    }
    world.settle();
    if matches!(
        state,
        State::Warm | State::Stale | State::Corrupt | State::Pieces | State::Unsettled
    ) {
        for status in [None, Some("available"), Some("pending"), Some("sold")] {
            let walk = world.begin_walk(status, 10 * (1 + 9 * (state == State::Pieces) as usize));
            world.walk_to_end(next(), walk, 20);
        }
    }
    if state == State::Stale {
        for i in 3..6 {
            world.create_named(next(), &format!("p{i}"), STATUSES[i % 3]);
        }
        world.settle();
    }
    if state == State::Unsettled {
        world.advance_ms(Window::Interval.past_ms(&layout));
        for i in [0, 1] {
            // Through instances 0 and 1 (request n runs on instance n mod 3).
            let request = (0..3).map(|_| next()).find(|n| n % 3 == i);
            world.create_named(request.unwrap_or_default(), &format!("u{i}"), STATUSES[i]);
        }
    }
    if state == State::Corrupt {
        for key in world.shared.keys() {
            if ["ix2:", "ix3:", "ixm:", "ixp:"]
                .iter()
                .any(|p| key.starts_with(p))
            {
                world.shared.put(&key, b"\x00garbage");
            }
        }
    }
    match state {
        State::HalfKey => {
            halved(&world, next(), Kind::Keyed, Strike::PartialLast);
            world.scarred = true;
        }
        State::PendingKey | State::StaleKey | State::SealedKey => {
            stopped(&world, next(), Kind::Keyed, layout.layout)
        }
        State::PendingCreate if layout.layout == "replicated" => {
            // Its `set-many` applied in part, its retry never made: one pet
            // without its entry, one entry without its pet.
            for part in [Strike::PartialFirst, Strike::PartialLast] {
                halved(&world, next(), Kind::Create, part);
            }
            world.settle();
            let keys = world.shared.keys();
            let count = |prefix| keys.iter().filter(|k| k.starts_with(prefix)).count();
            assert_eq!((count("pet:"), count("ixr:")), (4, 4), "two halves");
        }
        State::PendingCreate if layout != MOVING => {
            stopped(&world, next(), Kind::Create, layout.layout)
        }
        _ => {}
    }
    if state == State::StaleKey {
        world.advance_ms(LEASE_MS + 1);
    }
    if state == State::SealedKey {
        world.advance_ms(LEASE_MS + SEAL_AFTER_MS + 1);
    }
    if matches!(state, State::Merged | State::MergedBehind) {
        let walk = world.begin_walk(Some("sold"), 10);
        world.walk_to_end(next(), walk, 12);
    }
    // A walk begun, for the page that follows a cursor.
    let walk = match state {
        State::Merged | State::MergedBehind => world.begin_walk(Some("sold"), 25),
        State::Pieces => world.begin_walk(None, 100),
        _ => world.begin_walk(None, 2),
    };
    world.page(next(), walk);
    if state == State::Pieces {
        world.page(next(), walk);
        world.page(next(), walk);
        // The state is what it says: three pieces, a cursor in the second.
        for (key, lines) in [("ixp:all:0", 201), ("ixp:all:1", 201), ("ixp:all:2", 21)] {
            let piece = world.shared.peek(key).unwrap_or_default();
            assert_eq!(piece.split(|b| *b == b'\n').count(), lines, "{key}");
        }
        assert!(world.shared.peek("ixp:all:3").is_none());
        let target = world.walks.lock().unwrap()[walk as usize].target.clone();
        assert!(target.ends_with("_p1"), "{target}");
    }
    if state == State::Merged {
        // The state is what it says: blocks, and a cursor that reads them;
        // on 32 lanes block 2 holds ids still in their lanes' heads. (Not
        // whether block 2 was written: the store's invariants judge that.)
        let settled = if layout == LANES_16 { 3 } else { 2 };
        for j in 0..settled {
            let block = format!("ixm:sold:{j}");
            assert!(world.shared.peek(&block).is_some(), "{block}");
        }
        let target = world.walks.lock().unwrap()[walk as usize].target.clone();
        assert!(target.ends_with("_2"), "{target}");
    }
    if state == State::MergedBehind {
        // The state is what it says: the explorer's keyed create (`sold`,
        // request 0) takes an id past the settled bound (64: a lane's head
        // is in round 3) and behind ids stored, placed inside block 1
        // (positions 33 to 64), whose first id is settled and last not.
        // (Not whether block 1 was written: the store's invariants judge.)
        assert!(world.shared.peek("ixm:sold:0").is_some(), "ixm:sold:0");
        let trial = world.fork();
        run(&trial, Kind::Keyed, 0);
        let before = created(&world);
        let taken = created(&trial).last().map_or(0, |pet| pet.0);
        let mut sold: Vec<i64> = before.iter().filter(|p| p.1).map(|p| p.0).collect();
        sold.sort_unstable();
        let place = 1 + sold.iter().filter(|id| **id < taken).count();
        let block = (sold.get(32), sold.get(63));
        assert!(
            taken > 64
                && (33..=64).contains(&place)
                && block.0 <= Some(&64)
                && block.1 > Some(&taken),
            "{taken}: {place}, block 1 {block:?}"
        );
    }
    world.begun = Some(walk);
    world.made = world.history().events.len();
    world
}

/// Creates of a `status` pet, as `requests`, racing for one lane: each
/// overtaken just before its swap by the next, whose swap lands first. The
/// last takes the lane; the others lose their race and draw other lanes
/// (racing creates spread), leaving lanes behind those drawn.
fn burst(world: World, requests: &[usize], status: &'static str) -> World {
    let trial = world.fork();
    trial.create_named(requests[0], "trial", status);
    let swap = trial.shared.calls(requests[0]);
    let (world, overtaken) = (Arc::new(world), Mutex::new(BTreeSet::new()));
    let (w, racing) = (world.clone(), requests.to_vec());
    world.shared.set_yielder(Some(Arc::new(move |request| {
        let Some(at) = racing.iter().position(|r| *r == request) else {
            return;
        };
        let before_swap = w.shared.calls(request) + 1 == swap;
        if let (true, Some(next)) = (before_swap, racing.get(at + 1)) {
            if overtaken.lock().unwrap().insert(request) {
                w.create_named(*next, &format!("b{}", at + 1), status);
            }
        }
    })));
    world.create_named(requests[0], "b0", status);
    world.shared.set_yielder(None);
    Arc::into_inner(world).expect("the burst's one owner")
}

/// The pets created so far: id, and whether `sold`.
fn created(world: &World) -> Vec<(i64, bool)> {
    let history = world.history();
    let pets = history.events.iter().filter_map(|e| match &e.answer {
        Answer::Created { pet, .. } => Some((pet["id"].as_i64()?, pet["status"] == "sold")),
        _ => None,
    });
    pets.collect()
}

/// Runs `kind` as request `request`, stopped (its instance dies) at its
/// last call: how far it got is what the state holds.
fn stopped(world: &World, request: usize, kind: Kind, layout: &str) {
    let trial = world.fork();
    run_on(&trial, kind, request, layout);
    let last = trial.shared.calls(request);
    // Not a fault of the runs from this state: what it left is the state.
    world.shared.inject(Fault {
        request,
        call: last,
        strike: Strike::Crash,
    });
    run_on(world, kind, request, layout);
}

/// A create of `kind` whose last call, its `set-many`, applies only the
/// pair `part` says, and whose instance then dies (its retry never made).
fn halved(world: &World, request: usize, kind: Kind, part: Strike) {
    let trial = world.fork();
    run_on(&trial, kind, request, "replicated");
    let last = trial.shared.calls(request);
    for (call, strike) in [(last, part), (last + 1, Strike::Crash)] {
        world.shared.inject(Fault {
            request,
            call,
            strike,
        });
    }
    run_on(world, kind, request, "replicated");
}

/// Runs request `request` of `kind`.
pub fn run(world: &World, kind: Kind, request: usize) {
    run_on(world, kind, request, world.layout.layout);
}

fn run_on(world: &World, kind: Kind, request: usize, layout: &str) {
    match kind {
        Kind::Create => {
            let name = format!("c{request}");
            world.create(
                request,
                layout,
                pet_body(&name, STATUSES[request % 3]),
                None,
            );
        }
        Kind::Keyed => {
            world.create(request, layout, pet_body("keyed", "sold"), Some("k-1"));
        }
        Kind::KeyReused => {
            world.create(request, layout, pet_body("reused", "pending"), Some("k-1"));
        }
        Kind::GetNewest => {
            world.get_pet(request, newest(world).unwrap_or(1));
        }
        Kind::GetOldest => {
            let oldest = world.shown_ids().first().copied();
            world.get_pet(request, oldest.unwrap_or(1));
        }
        Kind::Page => {
            let walk = world.begin_walk(None, 2);
            world.page(request, walk);
        }
        Kind::StatusPage => {
            let walk = world.begin_walk(Some("sold"), 2);
            world.page(request, walk);
        }
        Kind::CursorPage => {
            let walk = match world.begun {
                Some(begun) => world.fork_walk(begun),
                None => world.begin_walk(None, 2),
            };
            world.walk_to_end(request, walk, 4);
            world.page(request, walk);
        }
        Kind::Move => {
            let name = format!("m{request}");
            world.create(request, "lanes", pet_body(&name, "sold"), None);
        }
        Kind::Health => {
            world.health(request);
        }
        Kind::CreateThenGet => {
            let name = format!("c{request}");
            let body = pet_body(&name, STATUSES[request % 3]);
            let event = world.create(request, layout, body, None);
            if let Answer::Created { pet, .. } = event.answer {
                world.get_pet(request + THEN, pet["id"].as_i64().unwrap_or(1));
            }
        }
        Kind::KeyedThenRetry => {
            for n in [request, request + THEN] {
                world.create(n, layout, pet_body("keyed", "sold"), Some("k-1"));
            }
        }
        Kind::Step(step) => take(world, step),
        Kind::Then(step, then) => {
            take(world, step);
            let kind = match then {
                Then::Keyed => Kind::Keyed,
                Then::CursorPage => Kind::CursorPage,
                Then::GetNewest => Kind::GetNewest,
            };
            run_on(world, kind, request, layout);
        }
    }
}

/// Takes `step`: moves the clocks on, or delivers writes.
pub fn take(world: &World, step: Step) {
    match step {
        Step::Past(window) => world.stall_ms(window.past_ms(&world.layout)),
        Step::Leap => world.shared.set_offset(0, world.layout.skew_ms),
        Step::Arrive => while world.shared.deliver_newest() {},
        Step::ArriveNewest => {
            world.shared.deliver_newest();
        }
    }
}

/// The pet created last: the highest id shown, or on the replicated
/// layout (ids at random) the last a create answered, which another
/// replica may not hold yet.
fn newest(world: &World) -> Option<i64> {
    if world.layout.promise.ids != IdOrder::Random {
        return world.shown_ids().last().copied();
    }
    let history = world.history();
    let created = history.events.iter().rev().find_map(|e| match &e.answer {
        Answer::Created { pet, .. } => pet["id"].as_i64(),
        _ => None,
    });
    created.or_else(|| world.shown_ids().last().copied())
}

/// Takes the run to where every promise shows: each keyed create retried
/// with its key until it answers 201 (or 422: the key is another's), and
/// on the replicated layout, once settled, twice more with a settle
/// between (every replay the same pet); each walk followed to its end and
/// its last page requested again, a fresh walk of every list, every pet
/// shown fetched, health.
pub fn finish(world: &World) {
    let mut n = FINISH;
    let mut next = || {
        n += 1;
        n
    };
    let layout = finishing_layout(world);
    let explored = world.history.lock().unwrap().events.len();
    // The store as the run's requests left it, before the finish heals what
    // it may (the open piece made again): the writes due delivered.
    world.advance_ms(0);
    let left = crate::invariants::check(world);
    world.broken.lock().unwrap().extend(left);
    world.settle();
    for (name, status) in [("keyed", "sold"), ("reused", "pending")] {
        let answers: Vec<Answer> = world
            .history()
            .events
            .iter()
            .filter(|e| matches!(&e.call, Call::Create { body, .. } if body["name"] == name))
            .map(|e| e.answer.clone())
            .collect();
        let done = answers.iter().any(|a| {
            matches!(a, Answer::Created { .. }) || matches!(a, Answer::Error { status: 422, .. })
        });
        if answers.is_empty() || done {
            continue;
        }
        for _ in 0..6 {
            let event = world.create(next(), layout, pet_body(name, status), Some("k-1"));
            match event.answer {
                Answer::Created { .. } | Answer::Error { status: 422, .. } => break,
                Answer::Error { status: 409, .. } => world.advance_ms(LEASE_MS + 1),
                _ => {}
            }
        }
    }
    world.settle();
    if world.layout.promise.settles {
        for (name, status) in [("keyed", "sold"), ("reused", "pending")] {
            let asked = world
                .history()
                .events
                .iter()
                .any(|e| matches!(&e.call, Call::Create { body, .. } if body["name"] == name));
            if asked {
                for _ in 0..2 {
                    world.create(next(), layout, pet_body(name, status), Some("k-1"));
                    world.settle();
                }
            }
        }
    }
    let walks = world.walks.lock().unwrap().len() as u64;
    for walk in 0..walks {
        world.walk_to_end(next(), walk, 40);
        world.page(next(), walk);
    }
    // Pages of 4, or of 100 where a state holds hundreds of pets.
    let limit = if world.shown_ids().len() > 100 {
        100
    } else {
        4
    };
    for status in [None, Some("available"), Some("pending"), Some("sold")] {
        let walk = world.begin_walk(status, limit);
        world.walk_to_end(next(), walk, 40);
    }
    if world.layout.layout == "replicated" {
        // No half a create left stays so: the pages that made pieces mended
        // it, and a walk begun once that replicated lists every pet stored.
        let mut listed = BTreeSet::new();
        for _ in 0..2 {
            world.settle();
            let walk = world.begin_walk(None, limit);
            world.walk_to_end(next(), walk, 40);
            let history = world.history();
            let pages = history.events.iter();
            let pages = pages.filter(|e| matches!(e.call, Call::Page { walk: w, .. } if w == walk));
            let ids = pages.flat_map(|e| {
                e.answer
                    .pets()
                    .iter()
                    .filter_map(|p| p["id"].as_i64())
                    .collect::<Vec<_>>()
            });
            listed = ids.collect();
        }
        let keys = world.shared.keys();
        let stored: BTreeSet<i64> = keys
            .iter()
            .filter_map(|k| k.strip_prefix("pet:")?.parse().ok())
            .collect();
        if stored != listed {
            let unlisted: Vec<_> = stored.difference(&listed).collect();
            let broken = format!("pets stored but not listed once settled: {unlisted:?}");
            world.broken.lock().unwrap().push(broken);
        }
    }
    // Every pet the run's requests showed or a create made since (the
    // state's own are in the walks).
    let shown = world.shown_ids_in(world.made..explored);
    let created = world.history().events[world.made..]
        .iter()
        .filter_map(|e| match &e.answer {
            Answer::Created { pet, .. } => pet["id"].as_i64(),
            _ => None,
        })
        .collect::<Vec<_>>();
    let mut fetch = [shown, created].concat();
    fetch.sort_unstable();
    fetch.dedup();
    for id in fetch {
        world.get_pet(next(), id);
    }
    world.health(next());
}

/// The layout an instance finishing the run is configured for: the
/// store's own once it moved.
fn finishing_layout(world: &World) -> &'static str {
    let moved = world
        .shared
        .peek("ctr:id")
        .is_some_and(|v| v.starts_with(b"petstore-lanes"));
    if moved {
        "lanes"
    } else {
        world.layout.layout
    }
}
