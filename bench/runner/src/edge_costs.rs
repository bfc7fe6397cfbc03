//! What the edge build's pages ask of the store, counted on real `spin up`
//! of `spin-edge.toml`: per backend (SQLite; DynamoDB Local through the
//! meter, `petstore_e2e::meter`) and catalogue size, a store written as
//! the 2.0.0 edge build leaves it (`edge::fill_replicated`: no index
//! pieces), then, request by request: the first page (pieces made), a walk
//! of the whole list 100 a page (every piece made), the list's end, the
//! first page again, a page from the middle of the walk, a status list's
//! first page (its pieces made) and again, the list's end once B
//! (`piece_interval_ms`) has passed, a create and a getPet.
//!
//! Where each number comes from: KV calls, the access log's `kv_calls`;
//! `list-keys` and write calls, the spans Spin exports for each key-value
//! call (`OTEL_EXPORTER_OTLP_ENDPOINT` to `scripts/otlp_receiver.py`, one
//! trace per request; their count is checked against `kv_calls`); the keys
//! and bytes a `list-keys` returned, on DynamoDB the keys of the `Scan`s'
//! answers (the meter), on SQLite the store's keys when the request began
//! (Spin's SQLite `list-keys` is every key of the store); DynamoDB's calls,
//! items and units, the meter.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context, Result};
use petstore_e2e::client::{Api, Reply, KEY};
use petstore_e2e::meter::{Consumed, Meter};
use petstore_e2e::otlp::{is_kv_call, Receiver};
use petstore_e2e::poll_until;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};
use petstore_e2e::workspace;
use petstore_host::kv::KvStore;

use crate::edge::{fill_replicated, replicated_id};
use crate::options::Options;
use crate::setup::Serving;

/// B (`piece_interval_ms`): the open piece serves this long before a page
/// at the list's end makes it again.
const B_MS: u64 = 10_000;

/// Akamai's published quotas, per app (../shared/spec/spin-platform-facts.md).
const READS_PER_S: f64 = 1_000.0;
const WRITES_PER_S: f64 = 50.0;

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    if let Some(b) = o
        .backends
        .iter()
        .find(|b| !matches!(b, Backend::Sqlite | Backend::Dynamo))
    {
        bail!(
            "--mode edge-costs runs on sqlite and dynamo, not {}",
            b.name()
        );
    }
    petstore_e2e::spin::build_edge();
    let module = workspace().join("target/wasm32-wasip1/release/petstore_edge.wasm");
    let module = module.canonicalize().unwrap_or(module);
    let size = std::fs::metadata(&module).map_or(0, |m| m.len());
    println!("The edge build's module: {} ({size} B)", module.display());
    println!("B (piece_interval_ms) = {B_MS} ms; replication_ms and clock_skew_ms 0\n");
    let receiver = Receiver::start().map_err(anyhow::Error::msg)?;
    let mut rows = Vec::new();
    for &pets in &o.pets {
        for &backend in &o.backends {
            rows.extend(measure(serving, &receiver, backend, pets)?);
            eprintln!("{}", table(&rows));
        }
    }
    println!("{}", table(&rows));
    Ok(())
}

/// One row: what its requests (one, or a whole walk) cost, summed.
struct Row {
    pets: usize,
    backend: Backend,
    name: String,
    requests: usize,
    kv_calls: u64,
    list_keys: u64,
    read_calls: u64,
    write_calls: u64,
    /// Keys and bytes the `list-keys` calls returned.
    keys: u64,
    key_bytes: u64,
    /// DynamoDB: the meter's count.
    used: Option<Consumed>,
}

/// A request sent, its trace and what the store held when it began.
struct Sent {
    row: usize,
    trace: String,
    request_id: String,
    /// SQLite: the store's keys and their bytes before the request.
    keys_before: Option<(u64, u64)>,
}

/// One deployment being booked.
struct Booking<'a> {
    spin: &'a SpinUp,
    /// A client that waits as long as a `list-keys` of the whole store
    /// takes (minutes on DynamoDB Local at 100,000 pets).
    api: Api,
    /// When the current row began.
    began: Instant,
    meter: Option<&'a Meter>,
    /// SQLite: the store, reached directly; its keys' count and bytes.
    direct: Option<KvStore>,
    keys: (u64, u64),
    sent: Vec<Sent>,
    names: Vec<String>,
    used: Vec<Option<Consumed>>,
    run: String,
}

