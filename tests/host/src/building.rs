//! Building the workspace's components for wasm32-wasip1, as `spin build`
//! does for this app: `cargo build`, and the API module trimmed of type
//! sections no import needs (`petstore_trim`, as `scripts/build-api` does).

use std::path::Path;

use anyhow::{Context, Result};

/// Builds wasm32-wasip1 packages of the workspace in `dir` with the release
/// profile, as `spin build` does for this app.
pub fn build_wasm(dir: &Path, packages: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command
        .args(["build", "--target", "wasm32-wasip1", "--release"])
        .current_dir(dir);
    for package in packages {
        command.args(["-p", package]);
    }
    let status = command.status().context("running cargo")?;
    anyhow::ensure!(
        status.success(),
        "building {packages:?} for wasm32-wasip1 failed"
    );
    if packages.contains(&"petstore") {
        let path = dir.join("target/wasm32-wasip1/release/petstore.wasm");
        let module = std::fs::read(&path).context("reading the API module")?;
        let trimmed = petstore_trim::trim(&module).context("not a core module")?;
        if trimmed != module {
            std::fs::write(&path, trimmed).context("writing the trimmed module")?;
        }
    }
    Ok(())
}
