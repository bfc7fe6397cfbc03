//! Round trips per operation on a store a network away: two `spin up` on
//! one DynamoDB Local table (layout lanes), one straight to it and one
//! through the delay line (`--dynamo-rtt-ms`); one client alternates each
//! operation between them, request by request. Round trips = (p50 through
//! the line − p50 straight) ÷ the line's round trip: the latency a client
//! far from its store pays per operation.
//!
//! Then the page after a burst: the unfiltered list walked to its end, 100
//! creates, and that last page requested again (pieces not built yet), as
//! a syncing client does; several bursts.
//!
//! [`edge_build`]: the same round trips of the edge build (`spin-edge.toml`)
//! on one table it fills through its API (its ids are random).
//!
//! [`edge_scale`]: the edge build's first and mid-walk pages at two
//! catalogue sizes, alternated, on real `spin up` with SQLite.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use petstore::model::PetStatus;
use petstore_e2e::stores::{Backend, Store};

use crate::load;
use crate::measure::{self, ours_request};
use crate::operations::{self, Kind, Operation};
use crate::options::Options;
use crate::setup::{Deployment, Serving};
use crate::walks;

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    let rtt = serving.rtt("edge")?;
    let straight = serving.straight();
    for &pets in &o.pets {
        let near = Deployment::new(Backend::Dynamo, pets, &straight);
        let far = near.beside(serving);
        let deep = deep_page(&near, pets)?;
        // The deep page of a lanes store is where a walk reaches it.
        let operations = operations::all(pets).into_iter().map(|op| {
            if op.name.contains("deep cursor") {
                Operation {
                    path: deep.clone(),
                    ..op
                }
            } else {
                op
            }
        });
        let title = format!("DynamoDB Local, {pets} pets");
        round_trips(o, &near, &far, rtt, &title, operations)?;
        let everything: BTreeSet<i64> = near.store.handed_out_ids();
        let walked = walks::walk(&near.spin, "/v1/pets?limit=100", 100, &everything)?;
        println!(
            "\nThe unfiltered list's last page requested again after a burst of 100 creates, {} bursts:\n",
            walks::BURSTS / 2
        );
        println!("| calls | ms straight (median) | ms through the line | round trips |");
        println!("|---:|---:|---:|---:|");
        for line in walks::bursts(&near.spin, &far.spin, PetStatus::Pending, &walked.end, rtt)? {
            println!("| {line}");
        }
    }
    Ok(())
}

/// The target of the page of 100 that begins about 150 pets before the end
/// of the unfiltered list, reached by walking it.
fn deep_page(d: &Deployment, pets: usize) -> Result<String> {
    let wanted = pets.saturating_sub(150).max(1) as i64;
    let mut target = "/v1/pets?limit=100".to_string();
    loop {
        let r = d.spin.api.get(&target);
        if r.ids().last().is_some_and(|last| *last >= wanted) {
            return Ok(target);
        }
        match r.next_link() {
            Some(next) => target = next,
            None => bail!("the list ends before id {wanted}"),
        }
    }
}

