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
