//! What each operation consumes of DynamoDB's capacity, as DynamoDB bills
//! it: real `spin up` over DynamoDB Local through a meter
//! (`petstore_e2e::meter`) that asks for `ReturnConsumedCapacity` on every
//! call and charges absent items as real DynamoDB does; 2,000 pets, 1 in 10
//! sold, warm (every list walked twice), one request at a time; per layout
//! the store may hold on DynamoDB (counters, lanes). Pages: the first, one
//! in the middle of a walk, and the list's end (its last page requested
//! again, as a client that follows the list does).

use anyhow::{bail, Result};
use petstore_e2e::client::Reply;
use petstore_e2e::meter::{metered_store, Consumed, Meter};

use crate::options::Options;

/// Pets in the store.
const PETS: usize = 2_000;

/// The lists whose pages are measured: every pet; `sold` (1 in 10: 200
/// pets, whose second page already reaches the newest); `available` (9 in
/// 10: a page in the middle of its walk lies in its settled part).
const LISTS: [(&str, &str); 3] = [
    ("/v1/pets?limit=100", "page of 100"),
    ("/v1/pets?limit=100&status=sold", "status page of 100"),
    (
        "/v1/pets?limit=100&status=available",
        "status page of 100, available",
    ),
];

pub fn run(o: &Options) -> Result<()> {
    let repeat = o.counted.max(1);
    for layout in ["counters", "lanes"] {
        let (_store, meter, spin) = metered_store(layout, PETS)?;
        let api = spin.api.clone();
        for _ in 0..2 {
            for (list, _) in LISTS {
                api.walk(list);
            }
        }
        println!("\n## Capacity, DynamoDB, {layout}: {PETS} pets (1 in 10 sold), warm, {repeat} requests each\n");
        println!("| operation | calls | items read | found | absent | read units | write units | units |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        let reads = [
            ("getPet".to_string(), format!("/v1/pets/{}", PETS / 2)),
            (
                "getPet, the newest pet".to_string(),
                format!("/v1/pets/{PETS}"),
            ),
        ];
        for (name, path) in reads {
            row(&name, &measure(&meter, repeat, || api.get(&path))?);
        }
        for (list, what) in LISTS {
            let pages = api.walk_targets(list);
            let middle = pages[pages.len() / 2].clone();
            let end = pages.last().expect("a last page").clone();
            for (which, path) in [
                ("first", list.to_string()),
                ("mid-walk", middle),
                ("list end", end),
            ] {
                row(
                    &format!("{what}, {which}"),
                    &measure(&meter, repeat, || api.get(&path))?,
                );
            }
        }
        let mut n = 0;
        row(
            "createPet",
            &measure(&meter, repeat, || {
                n += 1;
                api.post(&format!(
                    r#"{{"name":"c{n}","categoryId":1,"status":"available"}}"#
                ))
            })?,
        );
        let mut k = 0;
        row(
            "createPet, new Idempotency-Key",
            &measure(&meter, repeat, || {
                k += 1;
                api.post_keyed(&format!("key-{k}"), r#"{"name":"k","categoryId":1}"#)
            })?,
        );
        row(
            "createPet, replayed",
            &measure(&meter, repeat, || {
                api.post_keyed("key-1", r#"{"name":"k","categoryId":1}"#)
            })?,
        );
    }
    println!("\nUnits as DynamoDB counts them: a strongly consistent read 1 per 4 KB of each item (absent: 1), a write 1 per KB, transactions twice.");
    Ok(())
}

/// What one request consumed, the mean of `repeat`; each must succeed.
fn measure(meter: &Meter, repeat: usize, mut request: impl FnMut() -> Reply) -> Result<Row> {
    meter.take();
    for _ in 0..repeat {
        let reply = request();
        if reply.status >= 300 {
            bail!("{}: {}", reply.status, reply.body);
        }
    }
    Ok(Row::mean(meter.take(), repeat))
}

/// One operation's mean consumption.
struct Row {
    calls: f64,
    read: f64,
    found: f64,
    read_units: f64,
    write_units: f64,
}

impl Row {
    fn mean(total: Consumed, of: usize) -> Row {
        let n = of as f64;
        Row {
            calls: total.calls as f64 / n,
            read: total.items_read as f64 / n,
            found: total.items_found as f64 / n,
            read_units: total.read_units / n,
            write_units: total.write_units / n,
        }
    }
}

fn row(name: &str, r: &Row) {
    println!(
        "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        r.calls,
        r.read,
        r.found,
        r.read - r.found,
        r.read_units,
        r.write_units,
        r.read_units + r.write_units
    );
}
