//! The model fails each rule on a history that breaks it, and passes the
//! same history mended: a checker that cannot fail checks nothing.

use serde_json::{json, Value};

use super::*;

const COUNTER: Promise = Promise {
    ids: IdOrder::Above,
    corrupt: false,
    faults: true,
    settles: false,
};
const LANES: Promise = Promise {
    ids: IdOrder::Within(127),
    corrupt: false,
    faults: true,
    settles: false,
};

fn event(start: u64, end: u64, call: Call, answer: Answer) -> Event {
    Event {
        client: 0,
        replica: None,
        start,
        end,
        call,
        answer,
    }
}

fn body(name: &str, status: &str) -> Value {
    json!({"name": name, "categoryId": 1, "status": status})
}

fn pet(id: i64, name: &str, status: &str) -> Value {
    json!({"id": id, "name": name, "categoryId": 1, "status": status})
}

fn create(start: u64, end: u64, id: i64, name: &str) -> Event {
    event(
        start,
        end,
        Call::Create {
            body: body(name, "sold"),
            key: None,
        },
        Answer::Created {
            pet: pet(id, name, "sold"),
            replayed: false,
        },
    )
}

fn page(walk: u64, start: u64, end: u64, limit: usize, pets: Vec<Value>, next: bool) -> Event {
    event(
        start,
        end,
        Call::Page {
            walk,
            status: None,
            limit,
            first: false,
        },
        Answer::Page { pets, next },
    )
}

fn error(status: u16, code: &str, message: &str) -> Answer {
    Answer::Error {
        status,
        code: code.into(),
        message: message.into(),
    }
}

/// The rules `events` breaks under `promise`.
fn broken(events: Vec<Event>, promise: &Promise) -> Vec<Rule> {
    let mut rules: Vec<Rule> = check(&History { events }, promise)
        .into_iter()
        .map(|v| v.rule)
        .collect();
    rules.dedup();
    rules
}

#[test]
fn a_getpet_after_the_201_must_find_the_pet() {
    let get = |answer| event(20, 21, Call::GetPet { id: 1 }, answer);
    let found = Answer::Found {
        pet: pet(1, "a", "sold"),
    };
    let ok = vec![create(0, 10, 1, "a"), get(found)];
    assert_eq!(broken(ok, &COUNTER), []);
    let lost = vec![create(0, 10, 1, "a"), get(error(404, "not_found", "no"))];
    assert_eq!(broken(lost, &COUNTER), [Rule::AcknowledgedPetIsFound]);
    // Sent before the 201: either answer is allowed.
    let racing = vec![
        create(0, 30, 1, "a"),
        event(
            20,
            21,
            Call::GetPet { id: 1 },
            error(404, "not_found", "no"),
        ),
    ];
    assert_eq!(broken(racing, &COUNTER), []);
}

