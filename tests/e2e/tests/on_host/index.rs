//! The key-value index, counted by the host on every backend: pages write
//! nothing once the index is built; a deleted, corrupt or unwritten index
//! piece heals after one page, with exact call counts. (Walks beside creates
//! run on real Spin: `on_spin/walks.rs`.)

use petstore::model::PetStatus;
use petstore_host::kv::Fault;
use petstore_host::preload::preload;

use crate::support::{serve, Server, BACKENDS};

fn status_of(n: usize) -> PetStatus {
    [PetStatus::Available, PetStatus::Pending, PetStatus::Sold][n % 3]
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
        preload(server.kv(), 1_000, status_of).unwrap();
        for page in PAGES {
            server.kv().reset_stats();
            assert_eq!(server.api.get(page).status, 200, "{page}");
            let stats = server.kv().stats();
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
    server.kv().reset_stats();
    let r = server.api.get(path);
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    assert_eq!(r.ids().len(), 32, "{path}: the page is whole");
    server.kv().stats().calls
}

#[test]
fn a_deleted_corrupt_or_unwritten_piece_heals_after_one_page() {
    for backend in BACKENDS {
        let server = serve(backend);
        preload(server.kv(), 64, |_| PetStatus::Available).unwrap();
        let kv = server.kv();
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
        server.api.assert_consistent(&(1..=64).collect(), 1);
    }
}
