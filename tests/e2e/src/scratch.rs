//! Temporary directories for state, logs and runtime configs, removed when
//! dropped; directories of test processes that are gone are swept first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// `$TMPDIR/petstore-e2e/<pid>-<n>-<what>`.
    pub fn new(what: &str) -> ScratchDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let root = std::env::temp_dir().join("petstore-e2e");
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        if n == 0 {
            sweep(&root);
        }
        let dir = root.join(format!("{}-{n}-{what}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        ScratchDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes what earlier runs, killed before their drops ran, left behind.
fn sweep(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name.split('-').next().unwrap_or_default();
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
