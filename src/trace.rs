//! The W3C Trace Context (`traceparent`) of a request: its trace id is
//! logged, so that an operator goes from our log line to the request's trace
//! in Spin's OpenTelemetry exporter, which keeps that id, and back.

use crate::request::Request;

/// The header, lower-case as the core sees names.
pub const TRACEPARENT: &str = "traceparent";

/// A trace id as `traceparent` carries it: 32 lower-case hex digits, not
/// all zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceId(String);

impl TraceId {
    /// The trace id of the request's one `traceparent`, if it is well
    /// formed: `<version>-<trace id>-<parent id>-<flags>` in lower-case hex
    /// (2, 32, 16, 2 digits), version not `ff`, ids not all zero, and for
    /// version `00` nothing after the flags. Anything else (none, repeated,
    /// malformed) is none: a receiver ignores what it cannot parse, and the
    /// answer never depends on it.
    pub fn of(request: &Request) -> Option<TraceId> {
        let value = std::str::from_utf8(request.single_header(TRACEPARENT)?).ok()?;
        let mut parts = value.split('-');
        let (version, trace, parent, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, len: usize| s.len() == len && crate::hex::is_lower(s.as_bytes());
        let zero = |s: &str| s.bytes().all(|b| b == b'0');
        let sound = hex(version, 2)
            && version != "ff"
            && hex(trace, 32)
            && !zero(trace)
            && hex(parent, 16)
            && !zero(parent)
            && hex(flags, 2)
            && (version != "00" || parts.next().is_none());
        sound.then(|| TraceId(trace.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&str]) -> Request {
        Request::get_with_header("traceparent", values)
    }

    const SAMPLE: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_well_formed_traceparent_gives_its_trace_id() {
        let id = TraceId::of(&with(&[SAMPLE])).unwrap();
        assert_eq!(id.as_str(), "0af7651916cd43dd8448eb211c80319c");
        // A later version may add fields after the flags.
        let later = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra";
        assert!(TraceId::of(&with(&[later])).is_some());
    }

    #[test]
    fn anything_else_gives_none() {
        for values in [
            &[][..],
            &[SAMPLE, SAMPLE],
            &["00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"],
            &["00-00000000000000000000000000000000-b7ad6b7169203331-01"],
            &["00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"],
            &["ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"],
            &["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x"],
            &["00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01"],
            &["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331"],
            &["garbage"],
        ] {
            assert_eq!(TraceId::of(&with(values)), None, "{values:?}");
        }
    }
}
