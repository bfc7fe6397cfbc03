//! What DynamoDB would bill, on real `spin up` over DynamoDB Local through
//! the meter (`petstore_e2e::meter`: `ReturnConsumedCapacity` on every
//! call, an absent item charged as real DynamoDB charges it): the figures
//! of BENCHMARKS.md's capacity table that a layout's design fixes, read
//! from the table and measured here, on the store the table was measured
//! on (2,000 pets, 1 in 10 sold, warm). The bench (`--mode capacity`)
//! prints the whole table.

use petstore_e2e::client::{Api, Reply};
use petstore_e2e::meter::{metered_store, Consumed, Meter};

const PETS: usize = 2_000;

/// The capacity table's row `operation`, as numbers: counters' calls,
/// items read (absent) and units, then the lanes' same.
fn table_row(operation: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../BENCHMARKS.md"),
    )
    .expect("BENCHMARKS.md");
    let table = text
        .split("<!-- capacity: begin -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- capacity: end -->").next())
        .expect("the capacity table's markers");
    let row = table
        .lines()
        .find(|line| line.starts_with(&format!("| {operation} |")))
        .unwrap_or_else(|| panic!("no row '{operation}' in the capacity table"));
    // The columns after the operation's name, each number in them.
    row.split('|')
        .skip(2)
        .flat_map(|column| column.split(|c: char| !(c.is_ascii_digit() || c == '.')))
        .filter(|word| word.chars().any(|c| c.is_ascii_digit()))
        .map(|word| word.parse().expect("a number"))
        .collect()
}

/// What one request consumed; it must succeed.
fn metered(meter: &Meter, request: impl FnOnce() -> Reply) -> Consumed {
    meter.take();
    let reply = request();
    assert!(reply.status < 300, "{}: {}", reply.status, reply.body);
    meter.take()
}

const PAGE: &str = "/v1/pets?limit=100";
const STATUS_PAGE: &str = "/v1/pets?limit=100&status=sold";
/// 9 in 10: a page in the middle of its walk is in its settled part.
const COMMON_STATUS_PAGE: &str = "/v1/pets?limit=100&status=available";

/// The reads that each layout's table columns state: (operation, path).
/// The mid-walk page is the middle one of the walk's pages, as the bench
/// takes it.
fn reads(api: &Api) -> [(&'static str, String); 5] {
    let pages = api.walk_targets(PAGE);
    let common = api.walk_targets(COMMON_STATUS_PAGE);
    [
        ("getPet", format!("/v1/pets/{}", PETS / 2)),
        ("page of 100, first", PAGE.to_string()),
        ("page of 100, mid-walk", pages[pages.len() / 2].clone()),
        ("status page of 100, first", STATUS_PAGE.to_string()),
        (
            "status page of 100, available, mid-walk",
            common[common.len() / 2].clone(),
        ),
    ]
}

/// Measures, on a warm store of `layout`, the reads and a create, and
/// compares each with the table's columns from `column` on (counters 0,
/// lanes 4): calls, items read, absent, units; a create's calls, items
/// read and units.
fn billed_as_the_table_says(layout: &'static str, column: usize) {
    let (_store, meter, spin) = metered_store(layout, PETS).expect("the meter");
    let api: &Api = &spin.api;
    for _ in 0..2 {
        for list in [PAGE, STATUS_PAGE, COMMON_STATUS_PAGE] {
            api.walk(list);
        }
    }
    for (operation, path) in reads(api) {
        let used = metered(&meter, || api.get(&path));
        let measured = [
            used.calls as f64,
            used.items_read as f64,
            used.absent() as f64,
            used.units(),
        ];
        let row = table_row(operation);
        assert_eq!(
            measured,
            row[column..column + 4],
            "{layout}, {operation}: measured, and the table's columns"
        );
    }
    let create = metered(&meter, || {
        api.post(r#"{"name":"metered","categoryId":1,"status":"available"}"#)
    });
    // A create's columns: calls, items read (absent) + writes, units.
    let row = table_row("createPet");
    let at = if column == 0 { 0 } else { 5 };
    assert_eq!(
        [
            create.calls as f64,
            create.items_read as f64,
            create.units()
        ],
        [row[at], row[at + 1], row[at + 4]],
        "{layout}, createPet: calls, items read, units"
    );
    assert_eq!(create.refused, 0, "{layout}: a create alone loses no race");
}

#[test]
fn a_counters_store_is_billed_what_benchmarks_md_says() {
    billed_as_the_table_says("counters", 0);
    // A page reads within 1.5x the items its pets fill: 100 pets in index
    // pieces of 32 (4), and the list's counter.
    assert!(table_row("page of 100, first")[1] <= 1.5 * 5.0);
    assert!(table_row("status page of 100, first")[1] <= 1.5 * 5.0);
}

/// Lanes creates and most status pages read every lane's head
/// (BENCHMARKS.md says why that is not yet at the floor); a walk's first
/// and mid-walk pages read none, nor does a status page in the settled
/// part of its list: the table's lanes columns, measured.
#[test]
fn a_lanes_store_is_billed_what_benchmarks_md_says() {
    billed_as_the_table_says("lanes", 4);
    // Those pages within 1.5x the items their pets fill, as counters'.
    assert!(table_row("page of 100, first")[5] <= 1.5 * 5.0);
    assert!(table_row("page of 100, mid-walk")[5] <= 1.5 * 5.0);
    assert!(table_row("status page of 100, available, mid-walk")[5] <= 1.5 * 5.0);
}
