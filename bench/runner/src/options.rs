//! The runner's command line.

use anyhow::{bail, Context, Result};
use petstore_e2e::stores::Backend;

/// What the run measures.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every operation beside its floor, per backend and catalogue size.
    Tables,
    /// Create throughput with `clients` clients, ours then the floor's.
    Throughput,
    /// List pages (calls and latency) while `clients` clients create.
    Pages,
    /// The same operation at the smallest and the largest catalogue size,
    /// two deployments side by side.
    Scale,
    /// Round trips per operation: DynamoDB Local straight and through the
    /// delay line (`--dynamo-rtt-ms`), side by side.
    Edge,
    /// The same of the edge build (`spin-edge.toml`, the replicated layout).
    EdgeBuild,
    /// The edge build's first and mid-walk pages on the smallest and the
    /// largest catalogue (`--pets`), two SQLite stores side by side.
    EdgeScale,
    /// What the edge build's pages ask of the store (calls, `list-keys`,
    /// keys; DynamoDB's items and units through the meter), per backend
    /// (`--backends sqlite,dynamo`) and catalogue size, from a store the
    /// 2.0.0 edge build left (no index pieces).
    EdgeCosts,
    /// Creates per second on DynamoDB Local: for each delay a call
    /// (`--delays`), each number of `spin up` instances on one table
    /// (`--instances`) and each number of clients (`--connections`).
    Creates,
    /// Status lists of 1 in 2, 1 in 500 and 1 in 100,000 pets on a lanes
    /// store, straight and through the delay line: warm pages, whole walks,
    /// the page after a burst.
    Walks,
    /// The move of a counters store to lanes: the first create's calls and
    /// time through the delay line, against the creates after it.
    Move,
    /// `--operations` requests by `--clients` clients through two
    /// instances, on DynamoDB Local and Redis, judged by the model.
    History,
    /// What each operation consumes of DynamoDB's capacity (items read,
    /// absent ones charged; units), on each layout, `--counted` requests.
    Capacity,
    /// The CPU time DynamoDB Local spends on each kind of call a create
    /// makes, `--counted` calls each, the engine alone.
    Engine,
}

pub struct Options {
    pub mode: Mode,
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
    /// Concurrent clients of the throughput and pages modes.
    pub clients: usize,
    /// A network round trip (ms) added to every call to DynamoDB Local.
    pub dynamo_rtt_ms: f64,
    /// The creates mode's delays a call (ms) and numbers of instances.
    pub delays: Vec<f64>,
    pub instances: Vec<usize>,
    /// The creates mode on a moved store: each table first holds this many
    /// pets of the counters layout, moved to lanes by the first create.
    pub moved: usize,
    /// The creates mode through a meter (`--metered on`): each figure's
    /// DynamoDB calls, items read and units a create, as the capacity
    /// mode counts them.
    pub metered: bool,
    /// The history mode's requests a store.
    pub operations: usize,
}

const USAGE: &str = "--mode tables|throughput|pages|scale|edge|edge-build|edge-scale|edge-costs|creates|walks|move|history|capacity|engine --backends sqlite,redis,dynamo \
                     --pets N,N --seconds S --connections C,C --counted N --only NAME,NAME \
                     --key-form plain|digest --clients N --dynamo-rtt-ms MS --delays MS,MS --instances N,N --moved N \
                     --metered on|off --operations N";

fn mode(name: &str) -> Option<Mode> {
    match name {
        "tables" => Some(Mode::Tables),
        "throughput" => Some(Mode::Throughput),
        "pages" => Some(Mode::Pages),
        "scale" => Some(Mode::Scale),
        "edge" => Some(Mode::Edge),
        "edge-build" => Some(Mode::EdgeBuild),
        "edge-scale" => Some(Mode::EdgeScale),
        "edge-costs" => Some(Mode::EdgeCosts),
        "creates" => Some(Mode::Creates),
        "walks" => Some(Mode::Walks),
        "move" => Some(Mode::Move),
        "history" => Some(Mode::History),
        "capacity" => Some(Mode::Capacity),
        "engine" => Some(Mode::Engine),
        _ => None,
    }
}

fn list<T>(value: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
    value
        .split(',')
        .map(|v| parse(&v.trim().replace('_', "")).with_context(|| format!("'{v}'")))
        .collect()
}

fn backend(name: &str) -> Option<Backend> {
    Backend::SPIN.into_iter().find(|b| b.name() == name)
}

pub fn parse() -> Result<Options> {
    let mut o = Options {
        mode: Mode::Tables,
        backends: vec![Backend::Sqlite, Backend::Redis],
        pets: vec![1_000, 10_000, 100_000],
        seconds: 10.0,
        connections: vec![1, 4],
        counted: 100,
        only: Vec::new(),
        key_form: "plain".into(),
        clients: 16,
        dynamo_rtt_ms: 0.0,
        delays: vec![0.0, 10.0, 30.0],
        instances: vec![1, 2, 4],
        moved: 0,
        metered: false,
        operations: 20_000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value ({USAGE})"))?;
        match arg.as_str() {
            "--mode" => o.mode = mode(&value).with_context(|| format!("--mode {value}"))?,
            "--backends" => o.backends = list(&value, backend)?,
            "--clients" => o.clients = value.parse()?,
            "--dynamo-rtt-ms" => o.dynamo_rtt_ms = value.parse()?,
            "--delays" => o.delays = list(&value, |v| v.parse().ok())?,
            "--instances" => o.instances = list(&value, |v| v.parse().ok())?,
            "--moved" => o.moved = value.parse()?,
            "--metered" if ["on", "off"].contains(&value.as_str()) => o.metered = value == "on",
            "--operations" => o.operations = value.parse()?,
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
