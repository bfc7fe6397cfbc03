//! The access log: one JSON object per request on stdout, which Spin keeps
//! (`.spin/logs/`) and, with `OTEL_EXPORTER_OTLP_ENDPOINT` set, exports as
//! OpenTelemetry log records. Never the query, the headers or a key.

use serde::Serialize;

use crate::routes::Handled;
use crate::trace::TraceId;

/// One request's line. `cause` only for a 5xx; `notes` (what the request
/// did to the index) and `send_error` only when there are any.
#[derive(Debug, Serialize)]
pub struct AccessLine<'a> {
    pub request_id: &'a str,
    /// The W3C trace id of the request's `traceparent`, when it sent one:
    /// the id of its trace in Spin's exporter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<&'a str>,
    /// As received (an unparseable method is logged as it came).
    pub method: &'a str,
    /// Without the query.
    pub path: &'a str,
    pub status: u16,
    pub duration_ms: f64,
    /// Key-value host calls the request made.
    pub kv_calls: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub notes: &'a [String],
    /// The response could not be sent, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_error: Option<&'a str>,
}

impl AccessLine<'_> {
    /// The line as printed: compact JSON, never a raw newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"request_id":"{}","log_error":"{e}"}}"#,
                self.request_id
            )
        })
    }
}

/// The line for a handled request: the method as received, the path
/// without query, how long it took, the key-value calls it made, and
/// whether the response could be sent.
pub fn access_line(
    method: &str,
    path: &str,
    handled: &Handled,
    micros: u128,
    kv_calls: u64,
    sent: &Result<(), String>,
) -> String {
    let cause = handled
        .detail
        .as_deref()
        .map(|c| one_line(c, MAX_CAUSE_CHARS));
    AccessLine {
        request_id: handled.request_id.as_str(),
        trace_id: handled.trace_id.as_ref().map(TraceId::as_str),
        method,
        path,
        status: handled.response.status.as_u16(),
        duration_ms: micros as f64 / 1000.0,
        kv_calls,
        cause: cause.as_deref(),
        notes: &handled.notes,
        send_error: sent.as_ref().err().map(String::as_str),
    }
    .to_json()
}

/// The longest `cause` a line carries.
pub const MAX_CAUSE_CHARS: usize = 300;

/// `text` as one line of at most `max` characters: runs of white space and
/// control characters (a store client's multi-line debug dump, say) become
/// one space, and a longer text is cut, ending in `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let mut line = String::with_capacity(text.len().min(max * 4));
    let mut chars = 0;
    for word in text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
    {
        for c in (chars > 0).then_some(' ').into_iter().chain(word.chars()) {
            if chars == max {
                line.pop();
                line.push('…');
                return line;
            }
            line.push(c);
            chars += 1;
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_cause_is_one_line_of_at_most_the_limit() {
        assert_eq!(
            one_line("key-value store: down", 300),
            "key-value store: down"
        );
        assert_eq!(
            one_line(
                "ServiceError {\n    source: TransactionCanceledException {\r\n\t x }",
                300
            ),
            "ServiceError { source: TransactionCanceledException { x }"
        );
        let long = "é".repeat(400);
        let cut = one_line(&long, 300);
        assert_eq!(cut.chars().count(), 300);
        assert!(cut.ends_with("é…"));
        assert_eq!(one_line("abcdef", 3), "ab…");
        assert_eq!(one_line("abc", 3), "abc");
        assert_eq!(one_line(" \n ", 3), "");
    }
}
