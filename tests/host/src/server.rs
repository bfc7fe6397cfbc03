//! Loads the component the way Spin does and serves it over HTTP/1.1: one
//! fresh instance per request from a pre-instantiated component, requests
//! in parallel on a multi-threaded runtime, Spin's key-value and variables
//! interfaces from our WIT (`wit/`, copied from spin-sdk).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use tokio::net::TcpListener;
use wasmtime::component::{Component, HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::kv::{self, KvStore};
use crate::manifest::App;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "petstore:component/spin-host",
        imports: { default: trappable },
        with: {
            "wasi:keyvalue/store.bucket": super::Bucket,
            "wasi:keyvalue/atomics.cas": super::kv::Cas,
        },
    });
}

use bindings::fermyon::spin::variables;
use bindings::wasi::keyvalue::{atomics, batch, store};

/// An open bucket (`default` is the only store).
pub struct Bucket;

/// A compiled component, ready to be instantiated for each request.
pub struct Loaded {
    pub app: App,
    pre: ProxyPre<RequestState>,
    component: Component,
    /// Bytes of the component after componentization.
    pub component_size: usize,
}

/// Instances come from a pool whose linear memories stay resident between
/// requests (the first 2 MiB), as `spin up` configures wasmtime (spin-core's
/// default pooling allocator, `linear_memory_keep_resident` 2 MiB): without
/// it every request would pay page faults for the memory it touches, which
/// Spin does not.
fn spin_like_config() -> Config {
    const MIB: usize = 1 << 20;
    const INSTANCES: u32 = 256;
    let mut pooling = PoolingAllocationConfig::default();
    pooling
        .total_component_instances(INSTANCES)
        .total_memories(INSTANCES)
        .total_tables(2 * INSTANCES)
        .total_stacks(INSTANCES)
        .total_core_instances(4 * INSTANCES)
        .max_component_instance_size(10 * MIB)
        .max_core_instance_size(10 * MIB)
        .max_memories_per_component(32)
        .max_tables_per_component(64)
        .linear_memory_keep_resident(2 * MIB)
        .table_keep_resident(MIB / 2);
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    config
}

/// Reads the `.wasm` and, if it is a core module (as `cargo build --target
/// wasm32-wasip1` makes), turns it into a component as Spin's loader does:
/// `wit-component` with the `wasi_snapshot_preview1` reactor adapter.
pub fn componentize(wasm: &[u8]) -> Result<Vec<u8>> {
    if wasmparser::Parser::is_component(wasm) {
        return Ok(wasm.to_vec());
    }
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(wasm)?
        .adapter(
            "wasi_snapshot_preview1",
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )?
        .encode()
        .context("componentizing the core module")
}

impl Loaded {
    pub fn load(app: App) -> Result<Loaded> {
        let wasm = std::fs::read(&app.source).with_context(|| {
            format!(
                "reading {} (build it: cargo build --target wasm32-wasip1 --release)",
                app.source.display()
            )
        })?;
        Loaded::from_bytes(app, &wasm)
    }

    pub fn from_bytes(app: App, wasm: &[u8]) -> Result<Loaded> {
        let component_bytes = componentize(wasm)?;
        let engine = Engine::new(&spin_like_config())?;
        let component = Component::new(&engine, &component_bytes)?;
        let mut linker: Linker<RequestState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        bindings::SpinHost::add_to_linker::<_, HasSelf<RequestState>>(&mut linker, |s| s)?;
        let pre = ProxyPre::new(linker.instantiate_pre(&component)?)?;
        Ok(Loaded {
            app,
            pre,
            component,
            component_size: component_bytes.len(),
        })
    }

    /// The names of the component's imports (what it asks of the host).
    pub fn imports(&self) -> Vec<String> {
        let engine = self.pre.engine();
        self.component
            .component_type()
            .imports(engine)
            .map(|(name, _)| name.to_string())
            .collect()
    }
}

