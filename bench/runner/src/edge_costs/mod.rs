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

mod booking;
mod rows;
mod table;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use petstore_e2e::meter::Meter;
use petstore_e2e::otlp::Receiver;
use petstore_e2e::stores::{Backend, Store};
use petstore_e2e::workspace;

use crate::edge::{fill_replicated, replicated_id};
use crate::options::Options;
use crate::setup::Serving;
use booking::Booking;
use rows::{rows_of, Row};
use table::table;

/// B (`piece_interval_ms`): the open piece serves this long before a page
/// at the list's end makes it again.
const B_MS: u64 = 10_000;

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
    let mut b = Booking::new(&spin, meter.as_ref(), direct, run);
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