#[test]
fn walks_list_every_committed_pet_once_and_follow_the_end() {
    let a = pet(1, "a", "sold");
    let b = pet(2, "b", "sold");
    let whole = vec![
        create(0, 1, 1, "a"),
        create(2, 3, 2, "b"),
        page(7, 10, 11, 2, vec![a.clone(), b.clone()], true),
        page(7, 12, 13, 2, vec![], false),
    ];
    assert_eq!(broken(whole, &COUNTER), []);
    let missed = vec![
        create(0, 1, 1, "a"),
        create(2, 3, 2, "b"),
        page(7, 10, 11, 2, vec![a.clone()], true),
        page(7, 12, 13, 2, vec![], false),
    ];
    assert_eq!(
        broken(missed, &COUNTER),
        [Rule::WalkListsEveryCommittedPetOnce]
    );
    let short = vec![
        create(0, 1, 1, "a"),
        create(2, 3, 2, "b"),
        page(7, 10, 11, 2, vec![a.clone()], true),
        page(7, 12, 13, 2, vec![b.clone()], true),
        page(7, 14, 15, 2, vec![], false),
    ];
    assert_eq!(broken(short, &COUNTER), [Rule::FullPages]);
    let twice = vec![
        create(0, 1, 1, "a"),
        page(7, 10, 11, 1, vec![a.clone()], true),
        page(7, 12, 13, 1, vec![a.clone()], true),
        page(7, 14, 15, 1, vec![], false),
    ];
    assert_eq!(broken(twice, &COUNTER), [Rule::NoPetTwiceInOneWalk]);
    // b is committed between the two requests of the end: the second must
    // show it.
    let followed = vec![
        create(0, 1, 1, "a"),
        page(7, 10, 11, 5, vec![a.clone()], true),
        page(7, 12, 13, 5, vec![], false),
        create(14, 15, 2, "b"),
        page(7, 16, 17, 5, vec![], false),
    ];
    assert_eq!(broken(followed, &COUNTER), [Rule::NoneMissedWhenFollowing]);
    let unsorted = vec![
        create(0, 1, 1, "a"),
        create(2, 3, 2, "b"),
        page(7, 10, 11, 2, vec![b, a.clone()], false),
    ];
    assert_eq!(
        broken(unsorted, &COUNTER),
        [Rule::AscendingWithinEveryPage, Rule::WalkEndsAtAnEmptyPage]
    );
    let mut other = page(8, 10, 11, 5, vec![a], true);
    other.call = Call::Page {
        walk: 8,
        status: Some("available".into()),
        limit: 5,
        first: true,
    };
    assert_eq!(
        broken(vec![create(0, 1, 1, "a"), other], &COUNTER),
        [Rule::StatusPageHoldsOnlyThatStatus]
    );
}

#[test]
fn ids_keep_their_layouts_order_and_are_never_shared() {
    let late = vec![create(0, 1, 5, "a"), create(2, 3, 4, "b")];
    assert_eq!(
        broken(late.clone(), &COUNTER),
        [Rule::IdAboveEveryAcknowledged]
    );
    assert_eq!(broken(late, &LANES), []);
    let far = vec![create(0, 1, 200, "a"), create(2, 3, 72, "b")];
    assert_eq!(broken(far, &LANES), [Rule::IdAtMost127Below]);
    let shared = vec![create(0, 1, 1, "a"), create(2, 3, 1, "b")];
    assert_eq!(broken(shared, &LANES), [Rule::IdsNeverReusedOrDuplicated]);
    let mut changed = create(0, 1, 1, "a");
    changed.answer = Answer::Created {
        pet: pet(1, "a", "pending"),
        replayed: false,
    };
    assert_eq!(
        broken(vec![changed], &LANES),
        [Rule::ResponsesShowTheStoredValue]
    );
}

#[test]
fn a_create_that_said_nothing_changed_leaves_no_pet_and_a_key_one_pet() {
    let mut failed = create(0, 1, 1, "a");
    failed.answer = error(503, "store_unavailable", "nothing was changed, retry");
    let shown = event(
        5,
        6,
        Call::GetPet { id: 1 },
        Answer::Found {
            pet: pet(1, "a", "sold"),
        },
    );
    assert_eq!(
        broken(vec![failed.clone(), shown.clone()], &COUNTER),
        [Rule::NothingWasChanged]
    );
    failed.answer = error(503, "store_unavailable", "it may have been created");
    assert_eq!(broken(vec![failed, shown], &COUNTER), []);
    let keyed = |start, id| {
        let mut e = create(start, start + 1, id, "k");
        e.call = Call::Create {
            body: body("k", "sold"),
            key: Some("key".into()),
        };
        e
    };
    assert_eq!(broken(vec![keyed(0, 1), keyed(5, 1)], &COUNTER), []);
    assert_eq!(
        broken(vec![keyed(0, 1), keyed(5, 2)], &LANES),
        [Rule::KeyedCreateExactlyOnce]
    );
}

