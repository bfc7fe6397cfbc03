//! An earlier release of the API component, built from the history of
//! `main` (`git archive` of its commit into `target/releases/`, then its own
//! `cargo build`), and a manifest that serves it alone: to run it beside
//! this release on one store, as a rolling upgrade or a rollback does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::workspace;

/// The commit "Release 1.2.0" on `main`.
pub const RELEASE_1_2_0: &str = "da6c5ef951983553acdfa133dd61cad5939b20c3";

/// The last commit of release 1.3.0 on `main` (lanes: 16 of them).
pub const RELEASE_1_3_0: &str = "23fec3a66b3b75c2a310991e00ef10a408f8d441";

/// The commit "Release 1.5.1" on `main`: the first that reads the word
/// this release's lanes cursors carry.
pub const RELEASE_1_5_1: &str = "c96a36fb9cd2945f1e2078e55311f4ef5c1b5ada";

/// The commit "Release 1.7.0" on `main`: the last release of 1.x.
pub const RELEASE_1_7_0: &str = "1c96e4c82d437cd58c6c8d15fea85d8f16f87d21";

/// The commit of release 2.0.0 on `main` (its note and CI's run).
pub const RELEASE_2_0_0: &str = "e214a1bf8123443238df3cf274d9f450d070e4da";

/// The manifest of release 2.0.0's edge build (`--features edge`, the
/// replicated layout), with the variables spin-edge.toml had then.
pub fn release_2_0_0_edge() -> PathBuf {
    static MANIFEST: OnceLock<PathBuf> = OnceLock::new();
    MANIFEST
        .get_or_init(|| {
            let more = ["catalogue_layout", "replication_ms", "clock_skew_ms"];
            build(RELEASE_2_0_0, "2.0.0-edge", &more)
        })
        .clone()
}

/// The manifest of release 1.2.0's API component, built once per test run
/// (and kept in `target/releases/` across runs).
pub fn release_1_2_0() -> PathBuf {
    static MANIFEST: OnceLock<PathBuf> = OnceLock::new();
    MANIFEST
        .get_or_init(|| build(RELEASE_1_2_0, "1.2.0", &[]))
        .clone()
}

/// The manifest of release 1.3.0's API component, with its variable
/// `catalogue_layout`.
pub fn release_1_3_0() -> PathBuf {
    static MANIFEST: OnceLock<PathBuf> = OnceLock::new();
    MANIFEST
        .get_or_init(|| build(RELEASE_1_3_0, "1.3.0", &["catalogue_layout"]))
        .clone()
}

/// The manifest of release 1.5.1's API component, with its variable
/// `catalogue_layout`.
pub fn release_1_5_1() -> PathBuf {
    static MANIFEST: OnceLock<PathBuf> = OnceLock::new();
    MANIFEST
        .get_or_init(|| build(RELEASE_1_5_1, "1.5.1", &["catalogue_layout"]))
        .clone()
}

/// The manifest of release 1.7.0's API component, with its variable
/// `catalogue_layout`.
pub fn release_1_7_0() -> PathBuf {
    static MANIFEST: OnceLock<PathBuf> = OnceLock::new();
    MANIFEST
        .get_or_init(|| build(RELEASE_1_7_0, "1.7.0", &["catalogue_layout"]))
        .clone()
}

/// Builds the release of `commit`; its manifest declares 1.2.0's variables
/// and `more` (each defaulting to what spin.toml's does, set by the test).
fn build(commit: &str, version: &str, more: &[&str]) -> PathBuf {
    let root = workspace().join("target/releases");
    let tree = root.join(version);
    if !tree.join("Cargo.toml").exists() {
        std::fs::create_dir_all(&tree).expect("target/releases");
        let mut archive = Command::new("git")
            .current_dir(workspace())
            .args(["archive", "--format=tar", commit])
            .stdout(Stdio::piped())
            .spawn()
            .expect("git archive");
        let unpacked = Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&tree)
            .stdin(archive.stdout.take().expect("its output"))
            .status()
            .expect("tar");
        let archived = archive.wait().expect("git archive");
        assert!(
            archived.success() && unpacked.success(),
            "unpacking release {version} ({commit})"
        );
    }
    // Named by its commit: copies an earlier test run made under another
    // name (some were another release's module) are never read.
    let wasm = tree.join(format!("petstore-{}.wasm", &commit[..12]));
    // One target directory for every release, so their dependencies are
    // built once; a cdylib's output has no hash in its name, so the builds
    // take turns and each copies its module out before the next. That copy
    // is the release's build from then on: cargo would find a release it
    // built before fresh and leave the last one's module in place, so the
    // module is removed first and any build links its own. (One test run
    // at a time on a checkout: the turns are this process's.)
    static BUILDING: Mutex<()> = Mutex::new(());
    let _turn = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let out = root.join("target/wasm32-wasip1/release");
    if !wasm.exists() {
        for stale in [out.join("petstore.wasm"), out.join("deps/petstore.wasm")] {
            match std::fs::remove_file(&stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    panic!("removing {}: {e}", stale.display())
                }
                _ => {}
            }
        }
        build_module(&tree, version, &root);
        let copied = wasm.with_extension("part");
        std::fs::copy(out.join("petstore.wasm"), &copied).expect("the release's module");
        std::fs::rename(copied, &wasm).expect("the release's module");
    }
    manifest(&tree, version, more, &wasm)
}

/// `cargo build` of the release unpacked in `tree`, into `root/target`.
fn build_module(tree: &Path, version: &str, root: &Path) {
    let built = Command::new("cargo")
        .current_dir(tree)
        .args([
            "build",
            "--quiet",
            "--target",
            "wasm32-wasip1",
            "--release",
            "-p",
            "petstore",
        ])
        .args(version.ends_with("-edge").then_some("--features=edge"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        .status()
        .expect("cargo build");
    assert!(built.success(), "building release {version}");
}

/// The manifest that serves the release's module `wasm`: 1.2.0's variables
/// and `more`.
fn manifest(tree: &Path, version: &str, more: &[&str], wasm: &Path) -> PathBuf {
    // Its manifest's API part: its variables, its route, its component.
    let mut variables = vec!["idempotency_lease_ms", "cors_origins", "key_value_backend"];
    variables.extend(more);
    let default = |name: &str| match name {
        "idempotency_lease_ms" => "10000",
        "key_value_backend" => "spin",
        "catalogue_layout" if version.ends_with("-edge") => "replicated",
        "catalogue_layout" => "counters",
        "replication_ms" | "clock_skew_ms" => "0",
        _ => "",
    };
    let declared: String = variables
        .iter()
        .map(|v| format!("{v} = {{ default = \"{}\" }}\n", default(v)))
        .collect();
    let passed: String = variables
        .iter()
        .map(|v| format!("{v} = \"{{{{ {v} }}}}\"\n"))
        .collect();
    let manifest = format!(
        "spin_manifest_version = 2\n\n[application]\nname = \"petstore\"\nversion = \"{version}\"\n\n\
         [variables]\napi_key = {{ required = true, secret = true }}\n{declared}\n\
         [[trigger.http]]\nroute = \"/v1/...\"\ncomponent = \"petstore\"\n\n\
         [component.petstore]\nsource = \"{}\"\nallowed_outbound_hosts = []\nkey_value_stores = [\"default\"]\n\n\
         [component.petstore.variables]\napi_key = \"{{{{ api_key }}}}\"\n{passed}",
        wasm.display()
    );
    let path = tree.join("spin-api.toml");
    std::fs::write(&path, manifest).expect("the manifest");
    path
}