/// Where the component's stdout (its access log) goes.
#[derive(Clone)]
pub enum Output {
    /// Straight to the host's stdout, as `spin up` shows it.
    Inherit,
    /// Kept in memory, one entry per line (tests read it).
    Capture(Arc<Mutex<Vec<String>>>),
    Discard,
}

/// A running application: a compiled component, its store, its variables.
pub struct Host {
    loaded: Arc<Loaded>,
    kv: KvStore,
    output: Output,
}

impl Host {
    pub fn new(loaded: Arc<Loaded>, kv: KvStore, output: Output) -> Arc<Host> {
        Arc::new(Host { loaded, kv, output })
    }

    pub fn kv(&self) -> &KvStore {
        &self.kv
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
        let state = RequestState {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            hooks: NoOutboundHttp,
            table: ResourceTable::new(),
            kv: self.kv.clone(),
            loaded: self.loaded.clone(),
        };
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

/// Per-request state: WASI, wasi:http, and the Spin host interfaces.
pub struct RequestState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    hooks: NoOutboundHttp,
    table: ResourceTable,
    kv: KvStore,
    /// The app's stores and variables, shared by all requests (not copied).
    loaded: Arc<Loaded>,
}

impl WasiView for RequestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for RequestState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
        }
    }
}

/// Outgoing HTTP is denied, as Spin denies it to a component whose
/// `allowed_outbound_hosts` is empty (ours is).
struct NoOutboundHttp;

