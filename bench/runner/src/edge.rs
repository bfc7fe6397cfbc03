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
