//! Real `spin up` processes: the Spin CLI the project pins (4.0.2, installed
//! by `scripts/setup` into `.tools/bin/spin`), else a `spin` on `PATH`. Each
//! [`SpinUp`] is one process on a free loopback port, with the variables,
//! state directory, log directory and runtime config a test gives it; it is
//! killed, with the trigger process it starts, when dropped (or, in a
//! process that aborts on panic, as the bench's release build does, by a
//! panic hook: no drop runs there).

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::{Api, Reply, KEY, ROTATED_KEY};
use crate::scratch::ScratchDir;
use crate::workspace;

/// The Spin CLI the suites run: `PETSTORE_SPIN` if set, else the pinned
/// `.tools/bin/spin`, else `spin` on `PATH`. Missing Spin fails the suites
/// (they never skip). Prints its version once.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let pinned = workspace().join(".tools/bin/spin");
        let chosen = match std::env::var_os("PETSTORE_SPIN") {
            Some(path) => PathBuf::from(path),
            None if pinned.exists() => pinned,
            None => PathBuf::from("spin"),
        };
        let version = Command::new(&chosen)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "no Spin CLI at {} ({e}): run scripts/setup, or install Spin 4.x \
                     (https://spinframework.dev/v3/install) and put `spin` on PATH",
                    chosen.display()
                )
            });
        eprintln!(
            "real Spin: {} ({})",
            String::from_utf8_lossy(&version.stdout).trim(),
            chosen.display()
        );
        chosen
    })
}

/// The release components, built once per test run (`spin.toml` serves them
/// from `target/wasm32-wasip1/release/`), and the reference page's viewer
/// files, which `spin.toml` mounts (`scripts/build-reference viewer`).
pub fn build_component() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        petstore_host::building::build_wasm(&workspace(), &["petstore", "petstore-reference"])
            .expect("build the components");
        let status = Command::new(workspace().join("scripts/build-reference"))
            .arg("viewer")
            .status()
            .expect("run scripts/build-reference");
        assert!(status.success(), "scripts/build-reference viewer failed");
    });
}

/// How to start one `spin up`.
#[derive(Debug, Clone)]
pub struct Launch {
    manifest: PathBuf,
    variables: Vec<(String, String)>,
    state_dir: PathBuf,
    runtime_config: Option<PathBuf>,
    env: Vec<(String, String)>,
    /// `--insecure`: `manifest` is a reference in a registry over HTTP.
    insecure: bool,
}

/// Builds the edge build's module (`scripts/build-edge`:
/// `petstore_edge.wasm`, no atomics), once per test process.
pub fn build_edge() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(workspace().join("scripts/build-edge"))
            .status()
            .expect("run scripts/build-edge");
        assert!(status.success(), "scripts/build-edge failed");
    });
}

impl Launch {
    /// The project's `spin.toml` with the suites' keys (`e2e-key` and a
    /// rotated one), on the store whose state directory and runtime config
    /// these are (see `stores`).
    pub fn petstore(state_dir: &Path, runtime_config: Option<&Path>) -> Launch {
        build_component();
        Launch {
            manifest: workspace().join("spin.toml"),
            variables: vec![("api_key".into(), format!("{KEY}, {ROTATED_KEY}"))],
            state_dir: state_dir.to_path_buf(),
            runtime_config: runtime_config.map(Path::to_path_buf),
            env: Vec::new(),
            insecure: false,
        }
    }

    /// The application pushed to a local registry at this reference
    /// (`spin up --from <reference> --insecure`), instead of `spin.toml`.
    pub fn from_registry(mut self, reference: &str) -> Launch {
        self.manifest = PathBuf::from(reference);
        self.insecure = true;
        self
    }

    /// Another manifest (the benchmarks' floor app, say).
    pub fn manifest(mut self, manifest: &Path) -> Launch {
        self.manifest = manifest.to_path_buf();
        self
    }

    /// `--variable name=value` (replacing an earlier value of that name).
    pub fn variable(mut self, name: &str, value: &str) -> Launch {
        self.variables.retain(|(n, _)| n != name);
        self.variables.push((name.into(), value.into()));
        self
    }

