//! The stores the builds refuse: made by the other build on real `spin up`,
//! or planted as it writes them where it does not run.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use petstore_e2e::client::{pet_body, STATUSES};
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::Store;

use crate::edge_build::{edge_launch, SETTLE};

/// The lists' first pages: unfiltered, and each status's.
pub const LISTS: [&str; 4] = [
    "/v1/pets",
    "/v1/pets?status=available",
    "/v1/pets?status=pending",
    "/v1/pets?status=sold",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// `spin.toml`: counters, or lanes on a DynamoDB store declared so.
    Default,
    /// `spin-edge.toml`: the replicated layout.
    Edge,
}

impl Build {
    pub fn start(self, store: &Store) -> SpinUp {
        match self {
            Build::Default => store.start(),
            Build::Edge => edge_launch(store).start(),
        }
    }

    /// How a cause names the build that serves this build's stores.
    pub fn named(self) -> &'static str {
        match self {
            Build::Default => "default build",
            Build::Edge => "edge build",
        }
    }

    /// What its cursors begin with on `store`.
    fn cursor(self, store: &Store) -> &'static str {
        match self {
            Build::Edge => "cursor=r",
            Build::Default if store.layout == "lanes" => "cursor=l",
            Build::Default => "cursor=c",
        }
    }
}

/// What the other build left: its pets as it answered them, by id, and the
/// next page of each list as its `Link` named it (its cursors).
#[derive(Default)]
pub struct Left {
    pub pets: BTreeMap<i64, String>,
    pub pages: Vec<String>,
}

fn limited(list: &str) -> String {
    let joint = if list.contains('?') { '&' } else { '?' };
    format!("{list}{joint}limit=2")
}

/// `build` makes the store: 9 pets, 3 of each status, 2 of them with an
/// `Idempotency-Key`, and a page of 2 of each list; then it stops.
pub fn made_by(build: Build, store: &Store) -> Left {
    let spin = build.start(store);
    let mut left = Left::default();
    for i in 0..9 {
        let body = pet_body(&format!("p{i}"), STATUSES[i % 3]);
        let r = match i {
            1 | 5 => spin.api.post_keyed(&format!("made-{i}"), &body),
            _ => spin.api.post(&body),
        };
        left.pets.insert(r.created_id(), r.body);
    }
    if build == Build::Edge {
        // Listed once their creates' commit window has passed.
        std::thread::sleep(SETTLE);
    }
    for list in LISTS {
        let r = spin.api.get(&limited(list));
        assert_eq!(r.ids().len(), 2, "{build:?} {list}: {}", r.body);
        let next = r.next_link().expect("a next page");
        assert!(next.contains(build.cursor(store)), "{build:?}: {next}");
        left.pages.push(next);
    }
    left
}

/// The edge build's store as it writes one (`replicated/entry.rs`,
/// `record.rs`'s `stamped`): its mark, one pet's record and list entry,
/// and on each list the cursor past that entry.
pub fn planted_edge_store(store: &Store) -> Left {
    let id: i64 = 3_141_592_653_589_793;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let t_ms = now.as_millis() as u64;
    let json = format!(r#"{{"id":{id},"name":"Rex","categoryId":1,"status":"available"}}"#);
    let direct = store.direct();
    for (key, value) in [
        ("ctr:id".to_string(), "petstore-replicated 1".to_string()),
        (
            format!("pet:{id}"),
            format!("petstore-pet 1 +{t_ms:013}\n{json}"),
        ),
        (format!("ixr:{t_ms:013}:{id:016}:available"), json.clone()),
    ] {
        direct.set(&key, value.as_bytes()).expect("plant a key");
    }
    let cursor = format!("cursor=r{t_ms}.{id}_p0");
    Left {
        pets: BTreeMap::from([(id, json)]),
        pages: LISTS.map(|l| format!("{}&{cursor}", limited(l))).to_vec(),
    }
}
