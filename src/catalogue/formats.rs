//! Every stored format and cursor part this release reads, in one table,
//! which docs/key-value-layout.md lists too (tests/layout_doc.rs): each
//! header is the const of the module that writes and reads it, named here,
//! never written again. A stored number is read, strictly, by one parser:
//! one written `{n}` with [`number`](crate::model::number) (1 to 18 digits,
//! no sign, no leading zero but `0` itself, as in cursors), one written
//! zero-padded (`{t:013}`, `{nonce:016x}`) with
//! [`padded`](crate::model::padded); nothing else.
//!
//! The table is read by tests only: the component links none of it.

use super::{created::Keyed, lanes::Geometry, lanes::Heads, piece, record, replicated};

/// A row: the key (or `cursor`); the value's header (its module's const,
/// as bytes; empty: none) and its shape after the header, as the doc
/// writes it; the releases that write it; why it stays; the one module
/// that reads it, strictly.
#[derive(Debug, Clone, Copy)]
pub struct Format(
    pub &'static str,
    pub (&'static [u8], &'static str),
    pub &'static str,
    pub &'static str,
    pub &'static str,
);

impl Format {
    /// The shape as the doc writes it: `` `<header>`` (a newline as `\n`),
    /// then the rest; or the rest alone.
    pub fn shape(&self) -> String {
        let (header, rest) = self.1;
        let header = String::from_utf8_lossy(header).replace('\n', "\\n");
        match header.is_empty() {
            true => rest.to_string(),
            false => format!("`{header}{rest}"),
        }
    }
}