#[test]
fn health_never_goes_back_and_500s_are_for_unreadable_data() {
    let health = |start, layout: &str| {
        event(
            start,
            start + 1,
            Call::Health,
            Answer::Health {
                body: json!({"status": "ok", "layout": layout}),
            },
        )
    };
    let forward = vec![health(0, "none"), create(2, 3, 1, "a"), health(4, "lanes")];
    assert_eq!(broken(forward, &LANES), []);
    let back = vec![health(0, "lanes"), health(4, "counters")];
    assert_eq!(broken(back, &LANES), [Rule::HealthSaysWhatTheStoreHolds]);
    let blind = vec![create(0, 1, 1, "a"), health(4, "none")];
    assert_eq!(broken(blind, &LANES), [Rule::HealthSaysWhatTheStoreHolds]);
    let internal = vec![event(
        0,
        1,
        Call::GetPet { id: 3 },
        error(500, "internal_error", "x"),
    )];
    assert_eq!(
        broken(internal.clone(), &COUNTER),
        [Rule::InternalErrorOnlyForUnreadableData]
    );
    let corrupt = Promise {
        corrupt: true,
        ..COUNTER
    };
    assert_eq!(broken(internal, &corrupt), []);
    let unavailable = vec![event(
        0,
        1,
        Call::GetPet { id: 3 },
        error(503, "store_unavailable", "x"),
    )];
    assert_eq!(broken(unavailable.clone(), &COUNTER), []);
    let healthy = Promise {
        faults: false,
        ..COUNTER
    };
    assert_eq!(
        broken(unavailable, &healthy),
        [Rule::StoreUnavailableOnlyWhenItFailed]
    );
}

#[test]
fn a_history_survives_its_json_lines() {
    let history = History {
        events: vec![
            create(0, 1, 1, "a"),
            page(3, 2, 3, 5, vec![pet(1, "a", "sold")], true),
        ],
    };
    let mut text = Vec::new();
    history.write(&mut text).unwrap();
    assert_eq!(History::read(&text[..]).unwrap(), history);
}

/// Every rule quotes docs/decisions.md word for word (white space aside):
/// the model checks what the project promises, and nothing else.
#[test]
fn every_rule_is_a_sentence_of_decisions_md() {
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let decisions = words(include_str!("../../../../docs/decisions.md"));
    for rule in Rule::ALL {
        assert!(
            decisions.contains(&words(rule.sentence())),
            "{rule:?}: \"{}\" is not in docs/decisions.md",
            rule.sentence()
        );
    }
}

const REPLICATED: Promise = Promise {
    ids: IdOrder::Random,
    corrupt: false,
    faults: true,
    settles: true,
};

fn settle(at: u64) -> Event {
    event(at, at, Call::Settle, Answer::Lost)
}

fn keyed(start: u64, end: u64, id: i64) -> Event {
    event(
        start,
        end,
        Call::Create {
            body: body("k", "sold"),
            key: Some("k-1".into()),
        },
        Answer::Created {
            pet: pet(id, "k", "sold"),
            replayed: false,
        },
    )
}

#[test]
fn the_replicated_layout_lists_a_pet_once_it_settled_in_any_id_order() {
    // Ids at random, pages not by id: no rule of order.
    let unsettled = vec![
        create(0, 1, 9_000_000, "a"),
        create(2, 3, 5, "b"),
        page(0, 4, 5, 10, vec![], false),
    ];
    assert_eq!(broken(unsettled.clone(), &REPLICATED), []);
    assert_eq!(
        broken(unsettled, &COUNTER),
        [
            Rule::IdAboveEveryAcknowledged,
            Rule::WalkListsEveryCommittedPetOnce
        ]
    );
    // Once the clock passed the horizon, a walk begun after lists both.
    let missed = vec![
        create(0, 1, 9_000_000, "a"),
        create(2, 3, 5, "b"),
        settle(4),
        page(0, 5, 6, 10, vec![pet(9_000_000, "a", "sold")], true),
        page(0, 7, 8, 10, vec![], false),
    ];
    assert_eq!(
        broken(missed, &REPLICATED),
        [Rule::WalkListsEveryCommittedPetOnce]
    );
    let listed = vec![
        create(0, 1, 9_000_000, "a"),
        create(2, 3, 5, "b"),
        settle(4),
        page(
            0,
            5,
            6,
            10,
            vec![pet(9_000_000, "a", "sold"), pet(5, "b", "sold")],
            true,
        ),
        page(0, 7, 8, 10, vec![], false),
    ];
    assert_eq!(broken(listed, &REPLICATED), []);
}

