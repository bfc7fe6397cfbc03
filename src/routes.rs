//! Routing of `/v1`: authentication first, then the three operations, with
//! every error turned into its response in one place ([`ApiError::into_response`]).

use http::{Method, StatusCode};

use crate::catalogue::{Catalogue, Clock};
use crate::config::Config;
use crate::errors::ApiError;
use crate::handlers;
use crate::health::health;
use crate::model::ListQuery;
use crate::platform::Platform;
use crate::request::Request;
use crate::request_id::RequestId;
use crate::response::Response;
use crate::store::KvStore;
use crate::trace::TraceId;

/// `Deprecation` of getPet (RFC 9745): the release date of 1.0.0, 2026-11-21.
pub const DEPRECATION: &str = "@1795219200";
/// `Sunset` of getPet (RFC 8594): its removal date.
pub const SUNSET: &str = "Thu, 05 Dec 2030 00:00:00 GMT";
pub const SUCCESSOR_LINK: &str = r#"</v1/pets>; rel="successor-version""#;

/// The OpenAPI document (`openapi/petstore-v1.json`), served at `GET
/// /v1/openapi.json` as compact JSON (build.rs).
pub const OPENAPI_DOCUMENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/openapi.json"));
pub const OPENAPI_PATH: &str = "/v1/openapi.json";
pub const HEALTH_PATH: &str = "/v1/health";

enum Route<'a> {
    OpenApi,
    Health,
    Pets,
    Pet(&'a str),
    Unknown,
}

impl Route<'_> {
    /// The methods of a route that exists (its `Allow` header).
    fn methods(&self) -> Option<&'static str> {
        match self {
            Route::Pets => Some("GET, POST"),
            Route::Pet(_) | Route::OpenApi | Route::Health => Some("GET"),
            Route::Unknown => None,
        }
    }
}

fn route(path: &str) -> Route<'_> {
    if path == OPENAPI_PATH {
        return Route::OpenApi;
    }
    if path == HEALTH_PATH {
        return Route::Health;
    }
    match path.strip_prefix("/v1/pets") {
        Some("") => Route::Pets,
        Some(rest) => match rest.strip_prefix('/') {
            Some(id) if !id.contains('/') => Route::Pet(id),
            _ => Route::Unknown,
        },
        None => Route::Unknown,
    }
}

/// A request's answer, and for the log its id, what went wrong behind a 5xx
/// (the client's Error body does not say; operators need to know) and what
/// the request did to the index (repairs of the key-value index, logged).
#[derive(Debug)]
pub struct Handled {
    pub response: Response,
    pub request_id: RequestId,
    /// The trace id of the request's `traceparent`, for the log line.
    pub trace_id: Option<TraceId>,
    pub detail: Option<String>,
    pub notes: Vec<String>,
}

/// Answers one request. Never panics; every error is an Error body; every
/// response carries the request's id and `Vary: Origin` (whether a response
/// grants an origin depends on the request's `Origin`, so no cache may hand
/// it to a request from another: also when CORS is off, since an operator
/// may turn it on while a cache still holds answers).
pub fn handle<S: KvStore>(request: &Request, platform: &dyn Platform, store: &S) -> Handled {
    let config = Config::new(platform);
    let request_id = RequestId::for_request(request, || platform.random());
    let answer = respond(request, &config, platform, store);
    let detail = answer.result.as_ref().err().and_then(ApiError::detail);
    let mut response = answer.result.unwrap_or_else(ApiError::into_response);
    if answer.deprecated {
        response = deprecated(response);
    }
    if from_browser(request) {
        if let Ok(cors) = config.cors_origins() {
            response = cors.decorate(request, response);
        }
    }
    response = response
        .with_header("vary", "Origin")
        .with_header(crate::request_id::HEADER, request_id.as_str());
    Handled {
        response,
        request_id,
        trace_id: TraceId::of(request),
        detail,
        notes: answer.notes,
    }
}

/// What [`respond`] made of a request.
struct Answer {
    result: Result<Response, ApiError>,
    /// An answer of the deprecated getPet (after authentication), which
    /// carries the deprecation headers.
    deprecated: bool,
    /// What the request did to the key-value index, for the log.
    notes: Vec<String>,
}

impl From<Result<Response, ApiError>> for Answer {
    fn from(result: Result<Response, ApiError>) -> Answer {
        Answer {
            result,
            deprecated: false,
            notes: Vec::new(),
        }
    }
}

/// A browser's request: it carries `Origin`, so it needs `cors_origins`.
fn from_browser(request: &Request) -> bool {
    request.header_values("origin").next().is_some()
}

fn respond<S: KvStore>(
    request: &Request,
    config: &Config,
    platform: &dyn Platform,
    store: &S,
) -> Answer {
    let route = route(&request.path);
    // The public routes: the interface description, and the health probe.
    match (&route, &request.method) {
        (Route::OpenApi, &Method::GET) => {
            let document = Response {
                status: StatusCode::OK,
                headers: vec![("content-type", "application/json".to_string())],
                body: OPENAPI_DOCUMENT.to_vec(),
            };
            return Ok(document).into();
        }
        (Route::Health, &Method::GET) => return health(config, platform, store).into(),
        _ => {}
    }
    // A browser's preflight from an allowed origin, for a route that exists,
    // is answered without a key.
    if from_browser(request) {
        match config.cors_origins() {
            Err(m) => return Err(m.into()).into(),
            Ok(cors) => {
                if let Some(preflight) = cors.preflight(request, route.methods()) {
                    return Ok(preflight).into();
                }
            }
        }
    }
    if let Err(e) = authenticate(request, config) {
        return Err(e).into();
    }
    match (route, &request.method) {
        (Route::Pet(id), &Method::GET) => Answer {
            deprecated: true,
            ..handlers::get_pet(store, request, config, id).into()
        },
        (Route::Pets, &Method::GET) => list_pets(store, request, config, platform),
        (Route::Pets, &Method::POST) => {
            handlers::create_pet(store, request, config, platform).into()
        }
        (Route::Unknown, _) => Err(ApiError::NotFound("no such resource".into())).into(),
        (route, _) => {
            let allow = route.methods().unwrap_or_default();
            Err(ApiError::MethodNotAllowed { allow }).into()
        }
    }
}

/// An unusable `api_key` answers 500 to every request that needs
/// authentication, also one without credentials: loudly, instead of locking
/// clients out with 401s that say nothing to the operators.
fn authenticate(request: &Request, config: &Config) -> Result<(), ApiError> {
    config.api_keys()?.authenticate(request)
}

fn list_pets<S: KvStore>(
    store: &S,
    request: &Request,
    config: &Config,
    platform: &dyn Platform,
) -> Answer {
    let query = match ListQuery::parse(request.query.as_deref()) {
        Ok(query) => query,
        Err(e) => return Err(e).into(),
    };
    let lease_ms = || config.idempotency_lease_ms().map_err(ApiError::from);
    let clock = Clock {
        now_ms: platform.now_ms(),
        lease_ms: &lease_ms,
    };
    let catalogue = Catalogue::new(store, config);
    match catalogue.page(&clock, &query) {
        Ok(mut page) => {
            let notes = std::mem::take(&mut page.notes);
            Answer {
                notes,
                ..Ok(handlers::page_response(request, &query, page)).into()
            }
        }
        Err(e) => Err(e).into(),
    }
}

fn deprecated(response: Response) -> Response {
    response
        .with_header("deprecation", DEPRECATION)
        .with_header("sunset", SUNSET)
        .with_header("link", SUCCESSOR_LINK)
}