impl Booking<'_> {
    /// Starts a row: the meter's count from here on is its.
    fn row(&mut self, name: &str) {
        if let Some(meter) = self.meter {
            meter.take();
        }
        self.names.push(name.to_string());
        self.used.push(None);
        self.began = Instant::now();
    }

    /// Ends the current row: the meter's count since it began.
    fn end(&mut self) {
        let used = self.meter.map(Meter::take);
        if let Some(last) = self.used.last_mut() {
            *last = used;
        }
        let name = self.names.last().map_or("", String::as_str);
        eprintln!(
            "{}: {name}, {:.1} s",
            self.run,
            self.began.elapsed().as_secs_f64()
        );
    }

    /// One row of one request.
    fn one(&mut self, name: &str, method: &str, target: &str, body: Option<&str>) -> Result<Reply> {
        self.row(name);
        let reply = self.send(method, target, body)?;
        self.end();
        Ok(reply)
    }

    /// A request of the current row, with a trace of its own.
    fn send(&mut self, method: &str, target: &str, body: Option<&str>) -> Result<Reply> {
        let keys_before = match &self.direct {
            Some(direct) => {
                let count = direct.key_count() as u64;
                if count != self.keys.0 {
                    let keys = direct.list_keys().map_err(|e| anyhow::anyhow!("{e}"))?;
                    self.keys = (keys.len() as u64, keys.iter().map(|k| k.len() as u64).sum());
                }
                Some(self.keys)
            }
            None => None,
        };
        let row = self.names.len() - 1;
        let n = self.sent.len();
        let trace = format!("{:016x}{n:016x}", fresh_prefix(&self.run));
        let request_id = format!("{}-{n}", self.run);
        let parent = format!("00-{trace}-00000000000000a1-01");
        let mut headers = vec![
            ("traceparent", parent.as_str()),
            ("x-request-id", request_id.as_str()),
        ];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        let reply = self
            .api
            .send(method, target, Some(KEY), &headers, body.map(str::as_bytes));
        ensure!(
            reply.status < 300,
            "{method} {target}: {} {}",
            reply.status,
            reply.body
        );
        self.sent.push(Sent {
            row,
            trace,
            request_id,
            keys_before,
        });
        Ok(reply)
    }
}

/// A trace-id prefix of this deployment (its run name hashed).
fn fresh_prefix(run: &str) -> u64 {
    run.bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
        .max(1)
}

