//! Layout v2 end to end, on every backend: walks running beside creates see
//! every pet committed before them exactly once; pages write nothing once the
//! index is built; a deleted, corrupt or unwritten index piece heals after
//! one page, with exact call counts from the host's counters.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use petstore::model::PetStatus;
use petstore_host::kv::Fault;
use petstore_host::preload::preload;

use crate::support::{serve, Server, BACKENDS};

const STATUSES: [&str; 3] = ["available", "pending", "sold"];

fn status_of(n: usize) -> PetStatus {
    [PetStatus::Available, PetStatus::Pending, PetStatus::Sold][n % 3]
}

/// Pets known committed (a 201 was received), with their status.
type Committed = Arc<Mutex<BTreeMap<i64, String>>>;

fn walk_once_checking(server: &Server, committed: &Committed, status: Option<&str>) {
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
    let walked = server.walk(&path);
    let distinct: BTreeSet<i64> = walked.iter().copied().collect();
    assert_eq!(distinct.len(), walked.len(), "{path}: a pet listed twice");
    let missing: Vec<_> = before.difference(&distinct).take(5).collect();
    assert!(
        missing.is_empty(),
        "{path}: committed before the walk, not listed: {missing:?}"
    );
}

#[test]
fn walks_beside_creates_list_every_pet_committed_before_them_exactly_once() {
    for backend in BACKENDS {
        for pets in [0, 10_000] {
            let server = Arc::new(serve(backend));
            preload(server.host.kv(), pets, status_of).unwrap();
            let committed: Committed = Arc::new(Mutex::new(
                (1..=pets)
                    .map(|n| (n as i64, status_of(n).as_str().to_string()))
                    .collect(),
            ));
            let creators: Vec<_> = (0..4)
                .map(|t| {
                    let (server, committed) = (server.clone(), committed.clone());
                    std::thread::spawn(move || {
                        for i in 0..60 {
                            let status = STATUSES[(t + i) % 3];
                            let id = server.create(&format!("w{t}-{i}"), status);
                            committed.lock().unwrap().insert(id, status.to_string());
                        }
                    })
                })
                .collect();
            let walkers: Vec<_> = [None, Some("sold"), Some("available")]
                .into_iter()
                .map(|status| {
                    let (server, committed) = (server.clone(), committed.clone());
                    std::thread::spawn(move || {
                        for _ in 0..2 {
                            walk_once_checking(&server, &committed, status);
                        }
                    })
                })
                .collect();
            for h in creators.into_iter().chain(walkers) {
                h.join()
                    .unwrap_or_else(|_| panic!("{backend:?}, {pets} pets"));
            }
            let all: BTreeSet<i64> = committed.lock().unwrap().keys().copied().collect();
            server.assert_consistent(&all, pets as i64 + 1);
        }
    }
}

const PAGES: [&str; 5] = [
    "/v1/pets?limit=100",
    "/v1/pets?limit=100&status=sold",
    "/v1/pets?limit=100&cursor=c700",
    "/v1/pets?limit=20&status=pending&cursor=c5",
    "/v1/pets/321",
];

#[test]
fn pages_write_nothing_once_the_index_is_built() {
    for backend in BACKENDS {
        let server = serve(backend);
        preload(server.host.kv(), 1_000, status_of).unwrap();
        for page in PAGES {
            server.host.kv().reset_stats();
            assert_eq!(server.get(page).status, 200, "{page}");
            let stats = server.host.kv().stats();
            assert_eq!(
                (stats.writes, stats.increments, stats.cas),
                (0, 0, 0),
                "{backend:?} {page}: only gets ({stats:?})"
            );
            assert_eq!(stats.calls, stats.gets, "{backend:?} {page}");
        }
    }
}

/// Calls the host counted for one GET.
fn calls_of(server: &Server, path: &str) -> u64 {
    server.host.kv().reset_stats();
    let r = server.get(path);
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    assert_eq!(r.ids().len(), 32, "{path}: the page is whole");
    server.host.kv().stats().calls
}

#[test]
fn a_deleted_corrupt_or_unwritten_piece_heals_after_one_page() {
    for backend in BACKENDS {
        let server = serve(backend);
        preload(server.host.kv(), 64, |_| PetStatus::Available).unwrap();
        let kv = server.host.kv();
        for (list, per_pet) in [("all", 1), ("available", 2)] {
            let path = match list {
                "all" => "/v1/pets?limit=32".to_string(),
                s => format!("/v1/pets?limit=32&status={s}"),
            };
            let key = format!("ix2:{list}:0");
            let normal = calls_of(&server, &path);
            assert_eq!(normal, 2, "{backend:?}: the piece and the counter");
            // Piece get, counter get, the truth for 32 positions, one repair set.
            let rebuild = 1 + 1 + 32 * per_pet + 1;
            kv.delete(&key).unwrap();
            assert_eq!(
                calls_of(&server, &path),
                rebuild,
                "{backend:?} deleted {key}"
            );
            assert_eq!(calls_of(&server, &path), normal, "{backend:?}: healed");
            kv.set(&key, b"\x00garbage").unwrap();
            assert_eq!(
                calls_of(&server, &path),
                rebuild,
                "{backend:?} corrupt {key}"
            );
            assert_eq!(calls_of(&server, &path), normal, "{backend:?}: healed");
            // The repair write itself fails: the next page pays once more.
            kv.delete(&key).unwrap();
            kv.inject(&[Fault::Fail(rebuild)]);
            assert_eq!(
                calls_of(&server, &path),
                rebuild,
                "{backend:?} unwritten {key}"
            );
            assert_eq!(kv.peek(&key), None);
            assert_eq!(calls_of(&server, &path), rebuild, "{backend:?}: second try");
            assert_eq!(calls_of(&server, &path), normal, "{backend:?}: healed");
        }
        let log = server.log.lock().unwrap().join("\n");
        assert!(
            log.contains(r#""notes":["index piece ix2:all:0 missing"#),
            "{log}"
        );
        assert!(log.contains("unreadable"), "{log}");
        assert!(log.contains("not written"), "{log}");
        server.assert_consistent(&(1..=64).collect(), 1);
    }
}
