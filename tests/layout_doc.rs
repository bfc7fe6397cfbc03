//! `docs/key-value-layout.md` names every file of `src/catalogue/`, the
//! key-value layout's folder, in its table, and no file that is not there:
//! a file added, renamed or removed without the doc fails here.

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn the_layout_doc_lists_every_file_of_the_catalogue_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let on_disk: BTreeSet<String> = std::fs::read_dir(root.join("src/catalogue"))
        .expect("src/catalogue")
        .map(|entry| entry.expect("a directory entry").file_name())
        .map(|name| format!("src/catalogue/{}", name.to_string_lossy()))
        .collect();
    let doc = std::fs::read_to_string(root.join("docs/key-value-layout.md")).expect("the doc");
    let in_table: BTreeSet<String> = doc
        .lines()
        .filter_map(|line| line.strip_prefix("| `src/catalogue/"))
        .filter_map(|rest| rest.split('`').next())
        .map(|file| format!("src/catalogue/{file}"))
        .collect();
    assert!(!on_disk.is_empty());
    assert_eq!(
        in_table, on_disk,
        "the table of docs/key-value-layout.md must list exactly the files of src/catalogue/"
    );
}

mod common;

use common::Api;
use petstore_testkit::{Backend, MemStore};

/// The doc's backends, in the column's order, as the test kit plays them
/// and as operators declare them.
const COLUMNS: [(Backend, &str); 3] = [
    (Backend::Sqlite, "spin"),
    (Backend::Redis, "redis"),
    (Backend::Dynamo, "aws_dynamo"),
];
const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

/// The host calls of `op`, on a fresh store of each backend after `given`.
fn calls(given: impl Fn(&Api), op: impl Fn(&Api)) -> String {
    let counts: Vec<String> = COLUMNS
        .iter()
        .map(|(backend, declared)| {
            let mut api = Api::on(MemStore::new(*backend));
            api.set_variable("key_value_backend", declared);
            given(&api);
            api.store.reset_counts();
            op(&api);
            api.store.calls().to_string()
        })
        .collect();
    counts.join(" / ")
}

/// The first page of 100 over 600 pets (200 of each status), its index
/// pieces built by an earlier read.
fn warm(target: &'static str) -> (impl Fn(&Api), impl Fn(&Api)) {
    let given = move |api: &Api| {
        for n in 0..600 {
            api.create("p", ["available", "pending", "sold"][n % 3]);
        }
        api.walk(target);
    };
    let op = move |api: &Api| {
        let page = api.get(target);
        assert_eq!(page.status.as_u16(), 200);
    };
    (given, op)
}

#[test]
fn the_cost_table_states_the_host_calls_each_backend_makes() {
    let doc = std::fs::read_to_string("docs/key-value-layout.md").expect("the doc");
    let stated = |operation: &str| -> String {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {operation} |")))
            .unwrap_or_else(|| panic!("no row for {operation}"));
        row.split('|').nth(2).unwrap().trim().to_string()
    };
    let none = |_: &Api| {};
    // Creates are counted on a store that already holds a pet: the first
    // create of a DynamoDB store also claims its layout (two calls more).
    let one = |api: &Api| {
        api.create("first", "available");
    };
    let keyed = |api: &Api| {
        assert_eq!(api.post_keyed("k", REX).status.as_u16(), 201);
    };
    let (given_all, page_all) = warm("/v1/pets?limit=100");
    let (given_sold, page_sold) = warm("/v1/pets?limit=100&status=sold");
    let measured = [
        (
            "createPet",
            calls(one, |api| assert_eq!(api.post(REX).status.as_u16(), 201)),
        ),
        ("createPet with a new `Idempotency-Key`", calls(one, keyed)),
        ("createPet replayed", calls(keyed, keyed)),
        (
            "getPet",
            calls(keyed, |api| {
                assert_eq!(api.get("/v1/pets/1").status.as_u16(), 200)
            }),
        ),
        (
            "`GET /v1/health`",
            calls(none, |api| {
                api.request(http::Method::GET, "/v1/health", &[], b"");
            }),
        ),
        ("listPets?limit=100, warm", calls(given_all, page_all)),
        (
            "listPets?limit=100&status=sold, warm",
            calls(given_sold, page_sold),
        ),
    ];
    for (operation, counted) in measured {
        assert_eq!(stated(operation), counted, "{operation}");
    }
}

/// spin.toml's comments point operators at doc sections, as
/// `(docs/file.md, "Heading")`: each must name a heading of that file.
#[test]
fn spin_tomls_pointers_into_the_docs_name_sections_that_exist() {
    let manifest = std::fs::read_to_string("spin.toml").expect("spin.toml");
    let mut pointers = 0;
    for (at, _) in manifest.match_indices("(docs/") {
        let rest = &manifest[at + 1..];
        let (file, rest) = rest.split_once(", \"").expect("(file, \"Heading\")");
        let heading = rest.split_once("\")").expect("a closing \")").0;
        let doc = std::fs::read_to_string(file).unwrap_or_else(|_| panic!("{file}"));
        assert!(
            doc.lines()
                .any(|l| l.trim_start_matches('#').trim() == heading && l.starts_with('#')),
            "{file} has no heading \"{heading}\""
        );
        pointers += 1;
    }
    assert!(pointers >= 3, "{pointers}");
}