/// Every row of one backend and size.
fn measure(
    serving: &Serving,
    receiver: &Receiver,
    backend: Backend,
    pets: usize,
) -> Result<Vec<Row>> {
    let store = Arc::new(Store::new(backend));
    let filling = Instant::now();
    fill_replicated(&store, pets);
    eprintln!(
        "{pets} pets written to {} in {:.0} s",
        backend.name(),
        filling.elapsed().as_secs_f64()
    );
    let meter = match backend {
        Backend::Dynamo => {
            let local = petstore_e2e::dynamo::local().endpoint.clone();
            Some(Meter::start(local.trim_start_matches("http://"))?)
        }
        _ => None,
    };
    let mut launch = store
        .launch_release(&workspace().join("spin-edge.toml"))
        .variable("api_key", &serving.api_key)
        .variable("replication_ms", "0")
        .variable("clock_skew_ms", "0")
        .variable("piece_interval_ms", &B_MS.to_string())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        // Every span kept and sent soon: a walk makes thousands.
        .env("OTEL_BSP_MAX_QUEUE_SIZE", "1000000")
        .env("OTEL_BSP_SCHEDULE_DELAY", "200")
        .env("OTEL_BLRP_MAX_QUEUE_SIZE", "1000000");
    if let Some(meter) = &meter {
        launch = launch.env("AWS_ENDPOINT_URL", meter.endpoint());
    }
    let spin = launch.start();
    let run = format!("costs-{}-{pets}-{}", backend.name(), std::process::id());
    let direct = (backend == Backend::Sqlite).then(|| store.direct());
    let mut b = Booking {
        spin: &spin,
        api: Api::with_timeout(spin.api.base.clone(), Duration::from_secs(3_600)),
        began: Instant::now(),
        meter: meter.as_ref(),
        direct,
        keys: (0, 0),
        sent: Vec::new(),
        names: Vec::new(),
        used: Vec::new(),
        run,
    };
    b.one("first page of 20, pieces made", "GET", "/v1/pets", None)?;
    // The walk, 100 a page, to the list's end: every piece made.
    b.row("walk 100 a page to the list's end, every piece made");
    let (mut target, mut pages, mut seen) = ("/v1/pets?limit=100".to_string(), 0, 0);
    let mut middle = None;
    loop {
        let r = b.send("GET", &target, None)?;
        pages += 1;
        seen += r.ids().len();
        if middle.is_none() && seen >= pets / 2 {
            middle = r.next_link();
        }
        match r.next_link() {
            Some(next) => target = next,
            None => break,
        }
    }
    b.end();
    let walked = Instant::now();
    ensure!(seen == pets, "the walk listed {seen} of {pets} pets");
    let last = b.names.len() - 1;
    b.names[last] = format!("walk 100 a page to the list's end ({pages} pages), every piece made");
    let end = target;
    let cursor = middle
        .as_deref()
        .and_then(|t| t.split("cursor=").nth(1))
        .map(|c| c.split('&').next().unwrap_or(c).to_string())
        .context("a cursor in the middle of the walk")?;
    b.one("list-end page", "GET", &end, None)?;
    b.one("first page of 20", "GET", "/v1/pets", None)?;
    b.one(
        "mid-walk page of 20",
        "GET",
        &format!("/v1/pets?cursor={cursor}"),
        None,
    )?;
    b.one(
        "mid-walk page of 100",
        "GET",
        &format!("/v1/pets?limit=100&cursor={cursor}"),
        None,
    )?;
    let status = "/v1/pets?limit=100&status=sold";
    b.one("status page of 100, pieces made", "GET", status, None)?;
    b.one("status page of 100", "GET", status, None)?;
    // B passed since the walk made the open piece (and the horizon's 1 s).
    let wait = Duration::from_millis(B_MS + 1_500).saturating_sub(walked.elapsed());
    std::thread::sleep(wait);
    b.one("list-end page, B passed", "GET", &end, None)?;
    b.one("list-end page, after it", "GET", &end, None)?;
    b.one(
        "createPet",
        "POST",
        "/v1/pets",
        Some(r#"{"name":"c","categoryId":1,"status":"available"}"#),
    )?;
    let some = replicated_id(pets as u64 / 2);
    b.one("getPet", "GET", &format!("/v1/pets/{some}"), None)?;
    rows_of(&b, receiver, pets, backend)
}

/// The rows of a deployment: its requests' log lines and spans, summed.
fn rows_of(b: &Booking, receiver: &Receiver, pets: usize, backend: Backend) -> Result<Vec<Row>> {
    let logged = log_calls(b.spin, &b.run, b.sent.len())?;
    let spans = spans_of(receiver, b.sent.iter().map(|s| s.trace.as_str()))?;
    let mut rows: Vec<Row> = b
        .names
        .iter()
        .zip(&b.used)
        .map(|(name, used)| Row {
            pets,
            backend,
            name: name.clone(),
            requests: 0,
            kv_calls: 0,
            list_keys: 0,
            read_calls: 0,
            write_calls: 0,
            keys: 0,
            key_bytes: 0,
            used: *used,
        })
        .collect();
    for sent in &b.sent {
        let row = &mut rows[sent.row];
        let calls = logged
            .get(&sent.request_id)
            .copied()
            .with_context(|| format!("no log line of {}", sent.request_id))?;
        let names = spans.get(&sent.trace).cloned().unwrap_or_default();
        ensure!(
            names.len() as u64 == calls,
            "{}: {} key-value spans {names:?}, kv_calls {calls}",
            sent.request_id,
            names.len()
        );
        let listed = names.iter().filter(|n| n.ends_with("list_keys")).count() as u64;
        let writes = names.iter().filter(|n| is_write(n)).count() as u64;
        row.requests += 1;
        row.kv_calls += calls;
        row.list_keys += listed;
        row.write_calls += writes;
        row.read_calls += calls - writes;
        if let Some((keys, bytes)) = sent.keys_before {
            row.keys += listed * keys;
            row.key_bytes += listed * bytes;
        }
    }
    for row in &mut rows {
        if let Some(used) = &row.used {
            row.keys = used.scanned_keys;
            row.key_bytes = used.scanned_key_bytes;
        }
    }
    // The first page and the walk: what making every piece of the list took.
    let both = sum(
        &rows[0],
        &rows[1],
        "the two above: every piece of the list made",
    );
    rows.insert(2, both);
    Ok(rows)
}

/// Two rows' requests as one.
fn sum(a: &Row, b: &Row, name: &str) -> Row {
    let used = match (a.used, b.used) {
        (Some(x), Some(y)) => {
            let mut by_operation = x.by_operation;
            for (n, m) in by_operation.iter_mut().zip(y.by_operation) {
                *n += m;
            }
            Some(Consumed {
                calls: x.calls + y.calls,
                items_read: x.items_read + y.items_read,
                items_found: x.items_found + y.items_found,
                read_units: x.read_units + y.read_units,
                write_units: x.write_units + y.write_units,
                refused: x.refused + y.refused,
                by_operation,
                items_written: x.items_written + y.items_written,
                scanned_keys: x.scanned_keys + y.scanned_keys,
                scanned_key_bytes: x.scanned_key_bytes + y.scanned_key_bytes,
            })
        }
        _ => None,
    };
    Row {
        pets: a.pets,
        backend: a.backend,
        name: name.to_string(),
        requests: a.requests + b.requests,
        kv_calls: a.kv_calls + b.kv_calls,
        list_keys: a.list_keys + b.list_keys,
        read_calls: a.read_calls + b.read_calls,
        write_calls: a.write_calls + b.write_calls,
        keys: a.keys + b.keys,
        key_bytes: a.key_bytes + b.key_bytes,
        used,
    }
}

fn is_write(span: &str) -> bool {
    [
        "set",
        "set_many",
        "delete",
        "delete_many",
        "increment",
        "swap",
    ]
    .iter()
    .any(|w| span.ends_with(&format!(".{w}")))
}

/// `kv_calls` of each request of `run`, once all `n` lines are written.
fn log_calls(spin: &SpinUp, run: &str, n: usize) -> Result<BTreeMap<String, u64>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    poll_until(deadline, Duration::from_millis(100), || {
        let calls: BTreeMap<String, u64> = spin
            .log_lines()
            .into_iter()
            .filter_map(|l| {
                let id = l["request_id"].as_str()?;
                id.starts_with(run)
                    .then(|| (id.to_string(), l["kv_calls"].as_u64().unwrap_or(0)))
            })
            .collect();
        if calls.len() >= n {
            Ok(calls)
        } else {
            Err(calls.len())
        }
    })
    .map_err(|got| anyhow!("{got} of {n} log lines"))
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Pages a second a quota allows: `quota` ÷ what one costs ("∞": none).
fn per_second(quota: f64, cost: f64) -> f64 {
    if cost > 0.0 {
        quota / cost
    } else {
        f64::INFINITY
    }
}

fn rate(x: f64) -> String {
    if x.is_infinite() {
        "∞".into()
    } else if x >= 10.0 {
        thousands(x.round() as u64)
    } else {
        format!("{x:.2}")
    }
}

/// The rows as a markdown table, between the markers BENCHMARKS.md keeps.
fn table(rows: &[Row]) -> String {
    let mut out = String::from("<!-- edge-metered: begin -->\n");
    out.push_str(
        "| pets | store | request | KV calls | list-keys | keys listed | key bytes | writes | DynamoDB calls (Get/BatchGet/BatchWrite/Transact/Scan) | items read / found | items written | read units | write units | per s, a read a call | per s, a read a key |\n",
    );
    out.push_str("|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let dash = || "—".to_string();
        let (dynamo, items, written, ru, wu) = match &r.used {
            Some(u) => (
                u.by_operation
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join("/"),
                format!("{} / {}", thousands(u.items_read), thousands(u.items_found)),
                thousands(u.items_written),
                format!("{:.1}", u.read_units),
                format!("{:.1}", u.write_units),
            ),
            None => (dash(), dash(), dash(), dash(), dash()),
        };
        // A walk is many pages: its totals, no rate.
        let n = r.requests as f64;
        let (by_call, by_key) = if r.requests > 1 {
            (dash(), dash())
        } else {
            let by_call = per_second(READS_PER_S, r.read_calls as f64 / n)
                .min(per_second(WRITES_PER_S, r.write_calls as f64 / n));
            let by_key = r.used.map_or_else(dash, |u| {
                rate(
                    per_second(READS_PER_S, u.items_read as f64 / n)
                        .min(per_second(WRITES_PER_S, u.items_written as f64 / n)),
                )
            });
            (rate(by_call), by_key)
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {dynamo} | {items} | {written} | {ru} | {wu} | {by_call} | {by_key} |\n",
            thousands(r.pets as u64),
            match r.backend {
                Backend::Dynamo => "DynamoDB Local",
                _ => "SQLite",
            },
            r.name,
            thousands(r.kv_calls),
            r.list_keys,
            if r.list_keys > 0 { thousands(r.keys) } else { dash() },
            if r.list_keys > 0 { thousands(r.key_bytes) } else { dash() },
            r.write_calls,
        ));
    }
    out.push_str("<!-- edge-metered: end -->");
    out
}

/// The key-value spans of each of `traces`, once every trace's server span
/// has arrived.
fn spans_of<'t>(
    receiver: &Receiver,
    traces: impl Iterator<Item = &'t str>,
) -> Result<BTreeMap<String, Vec<String>>> {
    let wanted: Vec<&str> = traces.collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    poll_until(deadline, Duration::from_millis(200), || {
        let mut servers = BTreeMap::new();
        let mut kv: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for record in receiver.records() {
            if record["signal"] != "span" {
                continue;
            }
            let trace = record["trace_id"].as_str().unwrap_or("").to_string();
            let name = record["name"].as_str().unwrap_or("");
            if record["kind"] == 2 {
                *servers.entry(trace.clone()).or_insert(0) += 1;
            }
            if is_kv_call(name) {
                kv.entry(trace).or_default().push(name.to_string());
            }
        }
        let arrived = wanted.iter().filter(|t| servers.contains_key(**t)).count();
        if arrived == wanted.len() {
            Ok(kv)
        } else {
            Err(arrived)
        }
    })
    .map_err(|arrived| anyhow!("{arrived} of {} traces arrived", wanted.len()))
}
