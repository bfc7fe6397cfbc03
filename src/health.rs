//! `GET /v1/health`: whether this instance can serve (its variables, one
//! read of the store, the store's backend and layout against what the
//! variables say), and the store's layout and a move's progress.

use http::StatusCode;

use crate::catalogue::{Catalogue, Health, LayoutName, StoreLayout, SEAL_AFTER_MS};
use crate::config::{Config, KEY_VALUE_BACKEND};
use crate::errors::{ApiError, Misconfiguration};
use crate::platform::Platform;
use crate::response::Response;
use crate::store::KvStore;

/// `GET /v1/health`: 200 when every variable is usable, one read of the
/// store succeeds, the store is what `key_value_backend` declares
/// ([`catalogue::KvBackend::contradicted_by`]) and holds a layout this
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
    let wanted = config.layout_named().map_err(ApiError::Unserviceable)?;
    let report = Catalogue::new(store, backend).health(wanted)?;
    if let Some(why) = backend.contradicted_by(store) {
        return Err(ApiError::Unserviceable(Misconfiguration {
            variable: KEY_VALUE_BACKEND,
            why: format!("'{}', but {why}", backend.name()),
        }));
    }
    config.catalogue_layout().map_err(ApiError::Unserviceable)?;
    let body = health_body(&report, platform.now_ms());
    Ok(Response::json_text(StatusCode::OK, body.into_bytes())
        .with_header("cache-control", "no-store"))
}

/// `{"status":"ok","layout":…}`, and `"move"` when the operator asked for
/// lanes on a counters store (it waits for the next create) or the store
/// moved (`settling` while creates of the moment may still commit ids from
/// before it, then `done`).
fn health_body(report: &Health, now_ms: u64) -> String {
    let layout = report.layout.name().map_or("none", LayoutName::name);
    let moving = match report.layout {
        StoreLayout::Counters(_) if report.wanted == LayoutName::Lanes => {
            r#","move":{"from":"counters","to":"lanes","state":"waiting for the next create"}"#
                .to_string()
        }
        StoreLayout::Lanes(mark) if mark.moved_ms > 0 => {
            let state = if now_ms >= mark.moved_ms + SEAL_AFTER_MS {
                "done"
            } else {
                "settling"
            };
            format!(
                r#","move":{{"from":"counters","to":"lanes","state":"{state}","ids_before":{},"at_ms":{}}}"#,
                mark.legacy_last, mark.moved_ms
            )
        }
        _ => String::new(),
    };
    format!(r#"{{"status":"ok","layout":"{layout}"{moving}}}"#)
}
