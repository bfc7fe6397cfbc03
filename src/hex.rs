//! Hexadecimal digits, the one place they are read and written: two digits
//! make a byte, nothing else does (`u8::from_str_radix` would also take a
//! sign, `+f`, which neither a digest nor a percent-escape may hold).

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex digits, appended to `out`.
pub fn push(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}

/// The byte of two hex digits (either case); `None` for anything else.
pub fn byte(pair: &[u8]) -> Option<u8> {
    match pair {
        [high, low] => Some(digit(*high)? << 4 | digit(*low)?),
        _ => None,
    }
}

/// Whether `bytes` are lower-case hex digits only (as W3C trace context
/// and our own writing have them).
pub fn is_lower(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| DIGITS.contains(b))
}

fn digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{byte, push};

    #[test]
    fn two_digits_of_either_case_and_nothing_else() {
        assert_eq!(byte(b"00"), Some(0));
        assert_eq!(byte(b"fF"), Some(255));
        assert_eq!(byte(b"a5"), Some(0xa5));
        for bad in [&b"+f"[..], b"-1", b" 1", b"1", b"123", b"g0", b"", b"0x"] {
            assert_eq!(byte(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn written_lower_case_and_read_back() {
        let mut out = String::from("x:");
        push(&mut out, &[0, 0xa5, 0xff, 0x10]);
        assert_eq!(out, "x:00a5ff10");
        let bytes: Vec<u8> = out.as_bytes()[2..].chunks(2).filter_map(byte).collect();
        assert_eq!(bytes, [0, 0xa5, 0xff, 0x10]);
    }
}
