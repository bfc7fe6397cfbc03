//! The module's size is a figure the code determines: the release module,
//! built and trimmed as `spin build` makes it, stays within its budget, and
//! the size `BENCHMARKS.md` states for it ("Sizes") is the real one.

use petstore_e2e::workspace;

/// The API module's budget (issue 35: back under 1.2.0 + 2%; issue 64:
/// 2 KB more, to refuse a store of another build or format).
const BUDGET: u64 = 442_000;
/// The edge module's (issue 56: 2.0.0's layouts resolved in one file).
const EDGE_BUDGET: u64 = 310_000;

/// The figure `BENCHMARKS.md` gives a module now: the number before
/// ` B now` in its row (`| <name> |`) of the "Sizes" table.
fn stated(name: &str) -> u64 {
    let text = std::fs::read_to_string(workspace().join("BENCHMARKS.md")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("| {name} |")))
        .unwrap_or_else(|| panic!("BENCHMARKS.md's Sizes table has a row for {name}"));
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
    within_budget_and_stated(&path, "petstore (the API)", BUDGET);
}

/// The edge build (`scripts/build-edge`, no atomics): its budget, its row.
#[test]
fn the_edge_module_is_within_the_budget_and_as_benchmarks_md_says() {
    let root = workspace();
    let status = std::process::Command::new(root.join("scripts/build-edge"))
        .current_dir(&root)
        .status()
        .expect("scripts/build-edge runs");
    assert!(status.success(), "scripts/build-edge failed");
    let path = root.join("target/wasm32-wasip1/release/petstore_edge.wasm");
    within_budget_and_stated(&path, "petstore-edge (the edge build)", EDGE_BUDGET);
}

fn within_budget_and_stated(path: &std::path::Path, name: &str, budget: u64) {
    let size = std::fs::metadata(path).unwrap().len();
    assert!(
        size <= budget,
        "{name}: the module is {size} B, over {budget} B"
    );
    let stated = stated(name);
    let drift = size.abs_diff(stated) as f64 / size as f64;
    assert!(
        drift <= 0.01,
        "BENCHMARKS.md says {stated} B, the module is {size} B: update its Sizes table"
    );
}
