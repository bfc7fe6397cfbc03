//! `petstore-host`: serve the petstore component on loopback like `spin up`,
//! for people without Spin, API fuzzers and load generators.
//!
//! ```text
//! cargo run -p petstore-host -- --listen 127.0.0.1:3000 --variable api_key=secret
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use petstore_host::component;
use petstore_host::kv::{Backend, Fault, KvStore, Location};
use petstore_host::serve::{self, Host, Output};

const USAGE: &str =
    "usage: petstore-host [--listen ADDR] [--manifest spin.toml] [--variable NAME=VALUE]...
                     [--backend memory|sqlite|redis|dynamo] [--store-file PATH] [--redis-url URL]
                     [--dynamo-endpoint URL --dynamo-table NAME]
                     [--fail-call N] [--lose-reply N] [--fault KIND:N] [--cas-failures K]
                     [--failing-opens K] [--threads N] [--quiet]

Serves the component of spin.toml (build it first: scripts/build-api).
Variables come from --variable or SPIN_VARIABLE_<NAME>, as with `spin up`.
--backend picks the key-value store: memory (ideal, in memory; the default),
sqlite (Spin's default backend on a real SQLite file: --store-file PATH, or a
temporary file) or redis (Spin's Redis backend: --redis-url URL, or a
redis-server of its own on a free loopback port) or dynamo (Spin's AWS DynamoDB
backend: a table that exists at a DynamoDB endpoint, such as DynamoDB Local).
--fail-call and --lose-reply
inject a fault on the N-th key-value call (--fault fail:N, lose-reply:N,
partial-first:N or partial-last:N the same; partial: a set-many applies only its
first, or last, pair, then fails); --cas-failures makes the next K swaps fail;
--failing-opens the next K opens of the store (`database is locked`).
--quiet drops the component's access log.";

fn main() -> Result<()> {
    let mut listen: SocketAddr = "127.0.0.1:3000".parse()?;
    let mut manifest = PathBuf::from("spin.toml");
    let mut variables = HashMap::new();
    let mut backend = Backend::Memory;
    let mut location = Location::default();
    let mut faults = Vec::new();
    let mut cas_failures = 0;
    let mut failing_opens = 0;
    let mut threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut output = Output::Inherit;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .with_context(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--listen" => listen = value()?.parse().context("--listen ADDR:PORT")?,
            "--manifest" => manifest = PathBuf::from(value()?),
            "--variable" => {
                let pair = value()?;
                let (name, val) = pair.split_once('=').context("--variable NAME=VALUE")?;
                variables.insert(name.to_string(), val.to_string());
            }
            "--backend" => backend = value()?.parse().map_err(anyhow::Error::msg)?,
            "--store-file" => location.sqlite_file = Some(PathBuf::from(value()?)),
            "--redis-url" => location.redis_url = Some(value()?),
            "--dynamo-endpoint" => {
                let table = location.dynamo.take().map(|(_, t)| t).unwrap_or_default();
                location.dynamo = Some((value()?, table));
            }
            "--dynamo-table" => {
                let endpoint = location.dynamo.take().map(|(e, _)| e).unwrap_or_default();
                location.dynamo = Some((endpoint, value()?));
            }
            "--fail-call" => faults.push(Fault::Fail(value()?.parse()?)),
            "--lose-reply" => faults.push(Fault::LoseReply(value()?.parse()?)),
            "--fault" => faults.push(value()?.parse().map_err(anyhow::Error::msg)?),
            "--cas-failures" => cas_failures = value()?.parse()?,
            "--failing-opens" => failing_opens = value()?.parse()?,
            "--threads" => threads = value()?.parse()?,
            "--quiet" => output = Output::Discard,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument '{other}'\n{USAGE}"),
        }
    }
    if !listen.ip().is_loopback() {
        bail!("--listen must be a loopback address: this is a test host");
    }
    let loaded = component::load_app(&manifest, &variables)?;
    for (route, component) in &loaded.app.not_served {
        eprintln!("petstore-host: {route} ({component}) is served by real Spin only");
    }
    let kv = KvStore::open(backend, &location)?;
    kv.inject(&faults);
    kv.fail_next_swaps(cas_failures);
    kv.fail_next_opens(failing_opens);
    let host = Host::new(loaded, kv, output);
    let addr = serve::spawn(host, listen, threads)?;
    eprintln!(
        "petstore-host: serving http://{addr}/v1 (key-value backend {})",
        backend.name()
    );
    loop {
        std::thread::park();
    }
}
