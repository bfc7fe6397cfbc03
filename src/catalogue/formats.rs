//! Every stored format and cursor part this release reads, in one table,
//! which docs/key-value-layout.md lists too (tests/layout_doc.rs).

/// The key (or `cursor`), the shape, the releases that write it, why it
/// stays, and the one module that reads it, strictly.
#[rustfmt::skip]
pub const FORMATS: &[(&str, &str, &str, &str, &str)] = &[
    ("ctr:id", "nothing", "", "a store no create ran on", "layout.rs"),
    ("ctr:id", "a counter (SQLite: 8 bytes little-endian; else decimal)", "1.0.0–2.1.0", "the counters layout", "layout.rs"),
    ("ctr:id", "`petstore-lanes 1 <base> <last> <moved ms>`", "1.3.0", "stores 1.3.0 claimed keep their 16 lanes", "layout.rs"),
    ("ctr:id", "`petstore-lanes 2 <base> <last> <moved ms>[ lanes=<n>]`", "1.4.0–2.1.0", "lanes: 32, or `lanes=` of them (1 to 64; read since 2.0.0)", "layout.rs"),
    ("ctr:id", "`petstore-replicated 1`", "1.5.0–2.1.0 (edge)", "the replicated layout", "layout.rs"),
    ("ctr:{status}", "a counter", "1.0.0–2.1.0", "a counters status list's last position", "counters/walk.rs"),
    ("slot:{status}:{n}", "an id (`0`: given up)", "1.0.0–2.1.0", "a counters status list's position", "counters/walk.rs"),
    ("pet:{id}", "the pet's JSON", "1.0.0–2.1.0", "a counters pet", "record.rs"),
    ("pet:{id}", "`petstore-pending 1\\n<position> <start ms>\\n<JSON>` (start 0: given up)", "1.1.0–2.1.0", "a counters keyed create's stage", "record.rs"),
    ("pet:{id}", "`petstore-pet 1 <nonce>\\n<JSON>`", "1.3.0–2.1.0", "a lanes pet (a replicated one to 2.0.0) and its create", "record.rs"),
    ("pet:{id}", "`petstore-pet 1 +<t>\\n<JSON>`", "2.1.0 (edge)", "a replicated pet and its create's time (13 digits; 2.0.0 reads `+<t>` as a nonce): a half-applied create is mended from it", "record.rs"),
    ("idem:{sha256}", "a counter: 0, or a pet's id", "1.1.0–2.1.0", "a counters keyed create's word", "counters/keyed.rs"),
    ("idem:{sha256}", "`petstore-intent 1 <lane> <round> <id> <start ms> <nonce>\\n<JSON>`", "1.3.0–2.1.0", "a lanes keyed create's intent", "lanes/keyed.rs"),
    ("idem:{sha256}", "`petstore-replicated-key 1 <id>\\n<JSON>`", "1.5.0–2.1.0 (edge)", "a replicated keyed create's record", "replicated/create.rs"),
    ("ix2:{list}:{k}", "`petstore-index-piece 2`, then `<position> <id> <JSON>` lines", "1.1.0–2.1.0", "a counters list's piece", "piece.rs"),
    ("hole:{list}:{n}", "Unix ms", "1.3.0–2.1.0", "when a position was first found long empty", "counters/carry.rs"),
    ("lane:{k}", "`petstore-lane 1 <round> <a> <p> <s> <status> <id> <nonce>\\n<JSON>`", "1.3.0–2.1.0", "a lane's head", "lanes/head.rs"),
    ("sx:{status}:{k}:{p}", "the pet's JSON", "1.3.0–2.1.0", "a lane's pet of a status", "lanes/merge.rs"),
    ("ix3:{list}:…", "an index piece, as `ix2`", "1.3.0–2.1.0", "a lanes piece: of ids, or of a lane's status", "piece.rs"),
    ("ixm:{status}:{j}", "an index piece, as `ix2`", "1.7.0–2.1.0", "a status list's settled block", "piece.rs"),
    ("ixr:{t}:{id}:{status}", "the pet's JSON", "1.5.0–2.1.0 (edge)", "a replicated list entry", "replicated/entry.rs"),
    ("ixp:{list}:{n}", "`petstore-replicated-piece 1 <start t> <start id> <made ms>`, then an entry's key a line", "2.1.0 (edge)", "a replicated list's index piece: 200 entries, the last piece open", "replicated/pieces.rs"),
    ("cursor", "`c<position>`", "1.0.0–2.1.0", "a counters walk", "cursor.rs"),
    ("cursor", "`c<position>u<below>(-<below>)…_<since s>`", "1.3.0–2.1.0", "the positions a counters walk carries", "cursor.rs"),
    ("cursor", "`l<base>.<digit per lane>` or `l<n>(-<n>)…`", "1.3.0–2.1.0", "a lanes walk (16 or 32 lanes; up to 64, each of 15 digits at most, read since 2.0.0)", "cursor.rs"),
    ("cursor", "`c…l…`", "1.3.0–2.1.0", "a walk of a moved store", "cursor.rs"),
    ("cursor", "`l…_<n>`", "1.6.0–2.1.0", "rounds stored (unfiltered); exact to a block (status, 1.7.0)", "cursor.rs"),
    ("cursor", "`r<t>.<id>`", "1.5.0–2.1.0 (edge)", "a replicated walk; a walk's end elsewhere", "cursor.rs"),
    ("cursor", "`r<t>.<id>_p<n>`", "2.1.0 (edge)", "the index piece a replicated walk is in: a hint, checked (2.0.0 ignores it)", "replicated/mod.rs"),
    ("cursor", "up to 3 words `_<a-z><0-9 a-z>…` (1 to 18 long) at the end", "2.1.0 (`_p<n>`, edge)", "a later 2.x release's savings, ignored (after `l…_<n>` since 1.5.1, any part since 2.0.0)", "cursor.rs"),
];
