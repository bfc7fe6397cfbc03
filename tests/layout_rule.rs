//! The rule docs/key-value-layout.md states ("The code"), held: no file of
//! `src/` but `src/catalogue/layout.rs` reads or writes `ctr:id` (keys.rs
//! declares it) or names a variant of `Layout`, `Held` or `LayoutName`, and
//! the `edge` feature is named only where a build is chosen. Read from the
//! code without its comments; a file that breaks the rule is named.

use std::fs;
use std::path::{Path, PathBuf};

const LAYOUT: &str = "src/catalogue/layout.rs";
/// Where `ctr:id` is declared, once; and the table of every format, which
/// names each key and what it may hold.
const DECLARED: &str = "src/catalogue/keys.rs";
const FORMATS: &str = "src/catalogue/formats.rs";
/// Where a build is chosen: its world, its catalogue, its layouts.
const BUILDS: [&str; 3] = ["src/spin.rs", "src/catalogue/mod.rs", LAYOUT];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without its comments (its tests included: a test in
/// `src/` that names a variant breaks the rule as well).
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let lines = text.lines().map(|l| l.split("//").next().unwrap());
    lines.collect::<Vec<_>>().join("\n")
}

/// Where `code` names a variant of `ty` (`Ty::Upper…`), as written.
fn variants(code: &str, ty: &str) -> Vec<String> {
    let path = format!("{ty}::");
    let mut found = Vec::new();
    for (at, _) in code.match_indices(&path) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + path.len()..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            found.push(format!("{path}{name}"));
        }
    }
    found
}

fn ctr_id(code: &str) -> usize {
    code.matches("ID_COUNTER").count() + code.matches("\"ctr:id\"").count()
}

#[test]
fn only_layout_rs_reads_ctr_id_or_names_a_layout_and_only_the_builds_name_edge() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    files.sort();
    let (mut broken, mut counts) = (Vec::new(), (0, 0, 0));
    for path in &files {
        let name = path.to_string_lossy().replace('\\', "/");
        let code = code(path);
        let named: Vec<String> = ["Layout", "Held", "LayoutName"]
            .iter()
            .flat_map(|ty| variants(&code, ty))
            .collect();
        let edge = code.matches("feature = \"edge\"").count();
        match name.as_str() {
            LAYOUT => counts = (ctr_id(&code), named.len(), counts.2 + edge),
            DECLARED => {
                let lines = code.lines().filter(|l| ctr_id(l) > 0);
                if lines
                    .map(str::trim)
                    .any(|l| !l.starts_with("pub const ID_COUNTER"))
                {
                    broken.push(format!("{name}: names ctr:id beyond declaring it"));
                }
            }
            FORMATS => {}
            _ if ctr_id(&code) > 0 => broken.push(format!("{name}: reads ctr:id")),
            _ => {}
        }
        if name != LAYOUT && !named.is_empty() {
            broken.push(format!("{name}: names {named:?}"));
        }
        match BUILDS.contains(&name.as_str()) {
            true => counts.2 += usize::from(name != LAYOUT) * edge,
            false if edge > 0 => broken.push(format!("{name}: names the edge feature")),
            false => {}
        }
    }
    let (ctr, variants, edge) = counts;
    println!(
        "{} files of src/; layout.rs: {ctr} uses of ctr:id, {variants} of a layout's variants; \
         the edge feature named {edge} times in {BUILDS:?}",
        files.len()
    );
    assert!(
        files.len() > 40 && ctr > 0 && variants > 0,
        "the rule is read"
    );
    assert!(
        broken.is_empty(),
        "the rule is broken:\n{}",
        broken.join("\n")
    );
}