    /// An environment variable of the Spin process (the AWS SDK's, say).
    pub fn env(mut self, name: &str, value: &str) -> Launch {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Starts `spin up` on a free loopback port and waits until it serves.
    pub fn start(&self) -> SpinUp {
        let mut last = String::new();
        // A free port can be taken between our probe and Spin's bind: retry.
        for _ in 0..5 {
            match self.try_start() {
                Ok(spin) => return spin,
                Err(why) => last = why,
            }
        }
        panic!("spin up did not start: {last}");
    }

    fn try_start(&self) -> Result<SpinUp, String> {
        let dir = ScratchDir::new("spin-up");
        let port = free_port();
        let logs = dir.path().join("logs");
        let mut command = Command::new(binary());
        command
            .arg("up")
            .arg("--from")
            .arg(&self.manifest)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--state-dir")
            .arg(&self.state_dir)
            .arg("--log-dir")
            .arg(&logs);
        if let Some(config) = &self.runtime_config {
            command.arg("--runtime-config-file").arg(config);
        }
        if self.insecure {
            command.arg("--insecure");
        }
        for (name, value) in &self.variables {
            command.arg("--variable").arg(format!("{name}={value}"));
        }
        // Only what this launch says: nothing from the caller's environment
        // that Spin (or the AWS SDK inside it) would read. RUST_BACKTRACE
        // too: it makes Spin capture a backtrace on every error it handles
        // (a variable's provider missing it, say), which costs latency.
        for (name, _) in std::env::vars() {
            let inherited = ["SPIN_", "OTEL_", "AWS_", "RUNTIME_CONFIG_FILE", "RUST_"];
            if inherited.iter().any(|p| name.starts_with(p)) {
                command.env_remove(&name);
            }
        }
        command.envs(self.env.iter().map(|(n, v)| (n, v)));
        // Spin copies the app's files to a `spinup-*` directory in TMPDIR
        // and removes it only on a clean exit; Drop kills it, so that
        // directory goes in this launch's scratch directory.
        command.env("TMPDIR", dir.path());
        let output =
            std::fs::File::create(dir.path().join("spin-output.txt")).map_err(|e| e.to_string())?;
        command
            .stdin(Stdio::null())
            .stdout(output.try_clone().map_err(|e| e.to_string())?)
            .stderr(output);
        // `spin up` runs the app in a child process (`spin trigger http`):
        // both go in a process group of their own, which Drop kills whole.
        // SAFETY: setpgid and prctl are async-signal-safe and allocate nothing.
        unsafe {
            command.pre_exec(|| {
                libc::setpgid(0, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| e.to_string())?;
        groups_killed_on_abort(child.id(), true);
        let mut spin = SpinUp {
            api: Api::new(format!("http://127.0.0.1:{port}")),
            port,
            child,
            logs,
            dir,
        };
        spin.wait_ready()?;
        Ok(spin)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A running `spin up`.
pub struct SpinUp {
    pub api: Api,
    pub port: u16,
    child: Child,
    /// `--log-dir`: Spin writes `<component>_stdout.txt` here.
    logs: PathBuf,
    dir: ScratchDir,
}

impl SpinUp {
    /// Waits until this Spin serves: it printed that it serves on its port
    /// (which it does once it has bound it) and accepts connections there.
    /// A port that another process took between our probe and Spin's bind
    /// would accept connections too, so the line is what tells. No request
    /// is sent: the access log holds only the test's.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let serving = format!("Serving http://127.0.0.1:{}", self.port);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited ({status}): {}", self.output()));
            }
            if self.output().contains(&serving)
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("not serving after 60 s: {}", self.output()));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What Spin itself printed (its stdout and stderr).
    pub fn output(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.path().join("spin-output.txt")) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// The access log as an operator reads it: the component's stdout file
    /// in Spin's log directory, one JSON object per line.
    pub fn log_lines(&self) -> Vec<Value> {
        let path = self.logs.join("petstore_stdout.txt");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// The raw text of the access log file.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.logs.join("petstore_stdout.txt")).unwrap_or_default()
    }

    /// The log line of the request with this `X-Request-Id`, waiting for
    /// it (Spin writes it after the response is sent).
    pub fn log_line(&self, request_id: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found: Vec<Value> = self
                .log_lines()
                .into_iter()
                .filter(|l| l["request_id"] == request_id)
                .collect();
            match found.len() {
                1 => return found.into_iter().next().expect("one line"),
                0 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                n => panic!(
                    "{n} log lines for request {request_id}: {}",
                    self.log_text()
                ),
            }
        }
    }

    /// `GET /v1/health` (no key: it is public) with this `X-Request-Id`.
    pub fn probe(&self, request_id: &str) -> Reply {
        self.api.send(
            "GET",
            "/v1/health",
            None,
            &[("x-request-id", request_id)],
            None,
        )
    }

    /// The probe answers 503 `misconfigured`; the cause its log line gives.
    pub fn misconfigured_cause(&self, request_id: &str) -> String {
        self.probe(request_id).assert_error(503, "misconfigured");
        self.log_line(request_id)["cause"]
            .as_str()
            .expect("a cause")
            .to_string()
    }

    /// Asserts that no request so far reached the API component: one that
    /// does (a health probe with its own id) is sent, its line awaited,
    /// and the log must hold that line alone. No fixed wait: the line
    /// written after the earlier requests' answers is the sign the log
    /// has caught up.
    pub fn assert_no_request_was_logged(&self) {
        let r = self.probe("log-marker");
        assert_eq!(r.status, 200, "{}", r.body);
        self.log_line("log-marker");
        let lines = self.log_lines();
        assert_eq!(lines.len(), 1, "{}", self.log_text());
    }

    /// The process group of `spin up` and its trigger process.
    pub fn group(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for SpinUp {
    /// Kills `spin up` and its trigger process (their process group). When
    /// a test fails, first prints the log lines of the answers that were
    /// the server's fault (5xx but 503): the cause is there, not in the
    /// client's body.
    fn drop(&mut self) {
        if std::thread::panicking() {
            for line in self.log_lines() {
                if line["status"]
                    .as_u64()
                    .is_some_and(|s| s >= 500 && s != 503)
                {
                    eprintln!("spin log ({}): {line}", self.api.base);
                }
            }
        }
        kill_group(self.child.id());
        groups_killed_on_abort(self.child.id(), false);
        let _ = self.child.wait();
    }
}

/// Kills the process group a launch created (`spin up` and its trigger).
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: a plain system call on the group that launch created.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Where a panic aborts, no drop runs, and PR_SET_PDEATHSIG kills `spin up`
/// but not the trigger process it started, which would keep its port: the
/// first launch installs a panic hook that kills every live launch's group.
/// A process that unwinds (the tests) needs none: its drops run.
fn groups_killed_on_abort(pid: u32, live: bool) {
    static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    static HOOK: Once = Once::new();
    if !cfg!(panic = "abort") {
        return;
    }
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if let Ok(live) = LIVE.lock() {
                live.iter().copied().for_each(kill_group);
            }
        }));
    });
    if let Ok(mut launches) = LIVE.lock() {
        launches.retain(|p| *p != pid);
        if live {
            launches.push(pid);
        }
    }
}
