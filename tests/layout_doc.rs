//! `docs/key-value-layout.md` names every file of `src/catalogue/` (its
//! subfolders too), the key-value layout's folder, in its table, and no
//! file that is not there: a file added, renamed or removed without the doc
//! fails here. Its cost table states the host calls each backend makes, in
//! each layout, as counted here.

use petstore::catalogue::formats::{Format, FORMATS};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn the_layout_doc_lists_every_file_of_the_catalogue_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut on_disk = BTreeSet::new();
    let mut folders = vec![root.join("src/catalogue")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(root).expect("under the root");
                on_disk.insert(relative.to_string_lossy().to_string());
            }
        }
    }
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

/// The doc's table of formats is the code's (`formats.rs`, each header
/// its module's const), row by row, and names a file of the catalogue for
/// each.
#[test]
fn the_layout_doc_lists_every_format_the_code_reads() {
    let doc = include_str!("../docs/key-value-layout.md");
    let start = doc
        .find("<!-- formats: begin -->")
        .expect("the formats table");
    let end = doc.find("<!-- formats: end -->").expect("its end");
    let in_doc: Vec<&str> = doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect();
    let formats = FORMATS;
    let in_code: Vec<String> = formats
        .iter()
        .map(|f| {
            let (Format(key, _, written, why, read_by), shape) = (f, f.shape());
            let written = if written.is_empty() { "—" } else { written };
            format!("| `{key}` | {shape} | {written} | {why} | `{read_by}` |")
        })
        .collect();
    assert_eq!(
        in_doc, in_code,
        "docs/key-value-layout.md against formats.rs"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/catalogue");
    let mut sources = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a folder") {
            let path = entry.expect("a directory entry").path();
            match path.is_dir() {
                true => folders.push(path),
                false => sources.push(std::fs::read_to_string(&path).expect("a file")),
            }
        }
    }
    for &Format(_, (header, _), _, _, read_by) in formats {
        assert!(root.join(read_by).exists(), "{read_by}");
        // Its header, a string literal in one file of the catalogue only.
        let once = header.is_empty();
        let header = String::from_utf8_lossy(header).replace('\n', "\\n");
        let literal = format!("\"{header}\"");
        let declared = sources.iter().map(|s| s.matches(&literal).count());
        let once = once || declared.sum::<usize>() == 1;
        assert!(once, "{literal}: declared once in src/catalogue/");
    }
}

mod common;

use common::Api;
use petstore_testkit::{Backend, MemStore};

/// The doc's columns, in order: each backend as the test kit plays it, as
/// operators declare it, and the layout they configure.
const COLUMNS: [(Backend, &str, &str); 4] = [
    (Backend::Sqlite, "spin", "counters"),
    (Backend::Redis, "redis", "counters"),
    (Backend::Dynamo, "aws_dynamo", "counters"),
    (Backend::Dynamo, "aws_dynamo", "lanes"),
];
const REX: &str = r#"{"name":"Rex","categoryId":7,"status":"sold"}"#;

/// The host calls of `op`, on a fresh store of each backend after `given`.
fn calls(given: impl Fn(&Api), op: impl Fn(&Api)) -> String {
    let counts: Vec<String> = COLUMNS
        .iter()
        .map(|(backend, declared, layout)| {
            let mut api = Api::on(MemStore::new(*backend));
            api.set_variable("key_value_backend", declared);
            api.set_variable("catalogue_layout", layout);
            given(&api);
            api.store.reset_counts();
            op(&api);
            api.store.calls().to_string()
        })
        .collect();
    counts.join(" / ")
}

/// The first page of 100 over 600 pets (200 of each status), its index
/// pieces built by earlier reads (two walks: a page writes back at most 25
/// pieces, and a status page over 32 lanes touches 32).
fn warm(target: &'static str) -> (impl Fn(&Api), impl Fn(&Api)) {
    let given = move |api: &Api| {
        for n in 0..600 {
            api.create("p", ["available", "pending", "sold"][n % 3]);
        }
        api.walk(target);
        api.walk(target);
    };
    let op = move |api: &Api| {
        let page = api.get(target);
        assert_eq!(page.status.as_u16(), 200);
    };
    (given, op)
}

/// The first page of 20 `sold` pets over 10,000 pets of which 1 in 500
/// is sold (20 of them), its pieces built by an earlier walk.
fn rare() -> (impl Fn(&Api), impl Fn(&Api)) {
    let target = "/v1/pets?limit=20&status=sold";
    let given = move |api: &Api| {
        for n in 1..=10_000 {
            api.create("p", if n % 500 == 0 { "sold" } else { "available" });
        }
        api.walk(target);
    };
    let op = move |api: &Api| {
        let page = api.get(target);
        assert_eq!(common::page_ids(&page).len(), 20, "a full page");
    };
    (given, op)
}

#[test]
fn the_cost_table_states_the_host_calls_each_backend_makes() {
    let doc = std::fs::read_to_string("docs/key-value-layout.md").expect("the doc");
    let stated = |operation: &str| -> String {
        doc.lines()
            .find(|l| l.starts_with(&format!("| {operation} |")))
            .map(|row| row.split('|').nth(2).unwrap_or("").trim().to_string())
            .unwrap_or_default()
    };
    let none = |_: &Api| {};
    // Creates are counted on a store of 32 pets: the first create of a
    // lanes store also claims `ctr:id`, and a create whose lane's head
    // holds a pet stores it first.
    let one = |api: &Api| {
        for _ in 0..32 {
            api.create("first", "available");
        }
    };
    let keyed = |api: &Api| {
        assert_eq!(api.post_keyed("k", REX).status.as_u16(), 201);
    };
    // Two rounds of 32 lanes: pet 1 stored, pet 64 its lane's newest.
    let sixty_four = |api: &Api| {
        for _ in 0..64 {
            api.create("p", "sold");
        }
    };
    let (given_all, page_all) = warm("/v1/pets?limit=100");
    let (given_sold, page_sold) = warm("/v1/pets?limit=100&status=sold");
    let (given_rare, page_rare) = rare();
    let measured = [
        (
            "createPet",
            calls(one, |api| assert_eq!(api.post(REX).status.as_u16(), 201)),
        ),
        ("createPet with a new `Idempotency-Key`", calls(one, keyed)),
        ("createPet replayed", calls(keyed, keyed)),
        (
            "getPet",
            calls(sixty_four, |api| {
                assert_eq!(api.get("/v1/pets/1").status.as_u16(), 200)
            }),
        ),
        (
            "getPet of its lane's newest pet",
            calls(sixty_four, |api| {
                assert_eq!(api.get("/v1/pets/64").status.as_u16(), 200)
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
        (
            "listPets?limit=20&status=sold, 1 sold in 500, warm",
            calls(given_rare, page_rare),
        ),
    ];
    let wrong: Vec<String> = measured
        .iter()
        .filter(|(operation, counted)| stated(operation) != *counted)
        .map(|(operation, counted)| format!("| {operation} | {counted} |"))
        .collect();
    assert!(
        wrong.is_empty(),
        "the doc states other counts:\n{}",
        wrong.join("\n")
    );
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
