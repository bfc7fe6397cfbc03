//! The faults the host can arm at the N-th key-value call: what Spin cannot
//! do on demand (a failed call, a reply lost after the call was applied, a
//! batch applied in part), and how the command line names them.

/// A fault on the N-th key-value call from now (counted from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The call fails with `error::other` and changes nothing.
    Fail(u64),
    /// The call is applied, then the guest gets `error::other` (a lost reply).
    LoseReply(u64),
    /// A `set-many` applies only one of its pairs (the first, or the last),
    /// then fails: a batch that is neither atomic nor ordered (Spin's
    /// DynamoDB `BatchWriteItem`) failing part-way. Any other call fails.
    Partial(u64, Part),
}

/// Which pair of a `set-many` a [`Fault::Partial`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    First,
    Last,
}

impl std::str::FromStr for Fault {
    type Err = String;
    /// `fail:N`, `lose-reply:N`, `partial-first:N`, `partial-last:N`.
    fn from_str(s: &str) -> Result<Fault, String> {
        let (kind, n) = s.split_once(':').ok_or("KIND:N")?;
        let n: u64 = n
            .parse()
            .map_err(|_| format!("'{n}' is not a call number"))?;
        match kind {
            "fail" => Ok(Fault::Fail(n)),
            "lose-reply" => Ok(Fault::LoseReply(n)),
            "partial-first" => Ok(Fault::Partial(n, Part::First)),
            "partial-last" => Ok(Fault::Partial(n, Part::Last)),
            _ => Err(format!("unknown fault '{kind}'")),
        }
    }
}
