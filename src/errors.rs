//! The one error type of the service and its mapping to HTTP, in one place.
//!
//! Every error response carries the contract's Error body
//! `{"code", "message", "status"}` with `status` equal to the HTTP status.

use std::fmt;

use http::StatusCode;
use serde::Serialize;

use crate::response::Response;
use crate::store::StoreError;

/// Seconds a client should wait before retrying after a 503.
pub const RETRY_AFTER_SECONDS: u32 = 1;
/// `Cache-Control` of every error: an error is never served from a cache.
pub const ERROR_CACHE: &str = "no-store";

/// A Spin variable that is unset, unreadable or holds no usable value
/// (`config` finds it; a request that needs it answers 500, the health
/// probe 503). `why` never quotes a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misconfiguration {
    pub variable: &'static str,
    pub why: String,
}

impl fmt::Display for Misconfiguration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "variable {}: {}", self.variable, self.why)
    }
}

impl std::error::Error for Misconfiguration {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// Missing or malformed credentials (`wrong_key: false`), or a key that
    /// matches none of the configured ones (`wrong_key: true`).
    Unauthorized {
        wrong_key: bool,
    },
    InvalidParameter(String),
    InvalidBody(String),
    /// A request header the operation reads is malformed (`Idempotency-Key`).
    InvalidHeader(String),
    NotFound(String),
    MethodNotAllowed {
        allow: &'static str,
    },
    UnsupportedMediaType,
    PayloadTooLarge,
    /// Another request with this `Idempotency-Key` is still being processed.
    IdempotencyKeyInUse {
        retry_after_seconds: u64,
    },
    /// This `Idempotency-Key` belongs to a create of another pet.
    IdempotencyKeyReused,
    StoreUnavailable(StoreError),
    /// The store failed during a create's commit and could not say whether
    /// the commit was applied: the pet may exist.
    CreateOutcomeUnknown(StoreError),
    /// The store failed during a create with an `Idempotency-Key`: whatever
    /// happened, a retry with the same key ends in exactly one pet.
    KeyedCreateUnavailable(StoreError),
    /// The edge build: a create's write landed `took_ms` after its place
    /// in the lists' order, later than the window (`window_ms`) a write may
    /// take. Pet `id` is stored, but walks already past its place will not
    /// list it.
    CreateLandedLate {
        id: i64,
        took_ms: u64,
        window_ms: u64,
    },
    /// The edge build: a keyed retry found its key's record but not the
    /// pet it names, which has not reached this replica yet, or was never
    /// stored (a `set-many` that stored the record alone).
    KeyedPetNotFound,
    Internal(String),
    /// The request needs a Spin variable that is unusable: a 500, loudly,
    /// rather than a 401 that would say nothing to the operators.
    Misconfigured(Misconfiguration),
    /// The deployment cannot serve this as configured, found by `/v1/health`
    /// (503, so that a broken rollout fails its probes) or by a write the
    /// store's layout refuses (503: nothing was changed, and operators can
    /// see why in the log).
    Unserviceable(Misconfiguration),
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: &'a str,
    status: u16,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            ApiError::InvalidParameter(_)
            | ApiError::InvalidBody(_)
            | ApiError::InvalidHeader(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::IdempotencyKeyInUse { .. } => StatusCode::CONFLICT,
            ApiError::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::StoreUnavailable(_)
            | ApiError::CreateOutcomeUnknown(_)
            | ApiError::KeyedCreateUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::CreateLandedLate { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::KeyedPetNotFound => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) | ApiError::Misconfigured(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unserviceable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized { .. } => "unauthorized",
            ApiError::InvalidParameter(_) => "invalid_parameter",
            ApiError::InvalidBody(_) => "invalid_body",
            ApiError::InvalidHeader(_) => "invalid_header",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::IdempotencyKeyInUse { .. } => "idempotency_key_in_use",
            ApiError::IdempotencyKeyReused => "idempotency_key_reused",
            ApiError::StoreUnavailable(_)
            | ApiError::CreateOutcomeUnknown(_)
            | ApiError::KeyedCreateUnavailable(_) => "store_unavailable",
            ApiError::CreateLandedLate { .. } => "store_unavailable",
            ApiError::KeyedPetNotFound => "store_unavailable",
            ApiError::Internal(_) | ApiError::Misconfigured(_) => "internal_error",
            ApiError::Unserviceable(_) => "misconfigured",
        }
    }

