//! The tables, as Markdown on stdout (pasted into BENCHMARKS.md).

use crate::measure::{Comparison, Cost};
use crate::operations::Operation;

pub fn sizes(sizes: &[(&str, u64)]) {
    println!("## Sizes\n");
    println!("| component | core module (.wasm) |");
    println!("|---|---:|");
    for (name, bytes) in sizes {
        println!("| {name} | {bytes} B |");
    }
}

pub fn table_head(backend: &str, connections: &[usize]) {
    println!("\n## Backend: {backend}\n");
    print!("| pets | operation | KV calls | new keys | body B |");
    for c in connections {
        print!(" c={c} p50 ms | floor p50 | ours ÷ floor | p99 ms | req/s |");
    }
    println!();
    print!("|---:|---|---:|---:|---:|");
    for _ in connections {
        print!("---:|---:|---:|---:|---:|");
    }
    println!();
}

pub fn row(pets: usize, op: &Operation, cost: &Cost, comparisons: &[Comparison]) {
    print!(
        "| {pets} | {} | {:.2} | {:.2} | {} |",
        op.name, cost.calls, cost.new_keys, cost.body_bytes
    );
    for c in comparisons {
        print!(
            " {:.3} | {:.3} | {:.2} | {:.3} | {:.0} |",
            c.ours_p50,
            c.floor_p50,
            c.ratio(),
            c.ours_p99,
            c.ours_rate
        );
    }
    println!();
}

pub fn largest(pets: usize, bytes: usize) {
    println!("| {pets} | largest stored value after preload: {bytes} B | | | |");
}

pub fn floor_note() {
    println!(
        "\nFloor: `/floor/x?gets=G&value=V&bytes=B` (G = our calls, V = the size of the values \
         ours reads: 2150 B for pages of 100, 64 B otherwise; B = our body size) for reads \
         and replays; `/floor/x?create=1&bytes=B` (one `increment`, one `set` of a new \
         key) for creates, with or without a key."
    );
}
