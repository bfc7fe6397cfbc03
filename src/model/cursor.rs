//! The cursor of a walk: where its next page begins, as the `next` link
//! carries it. Opaque to clients, parsed here once into a [`Cursor`].
//!
//! Text: `c<position>` (the counters layout's lists), then, when positions
//! below it were issued but not yet committed when last seen,
//! `u<d>-<d>…_<seconds>` (how far below the position each is, in base 36,
//! and since when they are carried), then, on the lanes layout,
//! `l<base>.<base-36 digits>` or `l<n>-<n>-…` (one number per lane of the
//! store, 16 or 32: how far the walk went in each lane).

/// Most lanes a store of the lanes layout has: 32 (a store moved by 1.3.0
/// has 16). A walk keeps one number per lane.
pub const LANES: usize = 32;
/// The lanes a store may have: a cursor carries as many numbers.
pub const WIDTHS: [usize; 2] = [16, 32];
/// Positions a cursor carries at most (more than creates run at once on
/// one machine); a page that would carry more ends where it is.
pub const MAX_CARRIED: usize = 64;

/// Where a walk goes on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cursor {
    /// The next position of a counters list (on a store moved to lanes, of
    /// its part written before the move); `None` once that part is done.
    pub position: Option<i64>,
    /// Positions before it whose create was not finished when last seen,
    /// ascending; each is listed once it commits.
    pub carried: Vec<i64>,
    /// When the oldest of `carried` was first seen (Unix seconds).
    pub since_s: u64,
    /// The lanes layout: per lane of the store (16 or 32), the rounds (or,
    /// in a status list, the positions) the walk has listed.
    pub lanes: Option<Vec<u64>>,
}

/// Longest number a cursor carries: 18 digits always fit an i64.
const MAX_DIGITS: usize = 18;

impl Cursor {
    /// A counters cursor at `position`, carrying nothing.
    pub fn at(position: i64) -> Cursor {
        Cursor {
            position: Some(position),
            ..Cursor::default()
        }
    }

    pub fn encode(&self) -> String {
        let mut text = String::new();
        if let Some(position) = self.position {
            text.push_str(&format!("c{position}"));
        }
        if let (Some(position), false) = (self.position, self.carried.is_empty()) {
            let below: Vec<String> = self
                .carried
                .iter()
                .map(|p| base36((position - p) as u64))
                .collect();
            text.push_str(&format!("u{}_{}", below.join("-"), self.since_s));
        }
        if let Some(lanes) = &self.lanes {
            text.push('l');
            text.push_str(&encode_lanes(lanes));
        }
        text
    }

    /// The text of [`encode`](Self::encode); `None` for anything else.
    pub fn parse(raw: &str) -> Option<Cursor> {
        let mut cursor = Cursor::default();
        let mut rest = raw;
        if let Some(after) = rest.strip_prefix('c') {
            let (digits, tail) = split_digits(after);
            cursor.position = Some(number(digits).filter(|p| *p >= 1)?);
            rest = tail;
        }
        if let Some(after) = rest.strip_prefix('u') {
            let position = cursor.position?;
            let (list, tail) = after.split_once('_')?;
            for below in list.split('-') {
                let digits = below
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
                let ok =
                    digits && !below.is_empty() && below.len() <= 12 && !below.starts_with('0');
                let below = i64::from_str_radix(below, 36).ok().filter(|_| ok)?;
                // Any order: positions below 1 name nothing and are dropped.
                let carried = position - below;
                let at = cursor.carried.partition_point(|p| *p < carried);
                if carried >= 1 && cursor.carried.get(at) != Some(&carried) {
                    cursor.carried.insert(at, carried);
                }
            }
            if list.split('-').count() > MAX_CARRIED {
                return None;
            }
            let (digits, tail) = split_digits(tail);
            cursor.since_s = u64::try_from(number(digits)?).ok()?;
            rest = tail;
        }
        if let Some(after) = rest.strip_prefix('l') {
            cursor.lanes = Some(parse_lanes(after)?);
            rest = "";
        }
        let empty = cursor.position.is_none() && cursor.lanes.is_none();
        (rest.is_empty() && !empty).then_some(cursor)
    }
}

