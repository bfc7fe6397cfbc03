//! The host interfaces a request's instance calls: WASI and `wasi:http`
//! (outgoing requests denied, as Spin denies them to a component with no
//! `allowed_outbound_hosts`), and Spin's `wasi:keyvalue` and
//! `fermyon:spin/variables` from our WIT (`wit/`, copied from spin-sdk), over
//! the test host's key-value engines (`kv`).

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::component::Loaded;
use crate::kv::{self, KvStore};

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

impl RequestState {
    pub fn new(wasi: WasiCtx, kv: KvStore, loaded: Arc<Loaded>) -> RequestState {
        RequestState {
            wasi,
            http: WasiHttpCtx::new(),
            hooks: NoOutboundHttp,
            table: ResourceTable::new(),
            kv,
            loaded,
        }
    }
}

/// Adds Spin's key-value and variables interfaces to `linker`.
pub fn add_to_linker(linker: &mut Linker<RequestState>) -> wasmtime::Result<()> {
    bindings::SpinHost::add_to_linker::<_, HasSelf<RequestState>>(linker, |s| s)
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
        if let Some(message) = self.kv.open_fails() {
            return Ok(Err(store::Error::Other(message)));
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
