//! A store the default build does not serve, on each backend's quirks: the
//! edge build's, a lanes mark where lanes cannot run, a counter in text on
//! SQLite, an unknown mark, bytes of no format. Every list (first pages,
//! each status, the edge build's cursors), create, keyed create, the probe
//! and getPet of an absent id answer 503 `misconfigured`; a pet found is
//! served; nothing is written; no call is made that Spin's host cannot
//! survive (the test kit's SQLite panics on it, as Spin's does). On real
//! `spin up`: `tests/e2e/tests/on_spin/foreign_store/`.
#![cfg(not(feature = "edge"))]

mod common;

use common::{api, assert_error, json, Setup, BACKENDS, REX};
use petstore_testkit::Backend;

/// A pet as the edge build stores it: its record and its list entry.
const PET: &str = r#"{"id":5,"name":"Rex","categoryId":1,"status":"sold"}"#;
const RECORD: &str = "petstore-pet 1 +1800000000000\n";
const ENTRY: &str = "ixr:1800000000000:0000000000000005:sold";

/// What `ctr:id` may hold that no store of this build holds, on `setup`.
fn foreign(setup: Setup) -> Vec<Vec<u8>> {
    let mut words: Vec<Vec<u8>> = ["petstore-replicated 1", "petstore-future 9"]
        .iter()
        .map(|w| w.as_bytes().to_vec())
        .collect();
    words.push(vec![0xff, 0, 7]);
    if !setup.lanes() && setup.backend != Backend::Dynamo {
        words.push(b"petstore-lanes 2 1 0 0".to_vec());
    }
    if setup.backend == Backend::Sqlite {
        // Spin's SQLite `increment` panics on it (it is not 8 bytes).
        words.push(b"42".to_vec());
    }
    words
}

#[test]
fn every_request_on_a_store_of_another_build_or_format_is_refused_and_writes_nothing() {
    let mut cases = 0;
    for setup in BACKENDS {
        for word in foreign(setup) {
            let api = api(setup);
            api.store.put("ctr:id", &word);
            api.store.put(
                "pet:5",
                [RECORD.as_bytes(), PET.as_bytes()].concat().as_slice(),
            );
            api.store.put(ENTRY, PET.as_bytes());
            let before: Vec<(String, Option<Vec<u8>>)> = api
                .store
                .keys()
                .into_iter()
                .map(|k| (k.clone(), api.store.peek(&k)))
                .collect();
            let what = format!("{setup:?} {:?}", String::from_utf8_lossy(&word));
            let lists = ["", "?status=available", "?status=pending", "?status=sold"];
            for list in lists {
                let cursor = if list.is_empty() { "?" } else { "&" };
                for target in [
                    format!("/v1/pets{list}"),
                    format!("/v1/pets{list}{cursor}cursor=r1800000000000.5_p0"),
                ] {
                    let r = api.get(&target);
                    assert_eq!(r.status.as_u16(), 503, "{what} GET {target}");
                    assert_error(&r, 503, "misconfigured");
                }
            }
            assert_error(&api.post(REX), 503, "misconfigured");
            assert_error(&api.post_keyed("k", REX), 503, "misconfigured");
            assert_error(&api.handle_health().response, 503, "misconfigured");
            assert_error(&api.get("/v1/pets/6"), 503, "misconfigured");
            // A pet found may be served: it is the pet, whoever wrote it.
            let found = api.get("/v1/pets/5");
            assert_eq!(found.status.as_u16(), 200, "{what}");
            assert_eq!(json(&found)["name"], "Rex");
            let after: Vec<(String, Option<Vec<u8>>)> = api
                .store
                .keys()
                .into_iter()
                .map(|k| (k.clone(), api.store.peek(&k)))
                .collect();
            assert_eq!(after, before, "{what}: nothing written");
            cases += 1;
        }
    }
    assert!(cases >= 18, "{cases}");
}

/// The refusal names what `ctr:id` holds and which build serves such a
/// store, for the operator who reads the log.
#[test]
fn the_log_names_what_the_store_holds_and_the_build_that_serves_it() {
    let setup = BACKENDS[1];
    assert_eq!(setup.backend, Backend::Sqlite);
    for (word, says) in [
        (
            "petstore-replicated 1",
            "a store of the edge build (spin-edge.toml)",
        ),
        ("42", "a counter as Redis and DynamoDB write it"),
        (
            "petstore-lanes 2 1 0 0",
            "the lanes layout, which runs on aws_dynamo only",
        ),
        (
            "petstore-future 9",
            "a format no release of the default build",
        ),
    ] {
        let api = api(setup);
        api.store.put("ctr:id", word.as_bytes());
        let handled = api.handle_health();
        let cause = handled.detail.unwrap_or_default();
        assert!(
            cause.contains(&format!("holds '{word}'")) && cause.contains(says),
            "{word}: {cause}"
        );
    }
}
