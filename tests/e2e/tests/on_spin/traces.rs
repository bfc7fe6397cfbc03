//! Traces an operator can follow, on real `spin up` with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` set: a real OTLP/HTTP receiver
//! (`scripts/otlp_receiver.py`, decoding with the official
//! opentelemetry-proto messages) gets, for a create, a page and a getPet
//! that carry a W3C `traceparent`, one server span each in that trace, with
//! the route and status, and under it one span per key-value call that Spin
//! traces, as many as our log line's `kv_calls` says; our log line carries
//! the same `trace_id`, and Spin exports it as a log record.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use petstore_e2e::client::KEY;
use petstore_e2e::otlp::{is_kv_call, Receiver};
use petstore_e2e::poll_until;
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::{Backend, Store};
use serde_json::Value;

/// A `traceparent` whose trace id is `n` in hex, 32 digits.
fn traceparent(n: u64) -> (String, String) {
    let trace = format!("{n:032x}");
    (format!("00-{trace}-00000000000000a1-01"), trace)
}

/// What a request is, its method, path, body and status.
type Traced = (
    &'static str,
    &'static str,
    &'static str,
    Option<&'static [u8]>,
    u16,
);

/// The requests of one backend, each with its own trace id: what was asked,
/// the trace id, and the log line's `kv_calls`.
fn drive(spin: &SpinUp, first: u64) -> Vec<(&'static str, String, u64)> {
    let mut sent = Vec::new();
    let requests: [Traced; 3] = [
        (
            "create",
            "POST",
            "/v1/pets",
            Some(br#"{"name":"t","categoryId":1}"#),
            201,
        ),
        ("page", "GET", "/v1/pets?limit=5", None, 200),
        ("getPet", "GET", "/v1/pets/1", None, 200),
    ];
    for (n, (what, method, path, body, status)) in requests.into_iter().enumerate() {
        let (header, trace) = traceparent(first + n as u64);
        let request_id = format!("traced-{first}-{n}");
        let mut headers = vec![
            ("traceparent", header.as_str()),
            ("x-request-id", request_id.as_str()),
        ];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        let r = spin.api.send(method, path, Some(KEY), &headers, body);
        assert_eq!(r.status, status, "{what}");
        let line = spin.log_line(&request_id);
        assert_eq!(line["trace_id"], trace.as_str(), "{what}: {line}");
        sent.push((what, trace, line["kv_calls"].as_u64().unwrap()));
    }
    sent
}

#[test]
fn each_request_is_a_trace_with_one_span_per_key_value_call_joined_to_our_log_line() {
    let receiver = Receiver::start().unwrap();
    let endpoint = receiver.endpoint();
    let mut sent = Vec::new();
    let mut running = Vec::new();
    for (i, backend) in [Backend::Sqlite, Backend::Dynamo].into_iter().enumerate() {
        let store = Store::new(backend);
        let spin = store
            .launch()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .start();
        for (what, trace, calls) in drive(&spin, 100 * (i as u64 + 1)) {
            sent.push((backend, what, trace, calls));
        }
        running.push((store, spin));
    }
    // Spin's exporter sends in batches: wait until every request's server
    // span has arrived (the event), for at most a minute.
    let answered = Instant::now();
    let deadline = answered + Duration::from_secs(60);
    // Whatever has arrived by then, the checks below judge.
    let records = poll_until(deadline, Duration::from_millis(100), || {
        let records = receiver.records();
        let servers = records
            .iter()
            .filter(|r| r["signal"] == "span" && r["kind"] == 2)
            .count();
        if servers >= sent.len() {
            Ok(records)
        } else {
            Err(records)
        }
    })
    .unwrap_or_else(|so_far| so_far);
    let flushed = answered.elapsed();
    let spans: Vec<&Value> = records.iter().filter(|r| r["signal"] == "span").collect();
    let by_id: BTreeMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["span_id"].as_str().unwrap(), *s))
        .collect();
    for (backend, what, trace, calls) in &sent {
        let context = format!("{backend:?} {what}");
        let in_trace: Vec<&&Value> = spans
            .iter()
            .filter(|s| s["trace_id"] == trace.as_str())
            .collect();
        let servers: Vec<&&Value> = in_trace
            .iter()
            .copied()
            .filter(|s| s["kind"] == 2)
            .collect();
        assert_eq!(servers.len(), 1, "{context}: one server span in its trace");
        let server = servers[0];
        let attributes = &server["attributes"];
        assert_eq!(attributes["http.route"], "/v1/...", "{context}: {server}");
        let status = if *what == "create" { "201" } else { "200" };
        assert_eq!(attributes["http.response.status_code"], status, "{context}");
        // Every key-value span descends from the server span.
        let kv: Vec<&&Value> = in_trace
            .iter()
            .copied()
            .filter(|s| is_kv_call(s["name"].as_str().unwrap()))
            .collect();
        for span in &kv {
            let mut at: &Value = span;
            let mut hops = 0;
            while at["span_id"] != server["span_id"] && hops < 8 {
                at = by_id[at["parent_span_id"].as_str().unwrap()];
                hops += 1;
            }
            assert_eq!(at["span_id"], server["span_id"], "{context}: {span}");
        }
        // Spin 4.0.2 makes no span for a compare-and-swap's `new` and
        // `current` (crates/factor-key-value/src/host.rs instruments
        // `swap`), which our `kv_calls` counts: two calls a swap, as every
        // compare-and-swap of these uncontended requests ends in one.
        let swaps = kv
            .iter()
            .filter(|s| s["name"].as_str().unwrap().ends_with(".swap"))
            .count() as u64;
        assert_eq!(
            kv.len() as u64 + 2 * swaps,
            *calls,
            "{context}: key-value spans {:?} against kv_calls",
            kv.iter().map(|s| s["name"].clone()).collect::<Vec<_>>()
        );
    }
    // Spin exports the component's stdout as log records: our line is one.
    let logs: Vec<&Value> = records.iter().filter(|r| r["signal"] == "log").collect();
    for (_, what, trace, _) in &sent {
        assert!(
            logs.iter().any(|l| l["body"]
                .as_str()
                .is_some_and(|b| b.contains(trace.as_str()))),
            "{what}: our log line among the exported log records"
        );
    }
    println!(
        "traces: {} requests, {} spans and {} log records received, the last server span {:.1} s after the last answer",
        sent.len(),
        spans.len(),
        logs.len(),
        flushed.as_secs_f64()
    );
}
