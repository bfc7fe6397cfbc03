//! Which lane a create tries: in turn when creates come one at a time (so
//! they get 1, 2, 3, …), else drawn among the lanes at most [`AHEAD`]
//! rounds past the fewest, the fewer of two; and so the id bound.

/// The lane a create tries first, among those with the fewest rounds, so
/// that lanes stay within a round of each other and ids dense: when they
/// were filled one at a time (the first `j` one round ahead of the rest),
/// the next in turn, `j`, so that creates one at a time get 1, 2, 3, …;
/// otherwise creates run at the same moment and it is drawn from `random`,
/// so that they spread over the lanes instead of racing for one.
pub fn first_choice(rounds: &[u64], random: [u8; 16]) -> usize {
    let fewest = rounds.iter().copied().min().unwrap_or(0);
    let in_turn = rounds.windows(2).all(|w| w[0] >= w[1])
        && rounds.first().is_some_and(|first| first - fewest <= 1);
    if in_turn {
        return (0..rounds.len())
            .find(|k| rounds[*k] == fewest)
            .unwrap_or(0);
    }
    draw(rounds, None, random)
}

/// The lane to try after losing `tried` to a create at the same moment,
/// drawn as [`draw`] does among the others.
pub fn other_choice(rounds: &[u64], tried: usize, random: [u8; 16]) -> usize {
    draw(rounds, Some(tried), random)
}

/// How many rounds past the fewest a create may claim a lane: no lane runs
/// more than `AHEAD + 1` rounds ahead of another, so an id is at most
/// `lanes × (AHEAD + 1) - 1` below one acknowledged before it: 127 with
/// 32 lanes, 63 with 16.
pub const AHEAD: u64 = 3;

/// The fewer-rounds of two lanes drawn among those (but `tried`) at most
/// [`AHEAD`] rounds past the fewest: creates at the same moment spread
/// over many lanes instead of meeting in the few left behind, and the two
/// choices still fill those first.
fn draw(rounds: &[u64], tried: Option<usize>, random: [u8; 16]) -> usize {
    let fewest = rounds.iter().copied().min().unwrap_or(0);
    let pool: Vec<usize> = (0..rounds.len())
        .filter(|k| Some(*k) != tried && rounds[*k] <= fewest + AHEAD)
        .collect();
    if pool.is_empty() {
        return 0;
    }
    let pick = |at: usize| {
        let mut bits = [0u8; 4];
        bits.copy_from_slice(&random[at..at + 4]);
        pool[(u32::from_le_bytes(bits) as usize) % pool.len()]
    };
    let (a, b) = (pick(8), pick(12));
    if rounds[b] < rounds[a] {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` random inputs, each different (a xorshift's words).
    fn draw_bits(n: usize) -> Vec<[u8; 16]> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                let mut out = [0u8; 16];
                for half in out.chunks_mut(8) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    half.copy_from_slice(&x.to_le_bytes());
                }
                out
            })
            .collect()
    }

    #[test]
    fn one_at_a_time_creates_fill_the_lanes_in_turn_and_racing_ones_spread() {
        for width in [16, 32] {
            let mut rounds = vec![0u64; width];
            for n in 0..80u64 {
                let k = first_choice(&rounds, [n as u8; 16]);
                assert_eq!(k as u64, n % width as u64, "in turn, {width} lanes");
                rounds[k] += 1;
            }
            // Racing creates: lanes 0 and 5 two rounds ahead, 9 past the
            // ceiling, 3 a round behind the rest.
            let mut rounds = vec![1u64; width];
            (rounds[0], rounds[5], rounds[9], rounds[3]) = (3, 3, 5, 0);
            let mut drawn = vec![0usize; width];
            for bits in draw_bits(8000) {
                drawn[first_choice(&rounds, bits)] += 1;
                let other = other_choice(&rounds, 3, bits);
                assert!(other != 3 && rounds[other] <= AHEAD, "{other}");
            }
            assert_eq!(drawn[9], 0, "past the fewest + AHEAD: never");
            let spread = drawn.iter().filter(|n| **n > 0).count();
            assert_eq!(spread, width - 1, "every lane but 9: {drawn:?}");
            // Two choices: the lane behind drawn most, those ahead least.
            let even = drawn[1];
            assert!(2 * drawn[3] > 3 * even && 4 * drawn[0] < even, "{drawn:?}");
        }
    }
}
