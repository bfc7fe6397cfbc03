//! Spin's AWS DynamoDB backend over DynamoDB Local, where what the other
//! suites run on every backend meets its own ways: a compare-and-swap (a
//! lane's head) or an `increment` (a counters store) fails when another
//! writer got there first, and a batch is neither atomic nor ordered. The
//! store is declared `aws_dynamo`, its layout lanes: creates at once all
//! answer 201, leave no hole, and keep ids dense. Two instances on one
//! table: `instances.rs`.

use petstore_e2e::dynamo;
use petstore_e2e::spin::Launch;
use petstore_e2e::stores::{Backend, Store};

use crate::concurrency::create_in_parallel;

#[test]
fn sixty_four_creates_at_once_all_answer_201() {
    let store = Store::new(Backend::Dynamo);
    let spin = store.start();
    let ids = create_in_parallel(std::slice::from_ref(&spin.api), 64, 64);
    assert_eq!(ids.len(), 64);
    // Creates that lost a race moved to other lanes, so ids may skip
    // numbers no lane has reached yet; none is a hole.
    assert_eq!(ids, store.handed_out_ids(), "no hole");
    spin.api.assert_consistent(&ids, 1);
    // No lane runs away: 64 creates that all began on the same read of the
    // heads spread over the lanes within 4 rounds of each other.
    let highest = *ids.last().unwrap();
    assert!(highest <= 2 * 64 + 16, "{highest}");
}

/// Before creates retried, 300 creates from 8 clients left many 503s, each
/// a hole every page over it paid for (25 calls for a warm page of 100).
/// Now none fails and no number is skipped, so a warm page is one call: a
/// `get-many` of its 4 pieces and the list's counter (one round trip).
/// Left at spin.toml's default (`spin`), the variable says SQLite: the
/// creates learn DynamoDB from its answer to a lost race and retry as on
/// DynamoDB, so 64 at once still all answer 201 (28 of them answered 503
/// in 1.2.0); the probe keeps saying the declaration is wrong.
#[test]
fn sixty_four_creates_at_once_on_an_undeclared_dynamodb_all_answer_201() {
    let store = Store::undeclared(Backend::Dynamo);
    let spin = store.start();
    let ids = create_in_parallel(std::slice::from_ref(&spin.api), 64, 64);
    assert_eq!(ids.len(), 64);
    spin.api.assert_consistent(&ids, 1);
    let cause = spin.misconfigured_cause("undeclared");
    assert!(
        cause.starts_with("variable key_value_backend: 'spin'"),
        "{cause}"
    );
}

#[test]
fn three_hundred_creates_from_8_clients_leave_no_hole() {
    let store = Store::new(Backend::Dynamo);
    let spin = store.start();
    let ids = create_in_parallel(std::slice::from_ref(&spin.api), 8, 300);
    assert_eq!(ids.len(), 300);
    assert_eq!(ids, store.handed_out_ids(), "no hole");
    // Dense: no lane runs more than 4 rounds past the fewest (32 lanes).
    let highest = *ids.last().unwrap();
    assert!(highest <= 300 + 4 * 32, "dense: {highest}");
    // The walks build the index (twice: a page writes back at most 25
    // pieces, and a status page over 32 lanes touches 32); the page after
    // them is warm.
    spin.api.assert_consistent(&ids, 1);
    spin.api.assert_consistent(&ids, 1);
    let page = spin
        .api
        .get_with("/v1/pets?limit=100", &[("x-request-id", "warm")]);
    let first: Vec<i64> = ids.iter().copied().take(100).collect();
    assert_eq!(page.ids(), first);
    assert_eq!(spin.log_line("warm")["kv_calls"], 1, "one get-many");
    let sold = spin.api.get_with(
        "/v1/pets?limit=100&status=sold",
        &[("x-request-id", "warm-sold")],
    );
    assert_eq!(
        sold.ids().len(),
        100,
        "{:?} {:?} {} {:?}",
        sold.header("link"),
        sold.ids(),
        spin.log_line("warm-sold"),
        ids.iter().max()
    );
    assert_eq!(spin.log_line("warm-sold")["kv_calls"], 1, "one get-many");
}

#[test]
fn a_dynamodb_store_declared_as_sqlite_fails_the_probe() {
    let store = Store::new(Backend::Dynamo);
    let spin = store.launch().variable("key_value_backend", "spin").start();
    let cause = spin.misconfigured_cause("probe");
    assert!(
        cause.starts_with("variable key_value_backend: 'spin'"),
        "{cause}"
    );
    let declared = store.start();
    let r = declared.api.send("GET", "/v1/health", None, &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
}

/// The AWS SDK's errors are long debug dumps: the access log keeps one line
/// of at most 300 characters of them.
#[test]
fn a_store_error_is_one_short_line_in_the_access_log() {
    let store = Store::new(Backend::Sqlite);
    let config = store.state_dir().with_file_name("missing-table.toml");
    std::fs::write(
        &config,
        "[key_value_store.default]\ntype = \"aws_dynamo\"\nregion = \"us-east-1\"\n\
         table = \"petstore-no-such-table\"\nconsistent_read = true\n",
    )
    .unwrap();
    let mut launch = Launch::petstore(&store.state_dir(), Some(&config))
        .variable("key_value_backend", "aws_dynamo");
    for (name, value) in dynamo::local().environment() {
        launch = launch.env(name, &value);
    }
    let spin = launch.start();
    for (id, r) in [
        (
            "get",
            spin.api.get_with("/v1/pets/1", &[("x-request-id", "get")]),
        ),
        (
            "create",
            spin.api.post_with(
                r#"{"name":"a","categoryId":1}"#,
                &[("x-request-id", "create")],
            ),
        ),
    ] {
        r.assert_error(503, "store_unavailable");
        let line = spin.log_line(id);
        let cause = line["cause"].as_str().unwrap();
        assert!(cause.chars().count() <= 300, "{cause}");
        assert!(!cause.contains('\n'), "{cause}");
        assert!(cause.starts_with("key-value store: "), "{cause}");
    }
    let text = spin.log_text();
    assert_eq!(text.lines().count(), 2, "one line per request: {text}");
}
