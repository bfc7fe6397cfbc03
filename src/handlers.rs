//! The operations once routed and authenticated: a create, a getPet and a
//! page's response, each from a request to its response or an error.

use http::StatusCode;

use crate::catalogue::{pets_body, Catalogue, Created, Lease, Page};
use crate::conditional::{self, LIST_CACHE, PET_CACHE};
use crate::config::Config;
use crate::errors::ApiError;
use crate::model::{parse_digits, IdempotencyKey, ListQuery, NewPet, Pet};
use crate::platform::Platform;
use crate::request::{Body, Request};
use crate::response::Response;
use crate::store::KvStore;

/// A page as a 200 (or a 304) with its `next` link.
pub fn page_response(request: &Request, query: &ListQuery, page: Page) -> Response {
    let mut response = Response::json_text(StatusCode::OK, pets_body(&page.pets));
    let keep: &[&str] = &["link"];
    if let Some(next) = page.next {
        // Only the parameters the client used, plus the cursor (docs/decisions.md).
        let mut params = Vec::new();
        if query.limit_given {
            params.push(format!("limit={}", query.limit));
        }
        if let Some(status) = query.status {
            params.push(format!("status={}", status.as_str()));
        }
        params.push(format!("cursor={}", next.as_str()));
        response = response.with_header(
            "link",
            format!(r#"</v1/pets?{}>; rel="next""#, params.join("&")),
        );
    }
    // A 304 repeats the page's `Link`: the same body may have gained one.
    conditional::respond(request, response, LIST_CACHE, keep)
}

/// Checks in the order docs/decisions.md gives: 415, 413, then the
/// `Idempotency-Key` header and the body (400), then the key's record.
pub fn create_pet<S: KvStore>(
    store: &S,
    request: &Request,
    config: &Config,
    platform: &dyn Platform,
) -> Result<Response, ApiError> {
    let is_json = request
        .single_header("content-type")
        .is_some_and(is_json_media_type);
    if !is_json {
        return Err(ApiError::UnsupportedMediaType);
    }
    let body = match &request.body {
        Body::Complete(bytes) => bytes,
        Body::TooLarge => return Err(ApiError::PayloadTooLarge),
    };
    let key = IdempotencyKey::from_request(request)?;
    let new_pet = NewPet::from_json(body)?;
    // Read in this order (tests/operations.rs): the backend, the layout,
    // then, for a keyed create, the lease.
    config.key_value_backend()?;
    config.catalogue_layout()?;
    let keyed = match &key {
        None => None,
        Some(key) => Some((
            key,
            Lease {
                lease_ms: config.idempotency_lease_ms()?,
                now_ms: platform.now_ms(),
            },
        )),
    };
    let catalogue = Catalogue::new(store, config);
    Ok(match catalogue.create(platform, new_pet, keyed)? {
        Created::Pet(pet) => created(&pet),
        Created::Replayed { id, body } => Response::json_text(StatusCode::CREATED, body)
            .with_header("location", location(id))
            .with_header("idempotent-replayed", "true"),
    })
}

fn created(pet: &Pet) -> Response {
    Response::json(StatusCode::CREATED, pet).with_header("location", location(pet.id))
}

fn location(id: i64) -> String {
    format!("/v1/pets/{id}")
}

/// `application/json`, in any case, with or without parameters.
fn is_json_media_type(value: &[u8]) -> bool {
    let Ok(value) = std::str::from_utf8(value) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

pub fn get_pet<S: KvStore>(
    store: &S,
    request: &Request,
    config: &Config,
    raw_id: &str,
) -> Result<Response, ApiError> {
    let not_found = || ApiError::NotFound("no pet has this id".into());
    // Not a positive int64: names no pet, so 404 like any unknown id.
    let id = parse_digits(raw_id)
        .filter(|id| *id >= 1)
        .ok_or_else(not_found)?;
    let pet = Catalogue::new(store, config)
        .get_pet(id)?
        .ok_or_else(not_found)?;
    let ok = Response::json_text(StatusCode::OK, pet.json().as_bytes().to_vec());
    Ok(conditional::respond(request, ok, PET_CACHE, &[]))
}
