//! The Spin layer: the request's method, path and `Accept-Encoding` in, the
//! reply out whole (with the API's own `send`), files from the component's
//! mount. Compiled for wasm32 only.

use spin_sdk::http::{IncomingRequest, ResponseOutparam};

use crate::pages::{accepts_gzip, answer, Files};

use petstore_common::send;

/// The files Spin mounted for the component (spin.toml, `files`).
struct Mounted;

impl Files for Mounted {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(path).ok()
    }
}

#[spin_sdk::http_component]
fn handle(incoming: IncomingRequest, outparam: ResponseOutparam) {
    let method = incoming.method().to_string();
    let target = incoming.path_with_query().unwrap_or_else(|| "/".into());
    let path = target.split('?').next().unwrap_or("/");
    let gzip = incoming
        .headers()
        .get("accept-encoding")
        .iter()
        .any(|v| accepts_gzip(&String::from_utf8_lossy(v)));
    let reply = answer(&method, path, gzip, &Mounted);
    let headers = reply
        .headers
        .into_iter()
        .map(|(name, value)| (name.to_string(), value.into_bytes()))
        .collect();
    // The client is gone if this fails: nothing is left to tell it.
    let _ = send::deliver(outparam, reply.status, headers, &reply.body);
}
