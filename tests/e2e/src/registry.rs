//! A local OCI registry (Debian's `docker-registry`, the CNCF Distribution
//! registry 2.8) on a free loopback port, its storage in a scratch
//! directory: where a test pushes the release with `spin registry push`,
//! as an operator pushes it to ghcr.io, and runs it with `spin up --from`.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::scratch::ScratchDir;
use crate::spin::binary;
use crate::workspace;

pub struct Registry {
    /// `127.0.0.1:<port>`: a reference is `<address>/<name>:<tag>`.
    pub address: String,
    child: Child,
    dir: ScratchDir,
}

impl Registry {
    /// Starts a registry over plain HTTP (Spin's `--insecure` speaks HTTP)
    /// and waits until its API answers.
    pub fn start() -> Registry {
        let dir = ScratchDir::new("registry");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let address = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n",
                dir.path().join("data").display()
            ),
        )
        .expect("the registry's config");
        let output = std::fs::File::create(dir.path().join("output.txt")).expect("its log");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("its log"))
            .stderr(output)
            .spawn()
            .expect("docker-registry (Debian's package; scripts/setup installs it)");
        let mut registry = Registry {
            address,
            child,
            dir,
        };
        registry.wait_ready();
        registry
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = format!("http://{}/v2/", self.address);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("docker-registry exited ({status}): {}", self.output());
            }
            if let Ok(r) = ureq::get(&url).call() {
                if r.status() == 200 {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry not serving after 30 s: {}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn output(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.path().join("output.txt")) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// `spin registry push --insecure <address>/<name>:<tag>` of the
    /// project's `spin.toml` (built); the reference pushed.
    pub fn push(&self, name: &str, tag: &str) -> String {
        self.push_manifest("spin.toml", name, tag)
    }

    /// The same, of the app `manifest` (in the workspace) describes: the
    /// edge build's `spin-edge.toml`, say.
    pub fn push_manifest(&self, manifest: &str, name: &str, tag: &str) -> String {
        let reference = format!("{}/{name}:{tag}", self.address);
        let pushed = Command::new(binary())
            .current_dir(workspace())
            .args(["registry", "push", "-f", manifest, "--insecure", &reference])
            .output()
            .expect("spin registry push");
        assert!(
            pushed.status.success(),
            "spin registry push {reference}: {}{}",
            String::from_utf8_lossy(&pushed.stdout),
            String::from_utf8_lossy(&pushed.stderr)
        );
        reference
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The release version `Cargo.toml` names (the image tag the deploy
/// recipes pull).
pub fn release_version() -> String {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("Cargo.toml");
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("the package's version")
        .to_string()
}