#[test]
fn without_atomics_a_keyed_create_is_exactly_once_for_retries_one_at_a_time() {
    let at_once = vec![keyed(0, 3, 7), keyed(1, 4, 8)];
    assert_eq!(broken(at_once.clone(), &REPLICATED), []);
    assert!(broken(at_once, &COUNTER).contains(&Rule::KeyedCreateExactlyOnce));
    let one_after_another = vec![keyed(0, 1, 7), keyed(2, 3, 8)];
    assert!(broken(one_after_another, &REPLICATED).contains(&Rule::KeyedCreateExactlyOnce));
}

/// `event` as served by `replica` of a replicated store.
fn on(replica: usize, mut event: Event) -> Event {
    event.replica = Some(replica);
    event
}

fn not_found(start: u64, end: u64, id: i64) -> Event {
    event(
        start,
        end,
        Call::GetPet { id },
        Answer::Error {
            status: 404,
            code: "not_found".into(),
            message: "no pet has this id".into(),
        },
    )
}

#[test]
fn on_replicas_a_getpet_finds_a_pet_through_its_creators_replica_or_once_settled() {
    let created = on(0, create(0, 1, 7, "a"));
    let elsewhere = vec![created.clone(), on(1, not_found(2, 3, 7))];
    assert_eq!(broken(elsewhere, &REPLICATED), []);
    let there = vec![created.clone(), on(0, not_found(2, 3, 7))];
    assert_eq!(broken(there, &REPLICATED), [Rule::AcknowledgedPetIsFound]);
    let settled = vec![created, settle(2), on(1, not_found(3, 4, 7))];
    assert_eq!(broken(settled, &REPLICATED), [Rule::AcknowledgedPetIsFound]);
    // A replay read only the record, which travels apart from the pet.
    let mut replay = on(1, create(2, 3, 7, "a"));
    replay.answer = Answer::Created {
        pet: pet(7, "a", "sold"),
        replayed: true,
    };
    let replayed = vec![
        on(0, create(0, 1, 7, "a")),
        replay,
        on(1, not_found(4, 5, 7)),
    ];
    assert_eq!(broken(replayed, &REPLICATED), []);
}

#[test]
fn on_replicas_a_keyed_create_is_exactly_once_for_attempts_that_reached_each_others_records() {
    let apart = vec![on(0, keyed(0, 1, 7)), on(1, keyed(2, 3, 8))];
    assert_eq!(broken(apart, &REPLICATED), []);
    let same_replica = vec![on(0, keyed(0, 1, 7)), on(0, keyed(2, 3, 8))];
    assert!(broken(same_replica, &REPLICATED).contains(&Rule::KeyedCreateExactlyOnce));
    let settled_between = vec![on(0, keyed(0, 1, 7)), settle(2), on(1, keyed(3, 4, 8))];
    assert!(broken(settled_between, &REPLICATED).contains(&Rule::KeyedCreateExactlyOnce));
}

#[test]
fn once_settled_every_replay_of_a_key_answers_the_same_pet() {
    let replay = |start, end, id| {
        let mut e = keyed(start, end, id);
        e.answer = Answer::Created {
            pet: pet(id, "k", "sold"),
            replayed: true,
        };
        e
    };
    let two = || vec![on(0, keyed(0, 1, 7)), on(1, keyed(2, 3, 8)), settle(4)];
    let mut agreed = two();
    agreed.extend([on(2, replay(5, 6, 8)), settle(7), on(0, replay(8, 9, 8))]);
    assert_eq!(broken(agreed, &REPLICATED), []);
    let mut differ = two();
    differ.extend([on(2, replay(5, 6, 8)), settle(7), on(0, replay(8, 9, 7))]);
    assert_eq!(broken(differ, &REPLICATED), [Rule::KeyedReplaysConverge]);
}

