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
            assert_eq!(normal, 1, "{backend:?}: the piece holds the page");
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

/// Declared `aws_dynamo`, a page reads in batches (`get-many`): on the
/// engines whose `get-many` works, a cold page over 200 new pets is one
/// batch of pieces and counter, one (two on a status list) of the truth,
/// one write; a fault at any of those calls (a failure, or a reply lost
/// after the call) is a 503 or the right page, and the walks afterwards
/// list every pet once.
#[test]
fn a_fault_at_every_call_of_a_page_read_in_batches_changes_no_answer() {
    use crate::support::{loaded, serve_app};
    use petstore_host::kv::Backend;
    for backend in [Backend::Memory, Backend::Sqlite] {
        // The page's calls, and its pets (66 of the 200 are sold).
        for (path, calls, listed) in [
            ("/v1/pets?limit=100", 3, 100),
            ("/v1/pets?limit=100&status=sold", 4, 66),
        ] {
            for n in 1..=calls {
                for fault in [Fault::Fail(n), Fault::LoseReply(n)] {
                    let app = loaded().with_variables(&[("key_value_backend", "aws_dynamo")]);
                    let server = serve_app(app, backend);
                    let ids: std::collections::BTreeSet<i64> = (0..200)
                        .map(|i| {
                            server
                                .api
                                .create("b", ["available", "pending", "sold"][i % 3])
                        })
                        .collect();
                    let kv = server.kv();
                    kv.reset_stats();
                    kv.inject(&[fault]);
                    let r = server.api.get(path);
                    kv.inject(&[]);
                    let context = format!("{backend:?} {path} {fault:?}");
                    match r.status {
                        200 => assert_eq!(r.ids().len(), listed, "{context}"),
                        _ => r.assert_error(503, "store_unavailable"),
                    }
                    let stats = kv.stats();
                    assert!(stats.calls <= calls, "{context}: {stats:?}");
                    assert!(stats.get_many >= 1, "{context}: read in batches");
                    server.api.assert_consistent(&ids, 1);
                }
            }
        }
    }
}
