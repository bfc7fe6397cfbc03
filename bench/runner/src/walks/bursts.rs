//! The page after a burst: creates of one status, then the walk's last
//! page requested again, as a syncing client does, alternately through
//! the line and straight.

use std::collections::BTreeSet;
use std::time::Instant;

use anyhow::{ensure, Result};
use petstore::model::PetStatus;
use petstore_e2e::client::pet_body;
use petstore_e2e::spin::SpinUp;

use super::walk::{fresh, logged_calls};

/// Bursts after each walk (alternately timed through the line and not).
pub(crate) const BURSTS: usize = 10;
pub(super) const BURST: usize = 100;

/// [`BURSTS`] bursts of `BURST` creates of `status`, each followed by the
/// list's last page (`end`) requested again, alternately through the line
/// (`far`) and straight (`near`): per burst through the line, its calls,
/// its time, the median time straight, and the round trips that makes.
pub(crate) fn bursts(
    near: &SpinUp,
    far: &SpinUp,
    status: PetStatus,
    end: &str,
    rtt: f64,
) -> Result<Vec<String>> {
    let mut end = end.to_string();
    let (mut straight, mut through) = (Vec::new(), Vec::new());
    for burst in 0..BURSTS {
        let side = if burst % 2 == 0 { far } else { near };
        let (ms, calls, next_end) = after_burst(near, side, status, &end, burst)?;
        if burst % 2 == 0 {
            through.push((ms, calls));
        } else {
            straight.push(ms);
        }
        end = next_end;
    }
    straight.sort_by(f64::total_cmp);
    let median = straight[straight.len() / 2];
    Ok(through
        .into_iter()
        .map(|(ms, calls)| {
            format!(
                "{calls} | {median:.1} | {ms:.1} | {:.2} |",
                (ms - median) / rtt
            )
        })
        .collect())
}

/// `BURST` creates of `status` from 8 clients through `near`, then `end`
/// (the walk's last page) requested again on `side`: its time and calls,
/// and the new end of the walk. The page must list the burst's pets.
fn after_burst(
    near: &SpinUp,
    side: &SpinUp,
    status: PetStatus,
    end: &str,
    burst: usize,
) -> Result<(f64, u64, String)> {
    let body = pet_body("burst", status.as_str());
    let created: Vec<i64> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..8)
            .map(|c| {
                let (api, body) = (&near.api, &body);
                scope.spawn(move || {
                    (c..BURST)
                        .step_by(8)
                        .map(|_| api.post(body))
                        .filter(|r| r.status == 201)
                        .map(|r| r.created_id())
                        .collect::<Vec<i64>>()
                })
            })
            .collect();
        clients
            .into_iter()
            .flat_map(|c| c.join().unwrap_or_default())
            .collect()
    });
    ensure!(
        created.len() == BURST,
        "burst {burst}: {} created",
        created.len()
    );
    let id = format!("burst-{}-{burst}-{}", status.as_str(), fresh());
    let sent = Instant::now();
    let r = side.api.get_with(end, &[("x-request-id", &id)]);
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    ensure!(r.status == 200, "{end}: {} {}", r.status, r.body);
    let listed: BTreeSet<i64> = r.ids().into_iter().collect();
    let wanted: BTreeSet<i64> = created.into_iter().collect();
    ensure!(
        listed == wanted,
        "burst {burst}: the page after it listed {} of {BURST}",
        listed.len()
    );
    // On to the new end: the page after lists nothing, and has no link.
    let mut next = r
        .next_link()
        .ok_or_else(|| anyhow::anyhow!("no next link"))?;
    loop {
        let page = near.api.get(&next);
        ensure!(page.ids().is_empty(), "pets after the burst's");
        match page.next_link() {
            Some(more) => next = more,
            None => break,
        }
    }
    Ok((ms, logged_calls(side, &id)?, next))
}