/// Round trips of the edge build's operations: two `spin up` of
/// `spin-edge.toml` on one DynamoDB Local table, one straight to it and
/// one through the delay line, the table filled with `pets` pets through
/// the API (one in three of each status), listed once their second has
/// passed (the create's window; no replication on one store).
pub fn edge_build(o: &Options, serving: &Serving) -> Result<()> {
    let rtt = serving.rtt("edge-build")?;
    let statuses = ["available", "pending", "sold"];
    for &pets in &o.pets {
        let store = Arc::new(Store::new(Backend::Dynamo));
        let near = Deployment::edge_build(store.clone(), &serving.straight());
        let far = Deployment::edge_build(store, serving);
        let ids: Vec<i64> = (0..pets)
            .map(|i| near.spin.api.create(&format!("p{i}"), statuses[i % 3]))
            .collect();
        std::thread::sleep(Duration::from_millis(1_200));
        let some = ids.get(pets / 2).copied().unwrap_or(1);
        // A walk makes the index pieces; a page of 100 from its middle.
        let everything: BTreeSet<i64> = ids.iter().copied().collect();
        walks::walk(&near.spin, "/v1/pets?limit=100", 100, &everything)?;
        let mut mid = "/v1/pets?limit=100".to_string();
        for _ in 0..pets / 200 {
            mid = near.spin.api.get(&mid).next_link().unwrap_or_default();
        }
        let op = |name, path: String, kind| Operation {
            name,
            path,
            kind,
            value_bytes: 0,
        };
        let operations = [
            op("getPet", format!("/v1/pets/{some}"), Kind::Read),
            op("listPets (a page of 20)", "/v1/pets".into(), Kind::Read),
            op(
                "listPets?limit=100",
                "/v1/pets?limit=100".into(),
                Kind::Read,
            ),
            op("listPets?limit=100, mid-walk", mid, Kind::Read),
            op(
                "listPets?limit=100&status=sold",
                "/v1/pets?limit=100&status=sold".into(),
                Kind::Read,
            ),
            op("createPet", "/v1/pets".into(), Kind::Create),
            op(
                "createPet, new Idempotency-Key",
                "/v1/pets".into(),
                Kind::KeyedCreate,
            ),
            op("createPet, replayed", "/v1/pets".into(), Kind::Replay),
        ];
        let title = format!("the edge build, DynamoDB Local, {pets} pets");
        round_trips(o, &near, &far, rtt, &title, operations)?;
    }
    Ok(())
}

/// One table: each operation (those `--only` names) counted through `far`,
/// then alternated between `near` and `far`, request by request; its round
/// trips = (p50 through the line − p50 straight) ÷ the line's round trip.
fn round_trips(
    o: &Options,
    near: &Deployment,
    far: &Deployment,
    rtt: f64,
    title: &str,
    operations: impl IntoIterator<Item = Operation>,
) -> Result<()> {
    println!("\n## Round trips, {title}, +{rtt} ms a call\n");
    println!("| operation | KV calls | p50 straight ms | p50 through the line ms | round trips |");
    println!("|---|---:|---:|---:|---:|");
    for op in operations {
        if !o.only.is_empty() && !o.only.iter().any(|n| op.name.contains(n)) {
            continue;
        }
        let cost = measure::count(far, &op, o.counted)?;
        let request = ours_request(&op);
        let (a, b) = load::alternate(
            [&near.address(), &far.address()],
            &request,
            &request,
            1,
            o.seconds,
        )?;
        let (p_near, p_far) = (a.percentile(0.5), b.percentile(0.5));
        println!(
            "| {} | {:.2} | {p_near:.2} | {p_far:.2} | {:.2} |",
            op.name,
            cost.calls,
            (p_far - p_near) / rtt
        );
    }
    Ok(())
}