/// Every stored format and cursor part this release reads.
#[rustfmt::skip]
pub const FORMATS: &[Format] = &[
    Format("ctr:id", (b"", "nothing"), "", "a store no create ran on", "layout.rs"),
    Format("ctr:id", (b"", "a counter (SQLite: 8 bytes little-endian; else decimal)"), "1.0.0–2.1.1", "the counters layout", "layout.rs"),
    Format("ctr:id", (Geometry::MARK.as_bytes(), "1 <base> <last> <moved ms>`"), "1.3.0", "stores 1.3.0 claimed keep their 16 lanes", "layout.rs"),
    Format("ctr:id", (Geometry::MARK.as_bytes(), "2 <base> <last> <moved ms>[ lanes=<n>]`"), "1.4.0–2.1.1", "lanes: 32, or `lanes=` of them (1 to 64; read since 2.0.0)", "layout.rs"),
    Format("ctr:id", (replicated::MARK, "`"), "1.5.0–2.1.1 (edge)", "the replicated layout", "layout.rs"),
    Format("ctr:{status}", (b"", "a counter"), "1.0.0–2.1.1", "a counters status list's last position", "counters/walk.rs"),
    Format("slot:{status}:{n}", (b"", "an id (`0`: given up)"), "1.0.0–2.1.1", "a counters status list's position", "counters/carry.rs"),
    Format("pet:{id}", (b"", "the pet's JSON"), "1.0.0–2.1.1", "a counters pet", "record.rs"),
    Format("pet:{id}", (record::PENDING.as_bytes(), "<position> <start ms>\\n<JSON>` (start 0: given up)"), "1.1.0–2.1.1", "a counters keyed create's stage", "record.rs"),
    Format("pet:{id}", (record::PERSISTED.as_bytes(), "<nonce>\\n<JSON>`"), "1.3.0–2.1.1", "a lanes pet (a replicated one to 2.0.0) and its create", "record.rs"),
    Format("pet:{id}", (record::PERSISTED.as_bytes(), "+<t>\\n<JSON>`"), "2.1.0–2.1.1 (edge)", "a replicated pet and its create's time (13 digits; 2.0.0 reads `+<t>` as a nonce): a half-applied create is mended from it", "record.rs"),
    Format("idem:{sha256}", (b"", "a counter: 0, or a pet's id"), "1.1.0–2.1.1", "a counters keyed create's word", "counters/keyed.rs"),
    Format("idem:{sha256}", (Keyed::LANES_INTENT.as_bytes(), "<lane> <round> <id> <start ms> <nonce>\\n<JSON>`"), "1.3.0–2.1.1", "a lanes keyed create's intent", "lanes/keyed.rs"),
    Format("idem:{sha256}", (replicated::RECORD.as_bytes(), "<id>\\n<JSON>`"), "1.5.0–2.1.1 (edge)", "a replicated keyed create's record", "replicated/create.rs"),
    Format("ix2:{list}:{k}", (piece::HEADER.as_bytes(), "`, then `<position> <id> <JSON>` lines"), "1.1.0–2.1.1", "a counters list's piece", "piece.rs"),
    Format("hole:{list}:{n}", (b"", "Unix ms"), "1.3.0–2.1.1", "when a position was first found long empty", "counters/carry.rs"),
    Format("lane:{k}", (Heads::HEADER.as_bytes(), "<round> <a> <p> <s> <status> <id> <nonce>\\n<JSON>`"), "1.3.0–2.1.1", "a lane's head", "lanes/head.rs"),
    Format("sx:{status}:{k}:{p}", (b"", "the pet's JSON"), "1.3.0–2.1.1", "a lane's pet of a status", "lanes/merge.rs"),
    Format("ix3:{list}:…", (b"", "an index piece, as `ix2`"), "1.3.0–2.1.1", "a lanes piece: of ids, or of a lane's status", "piece.rs"),
    Format("ixm:{status}:{j}", (b"", "an index piece, as `ix2`"), "1.7.0–2.1.1", "a status list's settled block", "piece.rs"),
    Format("ixr:{t}:{id}:{status}", (b"", "the pet's JSON"), "1.5.0–2.1.1 (edge)", "a replicated list entry", "replicated/entry.rs"),
    Format("ixp:{list}:{n}", (replicated::PIECE.as_bytes(), "<start t> <start id> <made ms>`, then an entry's key a line"), "2.1.0–2.1.1 (edge)", "a replicated list's index piece: 200 entries, the last piece open", "replicated/pieces.rs"),
    Format("cursor", (b"", "`c<position>`"), "1.0.0–2.1.1", "a counters walk", "cursor.rs"),
    Format("cursor", (b"", "`c<position>u<below>(-<below>)…_<since s>`"), "1.3.0–2.1.1", "the positions a counters walk carries", "cursor.rs"),
    Format("cursor", (b"", "`l<base>.<digit per lane>` or `l<n>(-<n>)…`"), "1.3.0–2.1.1", "a lanes walk (16 or 32 lanes; up to 64, each of 15 digits at most, read since 2.0.0)", "cursor.rs"),
    Format("cursor", (b"", "`c…l…`"), "1.3.0–2.1.1", "a walk of a moved store", "cursor.rs"),
    Format("cursor", (b"", "`l…_<n>`"), "1.6.0–2.1.1", "rounds stored (unfiltered); exact to a block (status, 1.7.0)", "cursor.rs"),
    Format("cursor", (b"", "`r<t>.<id>`"), "1.5.0–2.1.1 (edge)", "a replicated walk; a walk's end elsewhere", "cursor.rs"),
    Format("cursor", (b"", "`r<t>.<id>_p<n>`"), "2.1.0–2.1.1 (edge)", "the index piece a replicated walk is in: a hint, checked (2.0.0 ignores it)", "cursor.rs"),
    Format("cursor", (b"", "up to 3 words `_<a-z><0-9 a-z>…` (1 to 18 long) at the end"), "2.1.0–2.1.1 (`_p<n>`, edge)", "a later 2.x release's savings, ignored (after `l…_<n>` since 1.5.1, any part since 2.0.0)", "cursor.rs"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// No value of one format reads as another's: no header is another's
    /// beginning, and each is declared once.
    #[test]
    fn each_header_is_its_own() {
        let headers: Vec<&[u8]> = FORMATS
            .iter()
            .map(|f| f.1 .0)
            .filter(|h| !h.is_empty())
            .collect();
        for (i, a) in headers.iter().enumerate() {
            for b in &headers[i + 1..] {
                assert!(
                    a == b || !(a.starts_with(b) || b.starts_with(a)),
                    "{a:?} {b:?}"
                );
            }
        }
        let mut distinct = headers.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 9, "{distinct:?}");
        let pending = FORMATS
            .iter()
            .find(|f| f.1 .0 == record::PENDING.as_bytes());
        assert_eq!(
            pending.map(Format::shape).as_deref(),
            Some("`petstore-pending 1\\n<position> <start ms>\\n<JSON>` (start 0: given up)")
        );
    }
}