    /// The message the client reads. Store and internal details stay in the log.
    pub fn message(&self) -> String {
        match self {
            ApiError::Unauthorized { wrong_key: false } => {
                "a valid API key is required: send 'Authorization: Bearer <API_KEY>'".into()
            }
            ApiError::Unauthorized { wrong_key: true } => "the API key is not valid".into(),
            ApiError::InvalidParameter(m)
            | ApiError::InvalidBody(m)
            | ApiError::InvalidHeader(m)
            | ApiError::NotFound(m) => m.clone(),
            ApiError::MethodNotAllowed { allow } => {
                format!("method not allowed on this path; allowed: {allow}")
            }
            ApiError::UnsupportedMediaType => "the request body must be 'application/json'".into(),
            ApiError::PayloadTooLarge => format!(
                "the request body is larger than {} bytes",
                crate::request::MAX_BODY_BYTES
            ),
            ApiError::IdempotencyKeyInUse { .. } => {
                "a create with this Idempotency-Key is in progress or stopped part-way; \
                 retry after the seconds in Retry-After"
                    .into()
            }
            ApiError::IdempotencyKeyReused => {
                "this Idempotency-Key was used for a different request; \
                 send a new key for a new pet"
                    .into()
            }
            ApiError::StoreUnavailable(_) => {
                "the data store is unavailable; nothing was changed, retry later".into()
            }
            ApiError::CreateOutcomeUnknown(_) => {
                "the data store failed while the pet was being stored: it may have been \
                 created. Look for it (listPets) before creating it again"
                    .into()
            }
            ApiError::KeyedCreateUnavailable(_) => {
                "the data store failed during this create; retry it with the same \
                 Idempotency-Key, which creates the pet at most once"
                    .into()
            }
            ApiError::CreateLandedLate {
                id,
                took_ms,
                window_ms,
            } => format!(
                "the data store took {took_ms} ms to store pet {id}, longer than the \
                 {window_ms} ms a create may take here: the pet was stored, but walks of \
                 the list that were already past its place will not list it. Look for it \
                 (getPet {id}) before creating it again; a retry with the same \
                 Idempotency-Key answers it"
            ),
            ApiError::KeyedPetNotFound => {
                "this Idempotency-Key's pet is not found yet: retry later with it (a \
                 create stopped part-way may have stored none)"
                    .into()
            }
            ApiError::Internal(_) | ApiError::Misconfigured(_) => "internal error".into(),
            ApiError::Unserviceable(_) => {
                "the service is misconfigured; its operators can see why in its log".into()
            }
        }
    }

    /// What the access log may say beyond the status (never a key).
    pub fn detail(&self) -> Option<String> {
        match self {
            ApiError::StoreUnavailable(e) => Some(e.to_string()),
            ApiError::CreateOutcomeUnknown(e) => Some(format!("create outcome unknown: {e}")),
            ApiError::KeyedCreateUnavailable(e) => Some(format!("keyed create: {e}")),
            ApiError::Internal(m) => Some(m.clone()),
            ApiError::Misconfigured(m) | ApiError::Unserviceable(m) => Some(m.to_string()),
            _ => None,
        }
    }

    pub fn into_response(self) -> Response {
        let status = self.status();
        let message = self.message();
        let body = ErrorBody {
            code: self.code(),
            message: &message,
            status: status.as_u16(),
        };
        let mut response = Response::json(status, &body).with_header("cache-control", ERROR_CACHE);
        // Every 503 is worth retrying soon: the store, or a rollout, recovers.
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response = response.with_header("retry-after", RETRY_AFTER_SECONDS.to_string());
        }
        match self {
            ApiError::Unauthorized { wrong_key } => {
                let challenge = if wrong_key {
                    r#"Bearer realm="petstore", error="invalid_token""#
                } else {
                    r#"Bearer realm="petstore""#
                };
                response = response.with_header("www-authenticate", challenge);
            }
            ApiError::MethodNotAllowed { allow } => {
                response = response.with_header("allow", allow);
            }
            ApiError::IdempotencyKeyInUse {
                retry_after_seconds,
            } => {
                response = response.with_header("retry-after", retry_after_seconds.to_string());
            }
            _ => {}
        }
        response
    }
}

/// `401 unauthorized: the API key is not valid`, with what the log may add.
impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status().as_u16(),
            self.code(),
            self.message()
        )?;
        match self.detail() {
            Some(detail) => write!(f, " ({detail})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ApiError::StoreUnavailable(e)
            | ApiError::CreateOutcomeUnknown(e)
            | ApiError::KeyedCreateUnavailable(e) => Some(e),
            ApiError::Misconfigured(m) | ApiError::Unserviceable(m) => Some(m),
            _ => None,
        }
    }
}

impl From<Misconfiguration> for ApiError {
    fn from(m: Misconfiguration) -> Self {
        ApiError::Misconfigured(m)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::StoreUnavailable(e)
    }
}
