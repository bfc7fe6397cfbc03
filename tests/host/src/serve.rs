//! Serving over HTTP/1.1 as `spin up` does: the API component's route, one
//! fresh instance per request from the pre-instantiated component, requests
//! in parallel on a multi-threaded runtime, the component's stdout kept,
//! shown or dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use tokio::net::TcpListener;
use wasmtime::Store;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{HostWallClock, WasiCtx};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::WasiHttpView;

use crate::component::Loaded;
use crate::interfaces::RequestState;
use crate::kv::KvStore;

/// Where the component's stdout (its access log) goes.
#[derive(Clone)]
pub enum Output {
    /// Straight to the host's stdout, as `spin up` shows it.
    Inherit,
    /// Kept in memory, one entry per line (tests read it).
    Capture(Arc<Mutex<Vec<String>>>),
    Discard,
}

/// The wall clock the component reads (`wasi:clocks/wall-clock`): the
/// real one, moved on by what a test advanced it, so that a lease runs out
/// without the test waiting for it.
#[derive(Clone, Default)]
struct TestClock {
    ahead_ms: Arc<AtomicU64>,
}

impl HostWallClock for TestClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        let real = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        real + Duration::from_millis(self.ahead_ms.load(Ordering::SeqCst))
    }
}

/// A running application: a compiled component, its store, its variables,
/// the clock its requests read.
pub struct Host {
    loaded: Arc<Loaded>,
    kv: KvStore,
    output: Output,
    clock: TestClock,
}

impl Host {
    pub fn new(loaded: Arc<Loaded>, kv: KvStore, output: Output) -> Arc<Host> {
        Arc::new(Host {
            loaded,
            kv,
            output,
            clock: TestClock::default(),
        })
    }

    pub fn kv(&self) -> &KvStore {
        &self.kv
    }

    /// Moves the clock that requests read `ms` on (real time runs too).
    pub fn advance_clock(&self, ms: u64) {
        self.clock.ahead_ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// Accepts connections until the runtime stops.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) -> Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            // Spin 4 leaves Nagle's algorithm on; so do we, so that a
            // component that sends its head before its body stalls here as
            // it would there.
            let host = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let host = host.clone();
                    async move { Ok::<_, std::convert::Infallible>(host.handle(req).await) }
                });
                let _ = http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }

    async fn handle(
        self: Arc<Self>,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<HyperOutgoingBody> {
        let prefix = &self.loaded.app.route_prefix;
        let path = req.uri().path();
        let routed = path == prefix || path.starts_with(&format!("{prefix}/"));
        if !routed {
            return plain(404, "Not Found");
        }
        match self.clone().run(req).await {
            Ok(response) => response,
            Err(e) => {
                eprintln!("petstore-host: request failed: {e:#}");
                // Like Spin: a trapped or silent component is a bodiless 500.
                plain(500, "")
            }
        }
    }

    async fn run(
        self: Arc<Self>,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> Result<hyper::Response<HyperOutgoingBody>> {
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stderr();
        wasi.wall_clock(self.clock.clone());
        let pipe = match &self.output {
            Output::Inherit => {
                wasi.inherit_stdout();
                None
            }
            Output::Capture(_) => {
                let pipe = MemoryOutputPipe::new(64 * 1024);
                wasi.stdout(pipe.clone());
                Some(pipe)
            }
            Output::Discard => None,
        };
        let clock = self.clock.clone();
        let now_ms = Arc::new(move || clock.now().as_millis() as u64);
        let kv = self.kv.for_request(now_ms);
        let state = RequestState::new(wasi.build(), kv, self.loaded.clone());
        let mut store = Store::new(self.loaded.pre.engine(), state);
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let req = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, req)?;
        let out = store.data_mut().http().new_response_outparam(sender)?;
        let pre = self.loaded.pre.clone();
        let host = self.clone();
        let task = tokio::spawn(async move {
            let proxy = pre.instantiate_async(&mut store).await?;
            let result = proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, req, out)
                .await;
            if let (Some(pipe), Output::Capture(lines)) = (pipe, &host.output) {
                let text = String::from_utf8_lossy(&pipe.contents()).into_owned();
                let mut lines = lines.lock().unwrap_or_else(|p| p.into_inner());
                lines.extend(text.lines().map(str::to_string));
            }
            result
        });
        match receiver.await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(code)) => Err(anyhow::anyhow!(
                "component answered with error code {code:?}"
            )),
            Err(_) => match task.await {
                Ok(Ok(())) => Err(anyhow::anyhow!("component never set the response")),
                Ok(Err(e)) => Err(anyhow::Error::from(e).context("component trapped")),
                Err(e) => Err(e.into()),
            },
        }
    }
}

fn plain(status: u16, text: &'static str) -> hyper::Response<HyperOutgoingBody> {
    let body = Full::new(Bytes::from_static(text.as_bytes()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut response = hyper::Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
}

/// Serves `host` on `addr` from a runtime of its own, on background threads.
/// Returns the bound address (pass port 0 for any free port).
pub fn spawn(host: Arc<Host>, addr: SocketAddr, threads: usize) -> Result<SocketAddr> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()?;
    let listener = runtime.block_on(TcpListener::bind(addr))?;
    let bound = listener.local_addr()?;
    std::thread::spawn(move || {
        let _ = runtime.block_on(host.serve(listener));
    });
    Ok(bound)
}
