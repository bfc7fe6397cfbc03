//! The Spin layer: `wasi:http` in and out, `wasi:keyvalue` as a [`KvStore`],
//! the variables, the clocks and `wasi:random`, the access log on stdout.
//! Compiled for wasm32 only; all logic is in the core.

use std::cell::{Cell, OnceCell};
use std::time::Instant;

use spin_sdk::http::{IncomingRequest, ResponseOutparam};

use crate::log;
use crate::platform::Platform;
use crate::request::{Body, Request, MAX_BODY_BYTES};
use crate::response::Response;
use crate::routes;
use crate::store::{KvStore, StoreError, SwapReport};

use petstore_common::send;

/// The build's world, the one place it is chosen: the default build's,
/// with `wasi:keyvalue/atomics`, or the edge build's, which imports none
/// (world.wit), and whose calls of them fail (its catalogue makes none).
#[cfg(not(feature = "edge"))]
mod bindings {
    wit_bindgen::generate!({ world: "petstore", path: "wit", generate_all });
    pub use wasi::keyvalue::atomics;
}
#[cfg(feature = "edge")]
mod bindings {
    wit_bindgen::generate!({ world: "petstore-edge", path: "wit", generate_all });
    pub mod atomics {
        use super::wasi::keyvalue::store::{Bucket, Error};
        pub struct Cas;
        #[allow(dead_code)]
        pub enum CasError {
            CasFailed(Cas),
            StoreError(Error),
        }
        fn none<T>() -> Result<T, Error> {
            Err(Error::Other(
                "this build imports no wasi:keyvalue/atomics".into(),
            ))
        }
        pub fn increment(_: &Bucket, _: &str, _: i64) -> Result<i64, Error> {
            none()
        }
        pub fn swap(_: Cas, _: &[u8]) -> Result<(), CasError> {
            none().map_err(CasError::StoreError)
        }
        impl Cas {
            pub fn new(_: &Bucket, _: &str) -> Result<Cas, Error> {
                none()
            }
            pub fn current(&self) -> Result<Option<Vec<u8>>, Error> {
                none()
            }
        }
    }
}

use bindings::atomics;
use bindings::wasi::keyvalue::{batch, store};

#[spin_sdk::http_component]
fn handle(incoming: IncomingRequest, outparam: ResponseOutparam) {
    let started = Instant::now();
    // The log shows the method as received. One that is not an HTTP token
    // (wasi:http passes any string) is routed as CONNECT, which no route
    // accepts: authentication first, then 404/405.
    let method_text = incoming.method().to_string();
    let method = http::Method::from_bytes(method_text.as_bytes()).unwrap_or(http::Method::CONNECT);
    let target = incoming
        .path_with_query()
        .unwrap_or_else(|| "/".to_string());
    let headers = incoming.headers().entries();
    // Only createPet reads a body: other requests skip the stream's host calls.
    let body = if method == http::Method::POST {
        read_body(incoming)
    } else {
        Body::Complete(Vec::new())
    };
    let request = Request::new(method, &target, headers, body);
    let store = SpinStore::default();
    let handled = routes::handle(&request, &SpinHost, &store);
    // A failure to send (the client went away, say) is only logged.
    let sent = send(outparam, &handled.response);
    let micros = started.elapsed().as_micros();
    println!(
        "{}",
        log::access_line(
            &method_text,
            &request.path,
            &handled,
            micros,
            store.calls.get(),
            &sent
        )
    );
}

/// Spin's variables, the clocks and `wasi:random`, each a host call made
/// only when the core asks.
struct SpinHost;

impl Platform for SpinHost {
    fn variable(&self, name: &str) -> Result<String, String> {
        use bindings::fermyon::spin::variables::{get, Error};
        get(name).map_err(|e| match e {
            Error::InvalidName(m) => format!("invalid name: {m}"),
            Error::Undefined(m) => format!("undefined: {m}"),
            Error::Provider(m) => format!("provider: {m}"),
            Error::Other(m) => m,
        })
    }

    /// `wasi:clocks/wall-clock`, in Unix milliseconds.
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    /// `wasi:clocks/monotonic-clock` through WASI's `poll_oneoff`: the
    /// instance waits, Spin's runtime serves other requests meanwhile.
    fn sleep_ms(&self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }

    fn random(&self) -> [u8; 16] {
        let bytes = bindings::wasi::random::random::get_random_bytes(16);
        let mut bits = [0u8; 16];
        for (b, r) in bits.iter_mut().zip(bytes) {
            *b = r;
        }
        bits
    }
}

