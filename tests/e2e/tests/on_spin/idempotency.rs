//! Safe retries of createPet on real Spin, on each backend: replays, a key
//! reused for another pet, validation that binds nothing, many clients with
//! one key, and a create that stopped after claiming its key (seeded in the
//! store as a crashed instance leaves it) answered 409 until its lease ends,
//! then finished by the retry.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use petstore::catalogue::encode_pet;
use petstore::catalogue::keys::record_key;
use petstore::model::IdempotencyKey;
use petstore::model::NewPet;
use petstore_e2e::client::{fan_out, Api, Reply};
use petstore_e2e::stores::{Backend, Store};

const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

#[test]
fn replays_reuse_and_validation() {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store.start();
        let s = &spin.api;
        // Rejected requests bind nothing.
        s.post_keyed("order-1", r#"{"name":"","categoryId":7}"#)
            .assert_error(400, "invalid_body");
        s.post_keyed("a b", REX).assert_error(400, "invalid_header");
        s.post_with(REX, &[("idempotency-key", "x"), ("idempotency-key", "y")])
            .assert_error(400, "invalid_header");
        let first = s.post_keyed("order-1", REX);
        let id = first.created_id();
        assert_eq!(first.header("idempotent-replayed"), None);
        let keys = store.direct().key_count();
        // The same request, in another form: the same answer, byte for byte.
        let replay = s.post_keyed(
            "\"order-1\"",
            r#"{"categoryId":7,"status":"sold","name":"Rex"}"#,
        );
        assert_eq!(replay.created_id(), id, "{backend:?}");
        assert_eq!(replay.body, first.body, "byte-identical");
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        s.post_keyed(
            "order-1",
            r#"{"name":"Rex","categoryId":8,"status":"sold"}"#,
        )
        .assert_error(422, "idempotency_key_reused");
        assert_eq!(
            store.direct().key_count(),
            keys,
            "{backend:?}: nothing stored"
        );
        assert_eq!(s.named("Rex", "sold"), (vec![id], vec![id]));
        // The store holds the key's digest, never the key.
        let record = record_key(&IdempotencyKey::parse(b"order-1").unwrap());
        assert!(store.direct().peek(&record).is_some(), "{record}");
        let texts = store.direct().list_keys().unwrap();
        assert!(texts.iter().all(|k| !k.contains("order-1")), "{texts:?}");
    }
}

/// `clients` clients post at once; client `t` sends key `key(t)`.
fn at_once(api: &Api, clients: usize, key: fn(usize) -> String) -> Vec<Reply> {
    let api = api.clone();
    fan_out(clients, clients, move |t| api.post_keyed(&key(t), REX))
}

#[test]
fn sixteen_clients_with_one_key_make_one_pet() {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store.start();
        let mut ids = BTreeSet::new();
        for r in at_once(&spin.api, 16, |_| "same".to_string()) {
            match r.status {
                201 => {
                    ids.insert(r.created_id());
                }
                409 => r.assert_error(409, "idempotency_key_in_use"),
                other => panic!("{backend:?}: {other} {}", r.body),
            }
        }
        assert_eq!(ids.len(), 1, "{backend:?}: {ids:?}");
        let id = *ids.first().unwrap();
        let replay = spin.api.post_keyed("same", REX);
        assert_eq!(replay.created_id(), id);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(spin.api.named("Rex", "sold"), (vec![id], vec![id]));
    }
}

/// A rolling upgrade on DynamoDB: on a table written by 1.2.0 (so of
/// layout counters: its first create ran on the old-style instance), an instance
/// that claims keys as 1.2.0 did (`increment` by 0, then a
/// compare-and-swap from 0: declared `spin`) and one that claims by
/// put-if-absent (declared `aws_dynamo`);
/// 16 clients with one key, half on each, make one pet. (Declared `spin`,
/// the old-style instance also retries as briefly as on SQLite, so some of
/// its answers are 503s under this contention: a retry with the key then
/// replays.)
#[test]
fn both_ways_of_claiming_on_one_dynamodb_table_make_one_pet() {
    let store = Store::with_layout(Backend::Dynamo, "counters");
    let old = store.launch().variable("key_value_backend", "spin").start();
    old.api.create("written by 1.2.0", "available");
    let new = store.start();
    for round in 0..4 {
        let key = format!("rolling-{round}");
        let (apis, sent) = ([new.api.clone(), old.api.clone()], key.clone());
        let replies = fan_out(16, 16, move |t| apis[t % 2].post_keyed(&sent, REX));
        let mut ids = BTreeSet::new();
        for r in replies {
            match r.status {
                201 => {
                    ids.insert(r.created_id());
                }
                409 => r.assert_error(409, "idempotency_key_in_use"),
                503 => r.assert_error(503, "store_unavailable"),
                other => panic!("round {round}: {other} {}", r.body),
            }
        }
        // Every answer a 409 or a 503: retries finish the create (after
        // the lease, if its owner stopped after its claim).
        for _ in 0..60 {
            if !ids.is_empty() {
                break;
            }
            let r = new.api.post_keyed(&key, REX);
            match r.status {
                201 => drop(ids.insert(r.created_id())),
                _ => std::thread::sleep(Duration::from_millis(500)),
            }
        }
        assert_eq!(ids.len(), 1, "round {round}: {ids:?}");
        let id = *ids.first().unwrap();
        for spin in [&new, &old] {
            assert_eq!(spin.api.post_keyed(&key, REX).created_id(), id);
        }
    }
    let (all, sold) = new.api.named("Rex", "sold");
    assert_eq!((all.len(), sold.len()), (4, 4), "{all:?} {sold:?}");
}

