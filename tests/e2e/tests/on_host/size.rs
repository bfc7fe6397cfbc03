//! The module's size is a figure the code determines: the release module,
//! built and trimmed as `spin build` makes it, stays within its budget, and
//! the size `BENCHMARKS.md` states for it ("Sizes") is the real one.

use petstore_e2e::workspace;

/// The API module's budget (issue 35: back under 1.2.0 + 2%).
const BUDGET: u64 = 440_000;

/// The figure `BENCHMARKS.md` gives the API module now: the number before
/// ` B now` in its row of the "Sizes" table.
fn stated() -> u64 {
    let text = std::fs::read_to_string(workspace().join("BENCHMARKS.md")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("| petstore (the API) |"))
        .expect("BENCHMARKS.md's Sizes table has the API's row");
    let before = row.split(" B now").next().unwrap();
    let figure: String = before
        .rsplit(|c: char| !(c.is_ascii_digit() || c == ','))
        .next()
        .unwrap()
        .replace(',', "");
    figure
        .parse()
        .unwrap_or_else(|_| panic!("no '<n> B now' in {row}"))
}

#[test]
fn the_api_module_is_within_its_budget_and_as_benchmarks_md_says() {
    crate::support::loaded();
    let path = workspace().join("target/wasm32-wasip1/release/petstore.wasm");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size <= BUDGET, "the module is {size} B, over {BUDGET} B");
    let stated = stated();
    let drift = size.abs_diff(stated) as f64 / size as f64;
    assert!(
        drift <= 0.01,
        "BENCHMARKS.md says {stated} B, the module is {size} B: update its Sizes table"
    );
}