#[test]
fn a_pet_whose_write_landed_late_may_be_missed_only_by_walks_begun_before_it_settled() {
    let late = event(
        0,
        5,
        Call::Create {
            body: body("a", "sold"),
            key: None,
        },
        Answer::Error {
            status: 503,
            code: "store_unavailable".into(),
            message: "the data store took 1500 ms to store pet 7, longer than the 1000 ms a \
                      create may take here: the pet was stored, but walks of the list that \
                      were already past its place will not list it"
                .into(),
        },
    );
    let shown = |start, end| {
        event(
            start,
            end,
            Call::GetPet { id: 7 },
            Answer::Found {
                pet: pet(7, "a", "sold"),
            },
        )
    };
    // Walk 0 began before the write landed and passed its place.
    let before = vec![
        page(0, 1, 2, 10, vec![], true),
        late.clone(),
        shown(6, 7),
        settle(8),
        page(0, 9, 10, 10, vec![], false),
    ];
    // A slow store, not a failing one: no fault needed for this 503.
    let unfaulted = Promise {
        faults: false,
        ..REPLICATED
    };
    assert_eq!(broken(before.clone(), &unfaulted), []);
    // Elsewhere no write lands late: the same history is a missed pet.
    assert_eq!(broken(before, &COUNTER), [Rule::NoneMissedWhenFollowing]);
    // A walk begun once it settled lists it.
    let after = vec![
        late,
        shown(6, 7),
        settle(8),
        page(1, 9, 10, 10, vec![], false),
    ];
    assert_eq!(
        broken(after, &REPLICATED),
        [Rule::WalkListsEveryCommittedPetOnce]
    );
}

#[test]
fn a_keyed_retry_may_wait_for_its_pet_only_after_a_create_with_its_key() {
    let waiting = |start, end, key: &str| {
        let message = "this Idempotency-Key's pet is not found yet: retry later with it";
        event(
            start,
            end,
            Call::Create {
                body: body("k", "sold"),
                key: Some(key.into()),
            },
            error(503, "store_unavailable", message),
        )
    };
    let unfaulted = Promise {
        faults: false,
        ..REPLICATED
    };
    // Through another replica than the key's create, before a settle: its
    // record may have arrived first. The store did not fail, yet it waits.
    let apart = vec![on(0, keyed(0, 1, 8)), on(1, waiting(2, 3, "k-1"))];
    assert_eq!(broken(apart, &unfaulted), []);
    // Through the same replica, on one store, after a settle, without a
    // create with that key before it, or on a layout whose writes are
    // whole: the 503 says a store failed that did not.
    let healthy = Promise {
        faults: false,
        ..COUNTER
    };
    for (events, promise) in [
        (
            vec![on(0, keyed(0, 1, 8)), on(0, waiting(2, 3, "k-1"))],
            &unfaulted,
        ),
        (vec![keyed(0, 1, 8), waiting(2, 3, "k-1")], &unfaulted),
        (
            vec![
                on(0, keyed(0, 1, 8)),
                settle(2),
                on(1, waiting(3, 4, "k-1")),
            ],
            &unfaulted,
        ),
        (
            vec![on(0, keyed(0, 1, 8)), on(1, waiting(2, 3, "k-2"))],
            &unfaulted,
        ),
        (
            vec![on(0, keyed(0, 1, 8)), on(1, waiting(2, 3, "k-1"))],
            &healthy,
        ),
    ] {
        assert_eq!(
            broken(events, promise),
            [Rule::StoreUnavailableOnlyWhenItFailed]
        );
    }
}
