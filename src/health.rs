//! `GET /v1/health`: whether this instance can serve (its variables, one
//! read of the store, the store's backend and layout against what the
//! variables say), and the store's layout and a move's progress.

use http::StatusCode;

use crate::catalogue::Catalogue;
use crate::config::{Config, KEY_VALUE_BACKEND};
use crate::errors::{ApiError, Misconfiguration};
use crate::platform::Platform;
use crate::response::Response;
use crate::store::KvStore;

/// `GET /v1/health`: 200 when every variable is usable, one read of the
/// store succeeds, the store is what `key_value_backend` declares
/// ([`crate::catalogue::KvBackend::contradicted_by`]) and holds a layout this
/// instance writes; 503 otherwise. The body says the store's layout and a
/// move's state; never data.
pub fn health<S: KvStore>(
    config: &Config,
    platform: &dyn Platform,
    store: &S,
) -> Result<Response, ApiError> {
    config.check_all().map_err(ApiError::Unserviceable)?;
    let backend = config
        .key_value_backend()
        .map_err(ApiError::Unserviceable)?;
    config.layout_named().map_err(ApiError::Unserviceable)?;
    let body = Catalogue::new(store, config).health(platform.now_ms())?;
    if let Some(why) = backend.contradicted_by(store) {
        return Err(ApiError::Unserviceable(Misconfiguration {
            variable: KEY_VALUE_BACKEND,
            why: format!("'{}', but {why}", backend.name()),
        }));
    }
    config.catalogue_layout().map_err(ApiError::Unserviceable)?;
    Ok(Response::json_text(StatusCode::OK, body.into_bytes())
        .with_header("cache-control", "no-store"))
}
