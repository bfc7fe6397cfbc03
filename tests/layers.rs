//! The floors of `src/`, as `src/lib.rs` writes them down, hold in the code:
//! a module uses only modules on floors below its own, and the files of one
//! folder import each other without a circle. Read from the code's own
//! `crate::` and `super::` paths (test modules left out), so a new import
//! that runs back up fails here, naming the file and the module.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// `module → floor`, from the numbered list of `src/lib.rs`'s docs.
fn floors() -> BTreeMap<String, usize> {
    let lib = fs::read_to_string("src/lib.rs").unwrap();
    let mut floors = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//!")) {
        let line = line.trim_start();
        if let Some((number, rest)) = line.split_once(". ") {
            if let Ok(n) = number.parse::<usize>() {
                let names = rest.split(':').next().unwrap();
                for name in names.split('`').skip(1).step_by(2) {
                    floors.insert(name.to_string(), n);
                }
            }
        }
    }
    assert!(floors.len() > 10, "src/lib.rs lists the floors: {floors:?}");
    floors
}

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

/// The file's code without its test module and its comments.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap();
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first names after each `prefix` (`crate::` or `super::`), including
/// each member of a `{a, b::c}` group.
fn paths_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for member in group.split(',') {
                let name = member.trim().split("::").next().unwrap().trim();
                if !name.is_empty() {
                    names.insert(name.to_string());
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

fn module_of(path: &Path) -> String {
    let relative = path.strip_prefix("src").unwrap();
    let first = relative.components().next().unwrap();
    let name = first.as_os_str().to_str().unwrap();
    name.trim_end_matches(".rs").to_string()
}

#[test]
fn every_module_uses_only_floors_below_its_own() {
    let floors = floors();
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut up = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("lib.rs")) {
        let module = module_of(file);
        let Some(&floor) = floors.get(&module) else {
            panic!("{} is on no floor of src/lib.rs", file.display());
        };
        for used in paths_after(&code(file), "crate::") {
            if used == module {
                continue;
            }
            let used_floor = floors[&used];
            if used_floor >= floor {
                up.push(format!(
                    "{} (floor {floor}) uses {used} (floor {used_floor})",
                    file.display()
                ));
            }
        }
    }
    assert!(
        up.is_empty(),
        "imports that do not run down:\n{}",
        up.join("\n")
    );
}

#[test]
fn the_files_of_a_folder_import_each_other_without_a_circle() {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let mut folders: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for file in files {
        let folder = file.parent().unwrap().to_path_buf();
        if folder != Path::new("src") {
            folders.entry(folder).or_default().push(file);
        }
    }
    for (folder, files) in folders {
        let stem = |f: &Path| f.file_stem().unwrap().to_str().unwrap().to_string();
        let mut siblings: BTreeSet<String> = files.iter().map(|f| stem(f)).collect();
        // The folder's subfolders are modules of their own, as its files are.
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            if entry.path().join("mod.rs").exists() {
                siblings.insert(entry.file_name().to_str().unwrap().to_string());
            }
        }
        // Each file's arrows to the other files and subfolders of the
        // folder: `super::x` names file or subfolder `x`, or, for another
        // name, the folder's `mod.rs`; `mod.rs` reaches them by their names.
        let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            let me = stem(file);
            let code = code(file);
            let targets: BTreeSet<String> = if me == "mod" {
                siblings
                    .iter()
                    .filter(|s| {
                        *s != "mod"
                            && (code.contains(&format!("use {s}::"))
                                || code.contains(&format!(" {s}::")))
                    })
                    .cloned()
                    .collect()
            } else {
                paths_after(&code, "super::")
                    .into_iter()
                    .map(|n| {
                        if siblings.contains(&n) {
                            n
                        } else {
                            "mod".into()
                        }
                    })
                    .filter(|n| *n != me)
                    .collect()
            };
            arrows.insert(me, targets);
        }
        let mut done = BTreeSet::new();
        for start in arrows.keys() {
            let mut trail = Vec::new();
            if let Some(circle) = circle_from(start, &arrows, &mut trail, &mut done) {
                panic!(
                    "{}: a circle of files: {}",
                    folder.display(),
                    circle.join(" → ")
                );
            }
        }
    }
}

fn circle_from(
    at: &str,
    arrows: &BTreeMap<String, BTreeSet<String>>,
    trail: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(i) = trail.iter().position(|t| t == at) {
        let mut circle = trail[i..].to_vec();
        circle.push(at.to_string());
        return Some(circle);
    }
    if done.contains(at) {
        return None;
    }
    trail.push(at.to_string());
    for next in arrows.get(at).into_iter().flatten() {
        if let Some(circle) = circle_from(next, arrows, trail, done) {
            return Some(circle);
        }
    }
    trail.pop();
    done.insert(at.to_string());
    None
}

#[test]
fn the_check_sees_an_import_that_runs_up() {
    let code = "use crate::routes::Handled;\nuse crate::{errors::ApiError, store};\nx::crate::no";
    let used = paths_after(code, "crate::");
    assert_eq!(used, ["errors", "routes", "store"].map(String::from).into());
    assert!(floors()["routes"] > floors()["errors"]);
    let mut arrows = BTreeMap::new();
    arrows.insert("a".to_string(), ["b".to_string()].into());
    arrows.insert("b".to_string(), ["a".to_string()].into());
    let circle = circle_from("a", &arrows, &mut Vec::new(), &mut BTreeSet::new());
    assert_eq!(circle.unwrap(), ["a", "b", "a"]);
}