/// Reads the body up to one byte past the limit, so an oversized body is
/// known without reading it all.
fn read_body(incoming: IncomingRequest) -> Body {
    let Ok(body) = incoming.consume() else {
        return Body::Complete(Vec::new());
    };
    let Ok(stream) = body.stream() else {
        return Body::Complete(Vec::new());
    };
    let mut bytes = Vec::new();
    // `Closed` is the normal end. Any other error means the client went away
    // mid-body; what arrived is then judged like any body (a cut JSON text
    // does not parse).
    while let Ok(chunk) = stream.blocking_read((MAX_BODY_BYTES + 1 - bytes.len()) as u64) {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_BODY_BYTES {
            return Body::TooLarge;
        }
    }
    Body::Complete(bytes)
}

/// Hands the response to Spin.
fn send(outparam: ResponseOutparam, response: &Response) -> Result<(), String> {
    let headers: Vec<(String, Vec<u8>)> = response
        .headers
        .iter()
        .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
        .collect();
    send::deliver(outparam, response.status.as_u16(), headers, &response.body)
}

/// Spin's `default` key-value store, opened on first use (a request that
/// needs no data, such as a 401, never opens it). Counts its host calls for
/// the log.
#[derive(Default)]
struct SpinStore {
    bucket: OnceCell<store::Bucket>,
    calls: Cell<u64>,
}

fn store_error(e: store::Error) -> StoreError {
    StoreError(match e {
        store::Error::NoSuchStore => "no such store 'default'".to_string(),
        store::Error::AccessDenied => "access to store 'default' denied".to_string(),
        store::Error::Other(m) => m,
    })
}

impl SpinStore {
    fn count(&self, calls: u64) {
        self.calls.set(self.calls.get() + calls);
    }

    /// Only an open that succeeded is kept: a failed one is tried again by
    /// the next call, so that the retries of a call retry the open too (a
    /// Spin process's first open of a SQLite file that another process
    /// keeps writing can wait out its busy timeout and fail).
    #[inline(always)]
    fn bucket(&self) -> Result<&store::Bucket, StoreError> {
        match self.bucket.get() {
            Some(bucket) => Ok(bucket),
            None => self.open(),
        }
    }

    /// Opens the store: on a request's first call, and again on each call
    /// after an open failed. Cold and out of line, so that every call's own
    /// path stays one load (and the module within its size budget).
    #[cold]
    #[inline(never)]
    fn open(&self) -> Result<&store::Bucket, StoreError> {
        let bucket = store::open("default").map_err(store_error)?;
        Ok(self.bucket.get_or_init(|| bucket))
    }
}

impl KvStore for SpinStore {
    type Cas = atomics::Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let bucket = self.bucket()?;
        self.count(1);
        bucket.get(key).map_err(store_error)
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let bucket = self.bucket()?;
        self.count(1);
        let found = batch::get_many(bucket, keys).map_err(store_error)?;
        Ok(found
            .into_iter()
            .filter_map(|(key, value)| value.map(|v| (key, v)))
            .collect())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let bucket = self.bucket()?;
        self.count(1);
        bucket.set(key, value).map_err(store_error)
    }

    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> Result<(), StoreError> {
        let bucket = self.bucket()?;
        self.count(1);
        batch::set_many(bucket, pairs).map_err(store_error)
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        let bucket = self.bucket()?;
        self.count(1);
        atomics::increment(bucket, key, delta).map_err(store_error)
    }

    fn cas_begin(&self, key: &str) -> Result<(atomics::Cas, Option<Vec<u8>>), StoreError> {
        let bucket = self.bucket()?;
        self.count(1);
        let cas = atomics::Cas::new(bucket, key).map_err(store_error)?;
        self.count(1);
        let current = cas.current().map_err(store_error)?;
        Ok((cas, current))
    }

    fn cas_swap(&self, cas: atomics::Cas, value: &[u8]) -> Result<SwapReport, StoreError> {
        self.count(1);
        match atomics::swap(cas, value) {
            Ok(()) => Ok(SwapReport::Swapped),
            Err(atomics::CasError::CasFailed(_)) => Ok(SwapReport::Conflict),
            Err(atomics::CasError::StoreError(e)) => Err(store_error(e)),
        }
    }

    /// Every page of `list-keys` (Spin 4.0.2 answers with one).
    fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        let bucket = self.bucket()?;
        let (mut keys, mut cursor) = (Vec::new(), None);
        loop {
            self.count(1);
            let page = bucket.list_keys(cursor.as_deref()).map_err(store_error)?;
            keys.extend(page.keys);
            cursor = page.cursor;
            if cursor.is_none() {
                return Ok(keys);
            }
        }
    }
}