/// The edge build's first page and a mid-walk page of 20 on a store of
/// the smallest and one of the largest `--pets`, each its own SQLite store
/// and `spin up` of `spin-edge.toml` (B = 0), one client alternating
/// between them request by request; each store written as the 2.0.0 edge
/// build leaves it (a create's two keys a pet: `fill_replicated`), then
/// walked once 100 a page (its index pieces made). KV calls from the log:
/// 2 is a `get-many` of pieces and one of pets (no `list-keys`).
pub fn edge_scale(o: &Options, serving: &Serving) -> Result<()> {
    let (Some(&small), Some(&large)) = (o.pets.first(), o.pets.last()) else {
        bail!("--pets SMALL,LARGE");
    };
    let straight = serving.straight();
    let deployments: Vec<(usize, Deployment)> = [small, large]
        .into_iter()
        .map(|pets| {
            let store = Arc::new(Store::new(Backend::Sqlite));
            fill_replicated(&store, pets);
            (pets, Deployment::edge_build(store, &straight))
        })
        .collect();
    let mut pages = Vec::new();
    for (pets, d) in &deployments {
        let everything: BTreeSet<i64> = (0..*pets as u64).map(replicated_id).collect();
        let walked = walks::walk(&d.spin, "/v1/pets?limit=100", 100, &everything)?;
        // A page of 20 from the middle: the cursor after half the pets.
        let mut target = "/v1/pets?limit=100".to_string();
        for _ in 0..pets / 200 {
            target = d.spin.api.get(&target).next_link().unwrap_or_default();
        }
        let cursor = target.split("cursor=").nth(1).unwrap_or_default();
        pages.push((walked.end.clone(), format!("/v1/pets?cursor={cursor}")));
    }
    println!("\n## The edge build's pages, {large} ÷ {small} pets, SQLite, B = 0\n");
    println!("| page of 20 | KV calls at {small} | at {large} | p50 ms at {small} | at {large} | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, which) in [("first page", 0), ("mid-walk page", 1)] {
        let ops: Vec<Operation> = pages
            .iter()
            .map(|p| Operation {
                name: "page",
                path: if which == 0 {
                    "/v1/pets".into()
                } else {
                    p.1.clone()
                },
                kind: Kind::Read,
                value_bytes: 0,
            })
            .collect();
        let (a, b) = (&deployments[0].1, &deployments[1].1);
        let (ca, cb) = (
            measure::count(a, &ops[0], o.counted)?,
            measure::count(b, &ops[1], o.counted)?,
        );
        let (x, y) = load::alternate(
            [&a.address(), &b.address()],
            &ours_request(&ops[0]),
            &ours_request(&ops[1]),
            1,
            o.seconds,
        )?;
        let (p, q) = (x.percentile(0.5), y.percentile(0.5));
        println!(
            "| {name} | {:.2} | {:.2} | {p:.3} | {q:.3} | {:.2} |",
            ca.calls,
            cb.calls,
            q / p
        );
    }
    Ok(())
}

/// The `n`th pet's id in a store [`fill_replicated`] wrote: spread over
/// 1 … 2^53 − 1 as the edge build's random ids are.
pub fn replicated_id(n: u64) -> i64 {
    let mut x = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((x ^ (x >> 31)) >> 11).max(1) as i64
}

/// Writes `pets` pets as the edge build's creates write them (a pet's
/// record and its list entry, one in three of each status, ten a
/// millisecond a second before now, the store's mark), in bulk: on
/// DynamoDB by 8 writers at once, 25 items a `BatchWriteItem` (its most).
pub fn fill_replicated(store: &Store, pets: usize) {
    let statuses = ["available", "pending", "sold"];
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
        - 1_000
        - pets as u64 / 10;
    let mut pairs = vec![("ctr:id".to_string(), b"petstore-replicated 1".to_vec())];
    for n in 0..pets {
        let (id, status) = (replicated_id(n as u64), statuses[n % 3]);
        let json = format!(r#"{{"id":{id},"name":"p{n}","categoryId":1,"status":"{status}"}}"#);
        let t = start_ms + n as u64 / 10;
        pairs.push((
            format!("pet:{id}"),
            format!("petstore-pet 1 {n}\n{json}").into_bytes(),
        ));
        pairs.push((format!("ixr:{t:013}:{id:016}:{status}"), json.into_bytes()));
    }
    let (writers, batch) = match store.backend {
        Backend::Dynamo => (8, 25),
        _ => (1, 10_000),
    };
    let share = pairs.len().div_ceil(writers);
    std::thread::scope(|s| {
        for part in pairs.chunks(share) {
            let direct = store.direct();
            s.spawn(move || {
                for chunk in part.chunks(batch) {
                    direct.set_many(chunk).expect("fill the store");
                }
            });
        }
    });
}
