//! Walks of the `next` links while creates run beside them, on each backend:
//! every pet committed before a walk began appears in it exactly once, and
//! no pet twice (docs/decisions.md, "Walks").

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use petstore_e2e::client::{Api, STATUSES};
use petstore_e2e::stores::{Backend, Store};

use crate::concurrency::status_of;

/// Pets known committed (a 201 was received), with their status.
pub type Committed = Arc<Mutex<BTreeMap<i64, String>>>;

/// `creators.0` clients create `creators.1` pets each (named
/// `{creators.2}{client}-{n}`, the statuses in turn), recording each 201 in
/// `committed`, while one walker per entry of `walks.0` (a status, or the
/// unfiltered list) walks `walks.1` times, each walk checked against what
/// was committed when it began; client and walker `n` on `apis[n % len]`.
pub fn creates_beside_walks(
    apis: &[Api],
    committed: &Committed,
    creators: (usize, usize, &str),
    walks: (&[Option<&'static str>], usize),
) {
    let (clients, each, prefix) = creators;
    let creating: Vec<_> = (0..clients)
        .map(|t| {
            let (api, committed) = (apis[t % apis.len()].clone(), committed.clone());
            let prefix = prefix.to_string();
            std::thread::spawn(move || {
                for i in 0..each {
                    let status = STATUSES[(t + i) % 3];
                    let id = api.create(&format!("{prefix}{t}-{i}"), status);
                    committed.lock().unwrap().insert(id, status.to_string());
                }
            })
        })
        .collect();
    let walking: Vec<_> = walks
        .0
        .iter()
        .enumerate()
        .map(|(w, &status)| {
            let (api, committed) = (apis[w % apis.len()].clone(), committed.clone());
            let times = walks.1;
            std::thread::spawn(move || {
                for _ in 0..times {
                    walk_once_checking(&api, &committed, status);
                }
            })
        })
        .collect();
    for h in creating.into_iter().chain(walking) {
        h.join().expect("a creator or a walker");
    }
}

/// One walk of the unfiltered list or of a status's: every pet committed
/// before it began is listed, none twice, each under the walked status.
fn walk_once_checking(api: &Api, committed: &Committed, status: Option<&str>) {
    let before: BTreeSet<i64> = committed
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, s)| status.is_none_or(|want| s.as_str() == want))
        .map(|(id, _)| *id)
        .collect();
    let path = match status {
        None => "/v1/pets?limit=100".to_string(),
        Some(s) => format!("/v1/pets?limit=100&status={s}"),
    };
    let walked = api.walk_pets(&path);
    let ids: Vec<i64> = walked.iter().map(|p| p["id"].as_i64().unwrap()).collect();
    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len(), "{path}: a pet listed twice");
    if let Some(want) = status {
        assert!(walked.iter().all(|p| p["status"] == want), "{path}");
    }
    let missing: Vec<_> = before.difference(&distinct).take(5).collect();
    assert!(
        missing.is_empty(),
        "{path}: committed before the walk, not listed: {missing:?}"
    );
}

#[test]
fn walks_beside_creates_list_every_pet_committed_before_them_exactly_once() {
    for backend in Backend::SPIN {
        for pets in [0, 10_000] {
            let store = Store::new(backend);
            store.preload(pets, status_of);
            let spin = store.start();
            let committed: Committed = Arc::new(Mutex::new(
                (1..=pets)
                    .map(|n| (n as i64, status_of(n).as_str().to_string()))
                    .collect(),
            ));
            let apis = [spin.api.clone()];
            let walks = [None, Some("sold"), Some("available")];
            creates_beside_walks(&apis, &committed, (4, 60, "w"), (&walks, 2));
            let all: BTreeSet<i64> = committed.lock().unwrap().keys().copied().collect();
            spin.api.assert_consistent(&all, pets as i64 + 1);
        }
    }
}
