//! The benchmarks' floor: what any service like ours must do per request —
//! read the `api_key` variable, print one log line, make its key-value calls,
//! write a body of a given size whole before setting the outparam — with
//! nothing but the SDK (its own body sink, not our `crates/petstore-common/src/send.rs`), and
//! nothing else. The query says which calls:
//!
//! `GET /v1/floor?gets=G&value=V&sets=S&create=1&bytes=B&getmany=1`
//! - `gets`: plain `get`s of `floor:0..15` (1 KB values), or with `value=V`
//!   of `floor:V:0..15` (V-byte values; both seeded by the benchmark);
//! - `sets`: overwriting `set`s of `floor:0..15` (100-byte values);
//! - `create`: `increment floor:ctr`, then `set` the new key `floor:new:{n}`,
//!   the least any create must do (201);
//! - `getmany`: one `batch::get-many`, to show what each backend does with it;
//! - `increment=1`: only `increment floor:ctr` (201);
//! - `retry=1`: the increment (of `create` or `increment`) retried under the
//!   component's own policy for contended stores (`crates/petstore-common/src/policy.rs`,
//!   `Policy::CONTENDED`), as any create on DynamoDB must.
//!
//! Compiled for wasm32 only (natively it is empty, so the workspace links).
#![cfg(target_arch = "wasm32")]

use futures::SinkExt;
use spin_sdk::http::{Fields, IncomingRequest, OutgoingResponse, ResponseOutparam};

use petstore_common::policy;

mod bindings {
    wit_bindgen::generate!({ world: "floor", path: "../../wit", generate_all });
}

use bindings::wasi::keyvalue::{atomics, batch, store};

#[derive(Default)]
struct Plan {
    gets: u32,
    sets: u32,
    create: bool,
    increment: bool,
    retry: bool,
    getmany: bool,
    bytes: usize,
    value: usize,
}

fn plan(target: &str) -> Plan {
    let mut plan = Plan::default();
    let query = target.split_once('?').map_or("", |(_, q)| q);
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = value.parse().unwrap_or(0);
        match name {
            "gets" => plan.gets = number,
            "sets" => plan.sets = number,
            "create" => plan.create = number == 1,
            "increment" => plan.increment = number == 1,
            "retry" => plan.retry = number == 1,
            "getmany" => plan.getmany = number == 1,
            "bytes" => plan.bytes = number as usize,
            "value" => plan.value = number as usize,
            _ => {}
        }
    }
    plan
}

fn run(plan: &Plan) -> Result<u16, store::Error> {
    let bucket = store::open("default")?;
    for i in 0..plan.gets {
        let key = match plan.value {
            0 => format!("floor:{}", i % 16),
            size => format!("floor:{size}:{}", i % 16),
        };
        bucket.get(&key)?;
    }
    for i in 0..plan.sets {
        bucket.set(&format!("floor:{}", i % 16), &[b'v'; 100])?;
    }
    if plan.getmany {
        batch::get_many(&bucket, &["floor:0".to_string(), "floor:1".to_string()])?;
    }
    if plan.increment {
        increment(&bucket, plan.retry)?;
        return Ok(201);
    }
    if plan.create {
        let n = increment(&bucket, plan.retry)?;
        bucket.set(&format!("floor:new:{n}"), &[b'p'; 60])?;
        return Ok(201);
    }
    Ok(200)
}

/// `increment floor:ctr`, retried under `Policy::CONTENDED` if `retry`.
fn increment(bucket: &store::Bucket, retry: bool) -> Result<i64, store::Error> {
    let (mut next, mut waited) = (1, 0);
    loop {
        match atomics::increment(bucket, "floor:ctr", 1) {
            Ok(n) => return Ok(n),
            Err(e) if !retry => return Err(e),
            Err(e) => {
                let random = bindings::wasi::random::random::get_random_bytes(16);
                let mut bits = [0u8; 16];
                bits.iter_mut().zip(random).for_each(|(b, r)| *b = r);
                let wait = policy::backoff_ms(next, bits);
                if !policy::Policy::CONTENDED.may_retry(next, waited, wait) {
                    return Err(e);
                }
                std::thread::sleep(std::time::Duration::from_millis(wait));
                waited += wait;
                next += 1;
            }
        }
    }
}

#[spin_sdk::http_component]
fn handle(incoming: IncomingRequest, outparam: ResponseOutparam) {
    let configured = spin_sdk::variables::get("api_key").is_ok();
    let target = incoming.path_with_query().unwrap_or_default();
    let plan = plan(&target);
    let status = run(&plan).unwrap_or(503);
    println!("GET /v1/floor {status} key-configured={configured}");
    respond(outparam, status, vec![b' '; plan.bytes]);
}

/// The whole response before the outparam is set (else keep-alive clients
/// wait out a delayed ACK on Spin 4.0.2), with the SDK's own body sink.
fn respond(outparam: ResponseOutparam, status: u16, body: Vec<u8>) {
    let headers = Fields::from_list(&[
        ("content-type".to_string(), b"application/json".to_vec()),
        (
            "content-length".to_string(),
            body.len().to_string().into_bytes(),
        ),
    ]);
    let Ok(headers) = headers else { return };
    let response = OutgoingResponse::new(headers);
    let _ = response.set_status_code(status);
    let mut sink = response.take_body();
    let _ = spin_sdk::http::run(async move {
        let sent = sink.send(body).await;
        drop(sink); // finishes the body
        sent
    });
    outparam.set(response);
}
