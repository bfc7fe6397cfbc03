//! The component, loaded the way Spin loads it: a `wasm32-wasip1` core module
//! turned into a component (`wit-component` and the preview 1 reactor
//! adapter), compiled once on an engine configured like `spin up`'s, and
//! pre-instantiated with WASI, `wasi:http` and Spin's interfaces.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi_http::p2::bindings::ProxyPre;

use crate::interfaces::{self, RequestState};
use crate::manifest::App;

/// A compiled component, ready to be instantiated for each request.
pub struct Loaded {
    pub app: App,
    pub(crate) pre: ProxyPre<RequestState>,
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
                "reading {} (build it: scripts/build-api)",
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
        interfaces::add_to_linker(&mut linker)?;
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

/// Loads the application of `manifest` with `variables` (as `--variable`).
pub fn load_app(manifest: &Path, variables: &HashMap<String, String>) -> Result<Arc<Loaded>> {
    let app = crate::manifest::load(manifest, variables)?;
    Ok(Arc::new(Loaded::load(app)?))
}
