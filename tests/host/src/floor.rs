//! The benchmarks' floor component (`bench/floor`) as an application of the
//! host: same route, the `default` store and the `api_key` variable, like the
//! petstore, so both pay the same platform costs.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::building::build_wasm;
use crate::component::Loaded;
use crate::manifest::App;

/// Builds the floor (release, wasm32-wasip1) in `workspace` and loads it.
pub fn load(workspace: &Path, api_key: &str) -> Result<Arc<Loaded>> {
    build_wasm(workspace, &["petstore-floor"])?;
    let app = App {
        component_id: "floor".into(),
        source: workspace.join("target/wasm32-wasip1/release/petstore_floor.wasm"),
        route_prefix: "/v1".into(),
        key_value_stores: vec!["default".into()],
        variables: HashMap::from([("api_key".to_string(), api_key.to_string())]),
        not_served: Vec::new(),
    };
    Ok(Arc::new(Loaded::load(app)?))
}
