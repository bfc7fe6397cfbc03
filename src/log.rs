//! The access log: one JSON object per request on stdout, which Spin keeps
//! (`.spin/logs/`) and, with `OTEL_EXPORTER_OTLP_ENDPOINT` set, exports as
//! OpenTelemetry log records. Never the query, the headers or a key.

use serde::Serialize;

use crate::routes::Handled;

/// One request's line. `cause` only for a 5xx; `notes` (what the request
/// did to the index) and `send_error` only when there are any.
#[derive(Debug, Serialize)]
pub struct AccessLine<'a> {
    pub request_id: &'a str,
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
    AccessLine {
        request_id: handled.request_id.as_str(),
        method,
        path,
        status: handled.response.status.as_u16(),
        duration_ms: micros as f64 / 1000.0,
        kv_calls,
        cause: handled.detail.as_deref(),
        notes: &handled.notes,
        send_error: sent.as_ref().err().map(String::as_str),
    }
    .to_json()
}