type SendResult = wasmtime_wasi_http::Result<(
    http::Response<wasmtime_wasi_http::WasiBody>,
    Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl wasmtime_wasi_http::WasiHttpHooks for NoOutboundHttp {
    fn send_request(
        &mut self,
        _request: http::Request<wasmtime_wasi_http::WasiBody>,
        _options: Option<wasmtime_wasi_http::RequestOptions>,
        _fut: Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn std::future::Future<Output = SendResult> + Send> {
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

/// A store error goes back to the guest; a host failure traps the request,
/// which then ends in a bodiless 500 (as when Spin's host panics).
fn guest<T>(result: kv::KvResult<T>) -> wasmtime::Result<Result<T, store::Error>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(kv::KvError::Store(message)) => Ok(Err(store::Error::Other(message))),
        Err(kv::KvError::Trap(message)) => Err(wasmtime::Error::msg(message)),
    }
}

impl variables::Host for RequestState {
    /// Spin's rules: names are lower-case letters, digits and underscores,
    /// starting with a letter; only the component's variables are defined.
    fn get(&mut self, name: String) -> wasmtime::Result<Result<String, variables::Error>> {
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            return Ok(Err(variables::Error::InvalidName(name)));
        }
        Ok(self
            .loaded
            .app
            .variables
            .get(&name)
            .cloned()
            .ok_or(variables::Error::Undefined(name)))
    }
}

impl store::Host for RequestState {
    /// Spin grants the stores listed in the component's `key_value_stores`.
    fn open(
        &mut self,
        identifier: String,
    ) -> wasmtime::Result<Result<Resource<Bucket>, store::Error>> {
        if !self.loaded.app.key_value_stores.contains(&identifier) {
            return Ok(Err(store::Error::AccessDenied));
        }
        if identifier != "default" {
            return Ok(Err(store::Error::NoSuchStore));
        }
        Ok(Ok(self.table.push(Bucket)?))
    }
}

impl store::HostBucket for RequestState {
    fn get(
        &mut self,
        _: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, store::Error>> {
        guest(self.kv.get(&key))
    }

    fn set(
        &mut self,
        _: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), store::Error>> {
        guest(self.kv.set(&key, &value))
    }

    fn delete(
        &mut self,
        _: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<(), store::Error>> {
        guest(self.kv.delete(&key))
    }

    fn exists(
        &mut self,
        _: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<bool, store::Error>> {
        guest(self.kv.exists(&key))
    }

    fn list_keys(
        &mut self,
        _: Resource<Bucket>,
        _cursor: Option<String>,
    ) -> wasmtime::Result<Result<store::KeyResponse, store::Error>> {
        guest(
            self.kv
                .list_keys()
                .map(|keys| store::KeyResponse { keys, cursor: None }),
        )
    }

    fn drop(&mut self, bucket: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(bucket)?;
        Ok(())
    }
}

impl atomics::Host for RequestState {
    fn increment(
        &mut self,
        _: Resource<Bucket>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, store::Error>> {
        guest(self.kv.increment(&key, delta))
    }

    /// Like Spin: `cas-failed` hands the same compare-and-swap back.
    fn swap(
        &mut self,
        cas: Resource<kv::Cas>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), atomics::CasError>> {
        let rep = cas.rep();
        let kv = self.kv.clone();
        let outcome = kv.swap(self.table.get_mut(&cas)?, &value);
        if !matches!(outcome, Ok(false)) {
            self.table.delete(cas)?;
        }
        Ok(match guest(outcome)? {
            Ok(true) => Ok(()),
            Ok(false) => Err(atomics::CasError::CasFailed(Resource::new_own(rep))),
            Err(e) => Err(atomics::CasError::StoreError(e)),
        })
    }
}

impl atomics::HostCas for RequestState {
    fn new(
        &mut self,
        _: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Resource<kv::Cas>, store::Error>> {
        Ok(match guest(self.kv.cas_new(&key))? {
            Ok(cas) => Ok(self.table.push(cas)?),
            Err(e) => Err(e),
        })
    }

    fn current(
        &mut self,
        cas: Resource<kv::Cas>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, store::Error>> {
        let kv = self.kv.clone();
        guest(kv.cas_current(self.table.get_mut(&cas)?))
    }

    fn drop(&mut self, cas: Resource<kv::Cas>) -> wasmtime::Result<()> {
        self.table.delete(cas)?;
        Ok(())
    }
}

impl batch::Host for RequestState {
    fn get_many(
        &mut self,
        _: Resource<Bucket>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<Vec<(String, Option<Vec<u8>>)>, store::Error>> {
        guest(self.kv.get_many(&keys))
    }

    fn set_many(
        &mut self,
        _: Resource<Bucket>,
        pairs: Vec<(String, Vec<u8>)>,
    ) -> wasmtime::Result<Result<(), store::Error>> {
        guest(self.kv.set_many(&pairs))
    }

    fn delete_many(
        &mut self,
        _: Resource<Bucket>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<(), store::Error>> {
        guest(self.kv.delete_many(&keys))
    }
}

/// Builds wasm32-wasip1 packages of the workspace in `dir` with the release
/// profile, as `spin build` does for this app.
pub fn build_wasm(dir: &Path, packages: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command
        .args(["build", "--target", "wasm32-wasip1", "--release"])
        .current_dir(dir);
    for package in packages {
        command.args(["-p", package]);
    }
    let status = command.status().context("running cargo")?;
    anyhow::ensure!(
        status.success(),
        "building {packages:?} for wasm32-wasip1 failed"
    );
    Ok(())
}

/// Loads the application of `manifest` with `variables` (as `--variable`).
impl Loaded {
    /// The same compiled component with some component variables set to
    /// other values (as another `--variable` would render them).
    pub fn with_variables(&self, variables: &[(&str, &str)]) -> Arc<Loaded> {
        let mut app = self.app.clone();
        for (name, value) in variables {
            app.variables.insert(name.to_string(), value.to_string());
        }
        Arc::new(Loaded {
            app,
            pre: self.pre.clone(),
            component: self.component.clone(),
            component_size: self.component_size,
        })
    }
}

pub fn load_app(manifest: &Path, variables: &HashMap<String, String>) -> Result<Arc<Loaded>> {
    let app = crate::manifest::load(manifest, variables)?;
    Ok(Arc::new(Loaded::load(app)?))
}
