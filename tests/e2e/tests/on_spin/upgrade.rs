//! Release 1.7.0, the last of 1.x (built from `main`'s history), and this
//! release on one store, as a rolling upgrade from it and a rolling rollback
//! to it run them: on SQLite, on Redis, and on DynamoDB with counters, with
//! lanes, on a store moved from counters to lanes while walks run, and on a
//! store of 16 lanes that 1.3.0 made. Creates, keyed creates and their
//! retries go through both; walks of every list alternate between them,
//! begun on either, across the creates and to the list's end, then follow
//! it: each lists every pet of its list once, and nothing is lost.

use std::collections::{BTreeMap, BTreeSet};

use petstore_e2e::client::pet_body;
use petstore_e2e::release::{release_1_3_0, release_1_7_0};
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};

const LISTS: [&str; 4] = [
    "/v1/pets?limit=7",
    "/v1/pets?limit=7&status=available",
    "/v1/pets?limit=7&status=pending",
    "/v1/pets?limit=7&status=sold",
];
const STATUSES: [&str; 3] = ["available", "pending", "sold"];

/// A walk whose pages alternate between the two instances.
struct Walk {
    list: &'static str,
    next: String,
    /// Which instance the walk began on (0: 1.7.0), and how many pages since.
    began: usize,
    turn: usize,
    seen: Vec<i64>,
}

impl Walk {
    /// Requests pages, alternating, until the list's end (a page without
    /// a `next` link, whose URL the walk keeps to follow the end with).
    fn until_end(&mut self, both: [&SpinUp; 2]) {
        for _ in 0..200 {
            let r = both[self.turn % 2].api.get(&self.next);
            assert_eq!(r.status, 200, "{}: {}", self.next, r.body);
            let ids = r.ids();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
            self.seen.extend(ids);
            self.turn += 1;
            match r.next_link() {
                Some(next) => self.next = next,
                None => return,
            }
        }
        panic!("{}: the walk does not end", self.list);
    }

    /// The first `pages` pages.
    fn begin(list: &'static str, turn: usize, pages: usize, both: [&SpinUp; 2]) -> Walk {
        let mut walk = Walk {
            list,
            next: list.to_string(),
            began: turn,
            turn,
            seen: Vec::new(),
        };
        for _ in 0..pages {
            let r = both[walk.turn % 2].api.get(&walk.next);
            assert_eq!(r.status, 200, "{}: {}", walk.next, r.body);
            walk.seen.extend(r.ids());
            walk.turn += 1;
            match r.next_link() {
                Some(next) => walk.next = next,
                None => break,
            }
        }
        walk
    }
}

/// Whose pets a list holds, by id.
fn of_list(list: &str, pets: &BTreeMap<i64, &'static str>) -> Vec<i64> {
    pets.iter()
        .filter(|(_, status)| list.ends_with("limit=7") || list.ends_with(*status))
        .map(|(id, _)| *id)
        .collect()
}

/// The rolling upgrade: walks of every list begun on both instances, 24
/// creates through both (every third keyed, retried through the other,
/// which replays it), the walks taken on to their end and the end followed
/// until it links no more; then fresh walks and getPets through both.
/// `pets`: what the store held before, by id; returns what it holds.
fn share(
    old: &SpinUp,
    new: &SpinUp,
    mut pets: BTreeMap<i64, &'static str>,
) -> BTreeMap<i64, &'static str> {
    let both = [old, new];
    let mut walks: Vec<Walk> = LISTS
        .iter()
        .flat_map(|list| [Walk::begin(list, 0, 2, both), Walk::begin(list, 1, 2, both)])
        .collect();
    for i in 0..24 {
        let status = STATUSES[i % 3];
        let (by, other) = (both[i % 2], both[(i + 1) % 2]);
        let body = pet_body(&format!("p{i}"), status);
        let id = if i % 3 == 2 {
            let key = format!("upgrade-{i}");
            let first = by.api.post_keyed(&key, &body);
            let again = other.api.post_keyed(&key, &body);
            assert_eq!(again.status, 201, "{}", again.body);
            assert_eq!(again.header("idempotent-replayed"), Some("true"));
            assert_eq!(again.body, first.body, "replayed byte for byte");
            first.created_id()
        } else {
            by.api.post(&body).created_id()
        };
        assert!(
            pets.insert(id, status).is_none(),
            "id {id} handed out twice"
        );
        if i % 8 == 7 {
            // Walks go on between creates: a page each.
            for walk in &mut walks {
                let r = both[walk.turn % 2].api.get(&walk.next);
                assert_eq!(r.status, 200, "{}: {}", walk.next, r.body);
                walk.seen.extend(r.ids());
                walk.turn += 1;
                if let Some(next) = r.next_link() {
                    walk.next = next;
                }
            }
        }
    }
    for mut walk in walks {
        walk.until_end(both);
        // The end requested again, as a client that keeps a copy does:
        // whatever it shows then, it has shown every pet once.
        walk.until_end(both);
        let mut seen = walk.seen.clone();
        seen.sort_unstable();
        assert_eq!(
            seen,
            of_list(walk.list, &pets),
            "{} begun on {}: every pet once",
            walk.list,
            ["1.7.0", "this release"][walk.began]
        );
    }
    let ids: BTreeSet<i64> = pets.keys().copied().collect();
    old.api.assert_consistent(&ids, 1);
    new.api.assert_consistent(&ids, 1);
    pets
}

