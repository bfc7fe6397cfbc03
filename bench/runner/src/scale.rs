//! Scale: each operation on the smallest and on the largest catalogue at
//! once, two deployments side by side on one backend, with clients that
//! alternate between them request by request — so the ratio large ÷ small
//! compares like with like on a machine whose speed drifts between runs.

use anyhow::Result;

use crate::load;
use crate::measure::ours_request;
use crate::operations;
use crate::options::Options;
use crate::setup::{Deployment, Serving};

pub fn run(o: &Options, serving: &Serving) -> Result<()> {
    let (Some(&small), Some(&large)) = (o.pets.first(), o.pets.last()) else {
        anyhow::bail!("--pets SMALL,LARGE");
    };
    println!("## Scale: {large} ÷ {small} pets, two deployments alternating\n");
    print!("| backend | operation |");
    for c in &o.connections {
        print!(" c={c} p50 ms at {small} | at {large} | ratio |");
    }
    println!();
    print!("|---|---|");
    for _ in &o.connections {
        print!("---:|---:|---:|");
    }
    println!();
    for &backend in &o.backends {
        let a = Deployment::new(backend, small, serving);
        let b = Deployment::new(backend, large, serving);
        let (ops_a, ops_b) = (operations::all(small), operations::all(large));
        for (op_a, op_b) in ops_a.iter().zip(&ops_b) {
            if !o.only.is_empty() && !o.only.iter().any(|n| op_a.name.contains(n)) {
                continue;
            }
            if op_a.kind == operations::Kind::Replay {
                // Replays need their first create on each deployment.
                for d in [&a, &b] {
                    let _ = d
                        .spin
                        .api
                        .post_keyed(operations::REPLAYED_KEY, operations::CREATE_BODY);
                }
            }
            print!("| {} | {} |", backend.name(), op_a.name);
            for &c in &o.connections {
                let (x, y) = load::alternate(
                    [&a.address(), &b.address()],
                    &ours_request(op_a),
                    &ours_request(op_b),
                    c,
                    o.seconds,
                )?;
                let (p, q) = (x.percentile(0.5), y.percentile(0.5));
                print!(" {p:.3} | {q:.3} | {:.2} |", q / p);
            }
            println!();
        }
    }
    Ok(())
}
