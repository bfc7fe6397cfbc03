//! List pages while the catalogue grows: `clients` clients create back to
//! back while one reader walks the newest part of the unfiltered list and of
//! the `pending` list (where every create lands), page by page along the
//! `next` links, over and over. Each page's key-value calls come from
//! Spin's access log (`kv_calls`), its latency from the reader's clock. Then,
//! with the creates stopped, the same walks twice more: the second meets a
//! warm index, and shows what holes the creates left behind.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use petstore_e2e::client::Api;

use crate::load;
use crate::operations::create_request;
use crate::options::Options;
use crate::setup::{Deployment, Serving};

/// The two walks: their names and where they start.
fn walks(pets: usize) -> [(&'static str, String); 2] {
    let tail = |from: usize| from.saturating_sub(50).max(1);
    [
        ("all", format!("/v1/pets?limit=100&cursor=c{}", tail(pets))),
        (
            "pending",
            format!(
                "/v1/pets?limit=100&status=pending&cursor=c{}",
                tail(pets / 2)
            ),
        ),
    ]
}

/// One page read: its walk, request id, latency (ms) and pets.
struct PageRead {
    walk: &'static str,
    id: String,
    ms: f64,
    pets: usize,
}

/// Walks from `start` to the end; each page's read. `tag` makes request ids.
fn walk(api: &Api, name: &'static str, start: &str, tag: &str) -> Result<Vec<PageRead>> {
    let mut reads = Vec::new();
    let mut target = Some(start.to_string());
    while let Some(path) = target {
        let id = format!("{tag}-{name}-{}", reads.len());
        let sent = Instant::now();
        let r = api.get_with(&path, &[("x-request-id", &id)]);
        let ms = sent.elapsed().as_secs_f64() * 1000.0;
        if r.status != 200 {
            bail!("{path}: {} {}", r.status, r.body);
        }
        reads.push(PageRead {
            walk: name,
            id,
            ms,
            pets: r.ids().len(),
        });
        target = r.next_link();
    }
    Ok(reads)
}

/// The `kv_calls` of each request whose id starts with `tag`, by id.
fn calls(d: &Deployment, tag: &str, expected: usize) -> Result<BTreeMap<String, u64>> {
    for _ in 0..200 {
        let found: BTreeMap<String, u64> = d
            .spin
            .log_lines()
            .into_iter()
            .filter_map(|l| {
                let id = l["request_id"].as_str()?.to_string();
                id.starts_with(tag)
                    .then(|| (id, l["kv_calls"].as_u64().unwrap_or(0)))
            })
            .collect();
        if found.len() >= expected {
            return Ok(found);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("the access log lacks lines of the pages read")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summarize(backend: &str, label: &str, reads: &[PageRead], calls: &BTreeMap<String, u64>) {
    for name in ["all", "pending"] {
        let mine: Vec<&PageRead> = reads.iter().filter(|r| r.walk == name).collect();
        if mine.is_empty() {
            continue;
        }
        let mut c: Vec<f64> = mine.iter().map(|r| calls[&r.id] as f64).collect();
        c.sort_by(f64::total_cmp);
        let mut ms: Vec<f64> = mine.iter().map(|r| r.ms).collect();
        ms.sort_by(f64::total_cmp);
        let short = mine.iter().filter(|r| r.pets < 100).count();
        println!(
            "| {backend} | {label} | {name} | {} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} | {short} |",
            mine.len(),
            percentile(&c, 0.5),
            percentile(&c, 0.99),
            c[c.len() - 1],
            percentile(&ms, 0.5),
            percentile(&ms, 0.99),
            ms[ms.len() - 1],
        );
    }
}

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    let pets = o.pets.first().copied().unwrap_or(1_000);
    println!(
        "## List pages (`limit=100`) while {} clients create for {} s, {pets} pets preloaded\n",
        o.clients, o.seconds
    );
    println!("| backend | when | walk | pages | calls p50 | calls p99 | calls max | p50 ms | p99 ms | max ms | pages < 100 pets (last of a walk included) |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &backend in &o.backends {
        let d = Deployment::new(backend, pets, serving);
        let addr = d.address();
        let create = create_request();
        let deadline = Instant::now() + Duration::from_secs_f64(o.seconds);
        let api = d.spin.api.clone();
        let (creates, reads) = std::thread::scope(|scope| {
            let creators = scope.spawn(|| load::closed(&addr, &create, o.clients, o.seconds));
            let mut reads = Vec::new();
            let mut n = 0;
            while Instant::now() < deadline {
                for (name, start) in walks(pets) {
                    reads.extend(walk(&api, name, &start, &format!("busy{n}"))?);
                }
                n += 1;
            }
            let creates = creators
                .join()
                .map_err(|_| anyhow::anyhow!("creators panicked"))??;
            Ok::<_, anyhow::Error>((creates, reads))
        })?;
        let busy = calls(&d, "busy", reads.len())?;
        summarize(backend.name(), "during creates", &reads, &busy);
        let mut quiet = Vec::new();
        for tag in ["cold", "warm"] {
            let before = quiet.len();
            for (name, start) in walks(pets) {
                quiet.extend(walk(&api, name, &start, tag)?);
            }
            let logged = calls(&d, tag, quiet.len() - before)?;
            summarize(
                backend.name(),
                &format!("after, {tag}"),
                &quiet[before..],
                &logged,
            );
        }
        let listed = api.walk("/v1/pets?limit=100").len();
        let created = creates.ok.len();
        let last_id = api.walk(&walks(pets)[0].1).last().copied().unwrap_or(0);
        println!(
            "| {} | creates: {created} × 201 ({:.0}/s, p99 {:.0} ms), {} failed; pets listed {listed}, \
             last id {last_id}: {} holes | | | | | | | | |",
            backend.name(),
            creates.throughput(),
            creates.ok.percentile(0.99),
            creates.failed,
            last_id as usize - listed
        );
    }
    Ok(())
}