/// `<base>.<a digit of 0-9a-z per lane>` when every lane is within 35 of
/// the least, else the numbers joined by `-`.
fn encode_lanes(lanes: &[u64]) -> String {
    let base = lanes.iter().copied().min().unwrap_or(0);
    let digits: Option<String> = lanes
        .iter()
        .map(|n| char::from_digit((n - base) as u32, 36).filter(|_| n - base < 36))
        .collect();
    match digits {
        Some(digits) => format!("{base}.{digits}"),
        None => {
            let all: Vec<String> = lanes.iter().map(u64::to_string).collect();
            all.join("-")
        }
    }
}

fn parse_lanes(text: &str) -> Option<Vec<u64>> {
    let lanes: Vec<u64> = if let Some((base, digits)) = text.split_once('.') {
        let base = u64::try_from(number(base)?).ok()?;
        digits
            .chars()
            .map(|c| {
                let d = c.to_digit(36).filter(|_| !c.is_ascii_uppercase())?;
                base.checked_add(u64::from(d))
            })
            .collect::<Option<_>>()?
    } else {
        text.split('-')
            .map(|part| u64::try_from(number(part)?).ok())
            .collect::<Option<_>>()?
    };
    WIDTHS.contains(&lanes.len()).then_some(lanes)
}

fn base36(mut n: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

fn split_digits(text: &str) -> (&str, &str) {
    let end = text.bytes().take_while(u8::is_ascii_digit).count();
    text.split_at(end)
}

/// 1 to 18 ASCII digits, no leading zero but for `0` itself.
fn number(text: &str) -> Option<i64> {
    let ok = !text.is_empty()
        && text.len() <= MAX_DIGITS
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    ok.then(|| text.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        let mut lanes = vec![62_500u64; LANES];
        lanes[3] = 62_501;
        lanes[31] = 62_535;
        let cases = [
            Cursor::at(21),
            Cursor {
                position: Some(1001),
                carried: vec![1, 997, 999],
                since_s: 1_764_051_234,
                lanes: None,
            },
            Cursor {
                position: Some(100),
                carried: (10..74).collect(),
                since_s: 7,
                lanes: None,
            },
            Cursor {
                position: None,
                carried: vec![],
                since_s: 0,
                lanes: Some(lanes),
            },
            Cursor {
                position: Some(7),
                carried: vec![3],
                since_s: 5,
                lanes: Some(vec![0; 16]),
            },
        ];
        for cursor in cases {
            let text = cursor.encode();
            assert_eq!(Cursor::parse(&text), Some(cursor), "{text}");
        }
        assert_eq!(Cursor::at(21).encode(), "c21");
        let carried = Cursor {
            position: Some(1001),
            carried: vec![1, 997, 999],
            since_s: 9,
            lanes: None,
        };
        assert_eq!(
            carried.encode(),
            "c1001urs-4-2_9",
            "how far below, in base 36"
        );
        let mut far = vec![4u64; 16];
        far[0] = 40;
        let text = Cursor {
            lanes: Some(far.clone()),
            ..Cursor::default()
        }
        .encode();
        assert_eq!(text, "l40-4-4-4-4-4-4-4-4-4-4-4-4-4-4-4");
        assert_eq!(Cursor::parse(&text).unwrap().lanes, Some(far));
        assert_eq!(
            Cursor::parse("l7.0123456789abcdez").unwrap().lanes.unwrap()[15],
            7 + 35
        );
        let wide = Cursor::parse("l7.0123456789abcdefghijklmnopqrstuv").unwrap();
        assert_eq!(wide.lanes.unwrap()[31], 7 + 31, "a store of 32 lanes");
    }

    #[test]
    fn anything_else_is_not_a_cursor() {
        for bad in [
            "",
            "c",
            "c0",
            "c01",
            "c-1",
            "C5",
            "42",
            "c1x",
            "c1234567890123456789",
            "c5u",
            "c5u3",
            "c5u3_",
            "c5u0_1",
            "c5u01_1",
            "c5uA_1",
            "u3_1",
            "l",
            "l1.",
            "l1.0000",
            "l1.000000000000000A",
            "l1-2-3",
            "l1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16-17",
            "l1.00000000000000000",
            "l1.000000000000000000000000000000000",
            "c5l1.0000000000000000x",
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad}");
        }
        let too_many: Vec<String> = (1..=MAX_CARRIED as u64 + 1).rev().map(base36).collect();
        assert_eq!(
            Cursor::parse(&format!("c500u{}_1", too_many.join("-"))),
            None
        );
        let most: Vec<String> = (1..=MAX_CARRIED as u64).rev().map(base36).collect();
        assert!(Cursor::parse(&format!("c500u{}_1", most.join("-"))).is_some());
    }
}
