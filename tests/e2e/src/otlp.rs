//! A real OTLP/HTTP receiver for Spin's exporter (`scripts/otlp_receiver.py`,
//! decoding with the official opentelemetry-proto messages) on a free port,
//! appending one JSON record a span or log record to a file it reads back.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::scratch::ScratchDir;
use crate::workspace;

/// The receiver, on a free port it reports; killed when dropped, and when
/// the thread that started it ends (a bench built with `panic = "abort"`
/// runs no drops).
pub struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
    _dir: ScratchDir,
}

impl Receiver {
    /// Starts it and waits until it accepts connections.
    pub fn start() -> Result<Receiver, String> {
        let dir = ScratchDir::new("otlp");
        let out = dir.path().join("otlp.jsonl");
        let mut command = Command::new(workspace().join(".venv/bin/python"));
        command
            .arg(workspace().join("scripts/otlp_receiver.py"))
            .arg("0")
            .arg(&out)
            .stdout(Stdio::piped());
        // SAFETY: prctl is async-signal-safe and allocates nothing.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| {
            format!("the OTLP receiver (scripts/setup installs its Python packages): {e}")
        })?;
        let mut receiver = Receiver {
            port: 0,
            out,
            _dir: dir,
            child,
        };
        // Its first line says it accepts connections: the event to wait for.
        let stdout = receiver.child.stdout.take().ok_or("its output")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| format!("the OTLP receiver's first line: {e}"))?;
        receiver.port = line
            .trim()
            .trim_start_matches("listening ")
            .parse()
            .map_err(|e| format!("the OTLP receiver's first line {line:?}: {e}"))?;
        Ok(receiver)
    }

    /// `http://127.0.0.1:port`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span and log record received so far, in order of arrival.
    pub fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Key-value calls as Spin 4.0.2 names their spans (`spin_key_value.get`,
/// `wasi_key_value.get_many`, …); opening the store is not a call of ours.
pub fn is_kv_call(name: &str) -> bool {
    name.contains("key_value.") && !name.ends_with(".open")
}
