//! The rows of a deployment: each request's `kv_calls` from the access
//! log and its key-value calls from the spans Spin exported, checked
//! against each other and summed per row.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context, Result};
use petstore_e2e::meter::Consumed;
use petstore_e2e::otlp::{is_kv_call, Receiver};
use petstore_e2e::poll_until;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::Backend;

use super::booking::Booking;

/// One row: what its requests (one, or a whole walk) cost, summed.
pub(super) struct Row {
    pub(super) pets: usize,
    pub(super) backend: Backend,
    pub(super) name: String,
    pub(super) requests: usize,
    pub(super) kv_calls: u64,
    pub(super) list_keys: u64,
    pub(super) read_calls: u64,
    pub(super) write_calls: u64,
    /// Keys and bytes the `list-keys` calls returned.
    pub(super) keys: u64,
    pub(super) key_bytes: u64,
    /// DynamoDB: the meter's count.
    pub(super) used: Option<Consumed>,
}

/// The rows of a deployment: its requests' log lines and spans, summed.
pub(super) fn rows_of(
    b: &Booking,
    receiver: &Receiver,
    pets: usize,
    backend: Backend,
) -> Result<Vec<Row>> {
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
