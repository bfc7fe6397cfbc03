//! The rows as the markdown table BENCHMARKS.md keeps between its
//! `edge-metered` markers, with the pages a second Akamai's quotas allow.

use petstore_e2e::stores::Backend;

use super::rows::Row;

/// Akamai's published quotas, per app (../shared/spec/spin-platform-facts.md).
const READS_PER_S: f64 = 1_000.0;
const WRITES_PER_S: f64 = 50.0;

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
pub(super) fn table(rows: &[Row]) -> String {
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
