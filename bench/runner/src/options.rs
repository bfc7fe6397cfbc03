//! The runner's command line.

use anyhow::{bail, Context, Result};
use petstore_e2e::stores::Backend;

pub struct Options {
    pub backends: Vec<Backend>,
    pub pets: Vec<usize>,
    /// Seconds of alternating load per figure.
    pub seconds: f64,
    pub connections: Vec<usize>,
    /// Requests per operation whose key-value calls are read from the log.
    pub counted: usize,
    /// Only operations whose name contains one of these (default: all).
    pub only: Vec<String>,
    /// How the `api_key` variable holds the key: `plain`, or `digest`
    /// (`sha256:<hex>`, as operators may keep it at rest).
    pub key_form: String,
}

const USAGE: &str = "--backends sqlite,redis --pets N,N --seconds S --connections C,C \
                     --counted N --only NAME,NAME --key-form plain|digest";

fn list<T>(value: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
    value
        .split(',')
        .map(|v| parse(&v.trim().replace('_', "")).with_context(|| format!("'{v}'")))
        .collect()
}

fn backend(name: &str) -> Option<Backend> {
    Backend::ALL.into_iter().find(|b| b.name() == name)
}

pub fn parse() -> Result<Options> {
    let mut o = Options {
        backends: vec![Backend::Sqlite, Backend::Redis],
        pets: vec![1_000, 10_000, 100_000],
        seconds: 10.0,
        connections: vec![1, 4],
        counted: 100,
        only: Vec::new(),
        key_form: "plain".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value ({USAGE})"))?;
        match arg.as_str() {
            "--backends" => o.backends = list(&value, backend)?,
            "--pets" => o.pets = list(&value, |v| v.parse().ok())?,
            "--seconds" => o.seconds = value.parse()?,
            "--connections" => o.connections = list(&value, |v| v.parse().ok())?,
            "--counted" => o.counted = value.parse()?,
            "--only" => o.only = value.split(',').map(str::to_string).collect(),
            "--key-form" if ["plain", "digest"].contains(&value.as_str()) => o.key_form = value,
            other => bail!("unknown argument {other} ({USAGE})"),
        }
    }
    Ok(o)
}