/// 1.7.0 on `store`, with the store's layout.
fn last_1x(store: &Store) -> SpinUp {
    store
        .launch_release(&release_1_7_0())
        .variable("catalogue_layout", store.layout)
        .start()
}

/// Both health probes say `layout` (and `lanes`, if given).
fn both_say(old: &SpinUp, new: &SpinUp, layout: &str, lanes: Option<i64>) {
    for (who, spin) in [("1.7.0", old), ("this release", new)] {
        let health = spin.probe("probe-upgrade").json();
        assert_eq!(health["layout"], layout, "{who}: {health}");
        assert_eq!(health["lanes"].as_i64(), lanes, "{who}: {health}");
    }
}

#[test]
fn release_1_7_0_and_this_one_share_sqlite_and_redis_stores() {
    for backend in [Backend::Sqlite, Backend::Redis] {
        let store = Store::new(backend);
        let (old, new) = (last_1x(&store), store.start());
        let pets = share(&old, &new, BTreeMap::new());
        assert_eq!(pets.keys().copied().max(), Some(24), "{backend:?}: 1 to 24");
        both_say(&old, &new, "counters", None);
    }
}

#[test]
fn release_1_7_0_and_this_one_share_dynamodb_stores_of_either_layout() {
    for layout in ["counters", "lanes"] {
        let store = Store::with_layout(Backend::Dynamo, layout);
        let (old, new) = (last_1x(&store), store.start());
        share(&old, &new, BTreeMap::new());
        let lanes = (layout == "lanes").then_some(32);
        both_say(&old, &new, layout, lanes);
    }
}

/// A counters store that 1.7.0 filled, moved to lanes by the first create
/// of the two instances set to lanes while walks begun on the counters
/// store run; and a store of 16 lanes that 1.3.0 claimed.
#[test]
fn release_1_7_0_and_this_one_share_a_moved_store_and_one_of_16_lanes() {
    let store = Store::with_layout(Backend::Dynamo, "counters");
    let counters = last_1x(&store);
    let mut pets = BTreeMap::new();
    for i in 0..10 {
        pets.insert(
            counters.api.create(&format!("c{i}"), STATUSES[i % 3]),
            STATUSES[i % 3],
        );
    }
    drop(counters);
    let store = store.relaid("lanes");
    let (old, new) = (last_1x(&store), store.start());
    let pets = share(&old, &new, pets);
    assert!(pets.keys().any(|id| *id > 32), "ids past the move's block");
    both_say(&old, &new, "lanes", Some(32));
    let health = new.probe("probe-moved").json();
    assert_eq!(health["move"]["ids_before"], 10, "{health}");

    let store = Store::with_layout(Backend::Dynamo, "lanes");
    let first = store
        .launch_release(&release_1_3_0())
        .variable("catalogue_layout", "lanes")
        .start();
    let mut pets = BTreeMap::new();
    for i in 0..5 {
        pets.insert(first.api.create(&format!("f{i}"), "sold"), "sold");
    }
    drop(first);
    let (old, new) = (last_1x(&store), store.start());
    let pets = share(&old, &new, pets);
    assert_eq!(pets.len(), 29);
    assert!(
        store.direct().get("lane:16").expect("a read").is_none(),
        "16 lanes"
    );
    both_say(&old, &new, "lanes", Some(16));
}
