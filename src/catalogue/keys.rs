//! The key names of both layouts, and the encodings Spin's backends give
//! the counters that `increment` writes.

use crate::model::{IdempotencyKey, ListName, PetStatus};

/// Positions per index piece. 32 pets of the largest possible JSON size
/// (200 characters that each escape to 6 bytes, the longest numbers) stay
/// under 43 KB, within the 64 KiB bound on any stored value.
pub const PIECE_LEN: i64 = 32;
/// Positions that hold no pet (a create that failed, or one still running)
/// a counters page may pass looking up the truth; past them it ends early,
/// with a `next` link, so that a page over a long run of failed creates
/// stays bounded. Every other page is full (docs/decisions.md, "Full
/// pages"): a page over a cold index reads whatever its pets take.
pub const EMPTY_POSITIONS: usize = 64;

pub const ID_COUNTER: &str = "ctr:id";
/// The index pieces' key prefix, which is also their format's version: 1.0.0
/// wrote `ix:` pieces of another format, which this release never reads, so
/// they are never misread.
pub const PIECE_PREFIX: &str = "ix2";

/// Key prefix of the `Idempotency-Key` records.
pub const RECORD_PREFIX: &str = "idem";
/// First words of a record the lanes layout wrote (an intent); a counters
/// record is a counter word.
pub const INTENT_HEADER: &str = "petstore-intent 1 ";

pub fn counter_key(list: ListName) -> String {
    match list {
        ListName::All => ID_COUNTER.to_string(),
        ListName::Status(s) => format!("ctr:{}", s.as_str()),
    }
}

pub fn slot_key(status: PetStatus, position: i64) -> String {
    format!("slot:{}:{position}", status.as_str())
}

pub fn pet_key(id: i64) -> String {
    format!("pet:{id}")
}

/// `idem:{hex digest}`: the record of an `Idempotency-Key`, named by its
/// SHA-256 so that every backend's key rules hold whatever the client sent.
pub fn record_key(key: &IdempotencyKey) -> String {
    let mut name = String::with_capacity(RECORD_PREFIX.len() + 65);
    name.push_str(RECORD_PREFIX);
    name.push(':');
    crate::hex::push(&mut name, key.digest());
    name
}

pub fn piece_key(list: ListName, piece: i64) -> String {
    format!("{PIECE_PREFIX}:{}:{piece}", list.as_str())
}

/// `hole:{list}:{position}`: when a reader first found this position of a
/// counters list carried by a walk for long (Unix ms): the clock a seal
/// waits on (`counters::carry`).
pub fn sighting_key(list: ListName, position: i64) -> String {
    format!("hole:{}:{position}", list.as_str())
}

/// `lane:{k}`: the head of lane `k` (lanes layout).
pub fn head_key(lane: usize) -> String {
    format!("lane:{lane}")
}

/// `sx:{status}:{lane}:{position}`: the pet at `position` of the pets of
/// `status` in `lane` (lanes layout).
pub fn entry_key(status: PetStatus, lane: usize, position: u64) -> String {
    format!("sx:{}:{lane}:{position}", status.as_str())
}

/// `ix3:all:{block}`: the lanes layout's piece of ids `32·block + 1 …
/// 32·block + 32`; `ix3:{status}:{lane}:{k}`: of positions `32k + 1 …`
/// of that status's pets in that lane.
pub fn lane_piece_key(list: ListName, lane: usize, piece: i64) -> String {
    match list {
        ListName::All => format!("ix3:all:{piece}"),
        ListName::Status(s) => format!("ix3:{}:{lane}:{piece}", s.as_str()),
    }
}

/// The block of positions `32j + 1 … 32j + 32` of a lanes list read at a
/// known position (`lanes/merged.rs`): the unfiltered list's piece of ids,
/// or a status list's block merged across the lanes.
pub fn merged_key(list: ListName, block: i64) -> String {
    let (kind, name) = match list {
        ListName::All => ("ix3", "all"),
        ListName::Status(status) => ("ixm", status.as_str()),
    };
    format!("{kind}:{name}:{block}")
}

pub fn piece_of(position: i64) -> i64 {
    (position - 1) / PIECE_LEN
}

/// Reads a counter written by `increment` with a plain `get`: Spin's SQLite
/// stores 8 bytes little-endian, Redis decimal text. A little-endian counter
/// below 2^56 has a zero last byte, so it is never all ASCII digits.
pub fn decode_counter(bytes: &[u8]) -> Option<i64> {
    if is_text_counter(bytes) {
        std::str::from_utf8(bytes).ok()?.parse().ok()
    } else {
        Some(i64::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// Redis's decimal text, as opposed to SQLite's 8 bytes little-endian.
fn is_text_counter(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'-')
}

/// `value` in the encoding of `like`, a counter's stored bytes: what a
/// compare-and-swap writes to a key that `increment` also updates (Spin's
/// SQLite host panics on a counter that is not 8 bytes).
pub fn encode_counter_like(like: &[u8], value: i64) -> Vec<u8> {
    if is_text_counter(like) {
        value.to_string().into_bytes()
    } else {
        value.to_le_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_with_get_decode_in_both_backends_encodings() {
        assert_eq!(decode_counter(&42i64.to_le_bytes()), Some(42), "SQLite");
        assert_eq!(decode_counter(b"42"), Some(42), "Redis");
        assert_eq!(decode_counter(&(1i64 << 40).to_le_bytes()), Some(1 << 40));
        assert_eq!(
            decode_counter(b"12345678"),
            Some(12_345_678),
            "8 digits are text"
        );
        assert_eq!(decode_counter(b""), None);
        assert_eq!(decode_counter(b"abc"), None);
    }

    #[test]
    fn a_key_record_is_named_by_its_digest_stably_across_releases() {
        let key = IdempotencyKey::parse(b"abc-123").unwrap();
        assert_eq!(
            record_key(&key),
            "idem:5942d94f524882e0f29bf0a1e5a6dcc952eea1c0c21dd3588a3fc7db9716db0c"
        );
    }
}
