//! The keys of every layout, and how Spin's backends encode the counters
//! `increment` writes. What each key may hold: `formats.rs`.

use crate::model::{number, IdempotencyKey, ListName, PetStatus};

/// Positions per index piece and per block: 32 pets of the largest JSON
/// (200 characters that escape to 6 bytes each) stay under 43 KB.
pub const PIECE_LEN: i64 = 32;
/// Positions without a pet a counters page may pass before it ends early.
pub const EMPTY_POSITIONS: usize = 64;
/// What the store holds: a counter, a layout's mark, or nothing yet.
pub const ID_COUNTER: &str = "ctr:id";

/// `ctr:{status}`: the last position handed out in a counters status list
/// (the unfiltered list's is `ctr:id`, which only `layout.rs` reads).
pub fn counter_key(status: PetStatus) -> String {
    format!("ctr:{}", status.as_str())
}

pub fn slot_key(status: PetStatus, position: i64) -> String {
    format!("slot:{}:{position}", status.as_str())
}

pub fn pet_key(id: i64) -> String {
    format!("pet:{id}")
}

/// `idem:{SHA-256 hex}`: named by its digest, so that every backend's key
/// rules hold whatever the client sent.
pub fn record_key(key: &IdempotencyKey) -> String {
    let mut name = String::from("idem:");
    crate::hex::push(&mut name, key.digest());
    name
}

/// `ix2:{list}:{k}`: a counters list's piece of positions `32k + 1 …`.
pub fn piece_key(list: ListName, piece: i64) -> String {
    format!("ix2:{}:{piece}", list.as_str())
}

/// `hole:{list}:{position}`: when a reader first found a position long
/// empty, the clock a seal waits on.
pub fn sighting_key(list: ListName, position: i64) -> String {
    format!("hole:{}:{position}", list.as_str())
}

pub fn head_key(lane: usize) -> String {
    format!("lane:{lane}")
}

/// `sx:{status}:{lane}:{position}`: a lane's pet of that status.
pub fn entry_key(status: PetStatus, lane: usize, position: u64) -> String {
    format!("sx:{}:{lane}:{position}", status.as_str())
}

/// `ix3:all:{k}` (ids `base + 32k …`), `ix3:{status}:{lane}:{k}`.
pub fn lane_piece_key(list: ListName, lane: usize, piece: i64) -> String {
    match list {
        ListName::All => format!("ix3:all:{piece}"),
        ListName::Status(s) => format!("ix3:{}:{lane}:{piece}", s.as_str()),
    }
}

/// Positions `32j + 1 …` of a lanes list: ids, or a status's merged block.
pub fn block_key(list: ListName, block: i64) -> String {
    match list {
        ListName::All => lane_piece_key(list, 0, block),
        ListName::Status(s) => format!("ixm:{}:{block}", s.as_str()),
    }
}

pub fn piece_of(position: i64) -> i64 {
    (position - 1) / PIECE_LEN
}

/// A counter read with `get`, never below 0: 8 bytes little-endian
/// (SQLite; below 2^56 never all digits) or decimal text as `increment`
/// writes it (Redis, DynamoDB), strictly.
pub fn decode_counter(bytes: &[u8]) -> Option<i64> {
    match is_text(bytes) {
        true => number(std::str::from_utf8(bytes).ok()?),
        false => Some(i64::from_le_bytes(bytes.try_into().ok()?)).filter(|n| *n >= 0),
    }
}

fn is_text(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit)
}

/// `value` in the encoding of the counter `like`: a compare-and-swap of a
/// key `increment` also updates (SQLite's fails on one not 8 bytes).
pub fn encode_counter_like(like: &[u8], value: i64) -> Vec<u8> {
    match is_text(like) {
        true => value.to_string().into_bytes(),
        false => value.to_le_bytes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_decode_in_both_encodings_and_records_are_named_stably() {
        assert_eq!(decode_counter(&42i64.to_le_bytes()), Some(42), "SQLite");
        assert_eq!(decode_counter(b"42"), Some(42), "Redis");
        assert_eq!(decode_counter(&(1i64 << 40).to_le_bytes()), Some(1 << 40));
        assert_eq!(decode_counter(b"12345678"), Some(12_345_678));
        assert_eq!(decode_counter(b""), None);
        for bad in ["abc", "-1", "+1", "007", "1-2"] {
            assert_eq!(decode_counter(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(decode_counter(&(-1i64).to_le_bytes()), None);
        assert_eq!(decode_counter(b"0"), Some(0));
        assert_eq!(encode_counter_like(b"7", 9), b"9");
        assert_eq!(
            encode_counter_like(&7i64.to_le_bytes(), 9),
            9i64.to_le_bytes()
        );
        let key = IdempotencyKey::parse(b"abc-123").unwrap();
        assert_eq!(
            record_key(&key),
            "idem:5942d94f524882e0f29bf0a1e5a6dcc952eea1c0c21dd3588a3fc7db9716db0c"
        );
    }
}