#[test]
fn sixteen_clients_with_distinct_keys_make_sixteen_pets() {
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store.start();
        let replies = at_once(&spin.api, 16, |t| format!("key-{t}"));
        let ids: BTreeSet<i64> = replies.iter().map(Reply::created_id).collect();
        assert_eq!(ids.len(), 16, "{backend:?}");
        spin.api.assert_consistent(&ids, 1);
        for (t, first) in replies.iter().enumerate() {
            let replay = spin.api.post_keyed(&format!("key-{t}"), REX);
            assert_eq!(replay.created_id(), first.created_id());
            assert_eq!(replay.body, first.body);
        }
    }
}

/// What a keyed create leaves when its instance dies after claiming the key
/// and before its commit, written straight into the store in the formats
/// docs/key-value-layout.md gives. Counters: the id and position taken, the
/// slot and the pending record staged, the key's word naming the id. Lanes
/// (on a store of one pet, in lane 0): the key's record holding the intent
/// to claim round 1 of lane `lane`, its head untouched.
fn seed_stopped_create(store: &Store, key: &str, body: &str, ago_ms: u64, lane: i64) -> i64 {
    let kv = store.direct();
    let new = NewPet::from_json(body.as_bytes()).unwrap();
    let status = new.status.as_str();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        - ago_ms;
    let record = record_key(&IdempotencyKey::parse(key.as_bytes()).unwrap());
    if store.layout == "lanes" {
        let id = 1 + lane;
        let json = encode_pet(&new.into_pet(id)).unwrap();
        let mut intent = format!(
            "petstore-intent 1 {lane} 1 {id} {started} {:016x}\n",
            7 + lane
        )
        .into_bytes();
        intent.extend_from_slice(&json);
        kv.set(&record, &intent).unwrap();
        return id;
    }
    let id = kv.increment("ctr:id", 1).unwrap();
    let position = kv.increment(&format!("ctr:{status}"), 1).unwrap();
    let json = encode_pet(&new.into_pet(id)).unwrap();
    let mut pending = format!("petstore-pending 1\n{position} {started}\n").into_bytes();
    pending.extend_from_slice(&json);
    kv.set_many(&[
        (
            format!("slot:{status}:{position}"),
            id.to_string().into_bytes(),
        ),
        (format!("pet:{id}"), pending),
    ])
    .unwrap();
    assert_eq!(kv.increment(&record, id).unwrap(), id);
    id
}

/// The lease is a minute, and the two stopped creates are seeded as just
/// started and as started over a minute ago: which answer each gets does
/// not depend on how long the requests take on a busy machine.
#[test]
fn a_create_stopped_after_its_claim_is_409_until_its_lease_ends_then_the_retry_finishes_it() {
    const LEASE_MS: u64 = 60_000;
    for backend in Backend::SPIN {
        let store = Store::new(backend);
        let spin = store
            .launch()
            .variable("idempotency_lease_ms", &LEASE_MS.to_string())
            .start();
        let s = &spin.api;
        let before = s.create("before", "sold");
        let busy_id = seed_stopped_create(&store, "stopped", REX, 0, 1);
        let id = seed_stopped_create(&store, "stale", REX, LEASE_MS + 1_000, 2);
        // Not yet pets: holes in the lists, and no getPet.
        assert_eq!(s.named("Rex", "sold"), (vec![], vec![]));
        s.get(&format!("/v1/pets/{id}"))
            .assert_error(404, "not_found");
        let busy = s.post_keyed("stopped", REX);
        busy.assert_error(409, "idempotency_key_in_use");
        // Seconds left of the lease, rounded up.
        let wait: u64 = busy.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{backend:?}: {wait}");
        s.post_keyed("stopped", r#"{"name":"Tom","categoryId":7}"#)
            .assert_error(422, "idempotency_key_reused");
        // Past its lease, the retry finishes the stopped create.
        let finished = s.post_keyed("stale", REX);
        assert_eq!(
            finished.created_id(),
            id,
            "{backend:?}: the stopped create's id"
        );
        assert_eq!(finished.header("idempotent-replayed"), None);
        let replay = s.post_keyed("stale", REX);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
        assert_eq!(replay.body, finished.body);
        assert_eq!(s.named("Rex", "sold"), (vec![id], vec![id]));
        s.post_keyed("stopped", REX)
            .assert_error(409, "idempotency_key_in_use");
        assert!(busy_id < id);
        s.assert_consistent(&BTreeSet::from([before, id]), 1);
    }
}
