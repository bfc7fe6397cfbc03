//! The parts of `spin.toml` (manifest v2) the host needs, resolved the way
//! `spin up` resolves them: application variables from `--variable`,
//! `SPIN_VARIABLE_<NAME>` or their default, required ones enforced, and the
//! component's variables rendered from their `{{ name }}` templates.
//!
//! The host serves the API component only: the one component with a
//! key-value store. The app's other components (the reference page at `/`
//! and `/docs/...`) are listed in [`App::not_served`]; requests to their
//! routes get the host's 404, and their suites run on real Spin only.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

#[derive(Deserialize)]
struct RawManifest {
    spin_manifest_version: u32,
    #[serde(default)]
    variables: BTreeMap<String, RawVariable>,
    trigger: RawTriggers,
    component: BTreeMap<String, RawComponent>,
}

#[derive(Deserialize)]
struct RawVariable {
    #[serde(default)]
    required: bool,
    default: Option<String>,
}

#[derive(Deserialize)]
struct RawTriggers {
    http: Vec<RawHttpTrigger>,
}

#[derive(Deserialize)]
struct RawHttpTrigger {
    route: String,
    component: String,
}

#[derive(Deserialize)]
struct RawComponent {
    source: String,
    #[serde(default)]
    key_value_stores: Vec<String>,
    #[serde(default)]
    variables: BTreeMap<String, String>,
}

/// The API component of the application, ready to serve.
#[derive(Debug, Clone)]
pub struct App {
    pub component_id: String,
    /// The `.wasm` the component is built to, relative paths resolved.
    pub source: PathBuf,
    /// Route prefix: `/v1/...` serves `/v1` and everything below it.
    pub route_prefix: String,
    pub key_value_stores: Vec<String>,
    /// The component's variables, rendered.
    pub variables: HashMap<String, String>,
    /// The routes of the app's other components, with their component.
    pub not_served: Vec<(String, String)>,
}

/// Reads `spin.toml` and resolves variables from `provided` (name → value,
/// from `--variable`) and the environment (`SPIN_VARIABLE_<NAME>`).
pub fn load(path: &Path, provided: &HashMap<String, String>) -> Result<App> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let raw: RawManifest =
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    if raw.spin_manifest_version != 2 {
        bail!("only spin_manifest_version = 2 is supported");
    }
    for trigger in &raw.trigger.http {
        if !raw.component.contains_key(&trigger.component) {
            bail!("trigger names unknown component '{}'", trigger.component);
        }
    }
    let has_store = |t: &&RawHttpTrigger| !raw.component[&t.component].key_value_stores.is_empty();
    let (api, others): (Vec<&RawHttpTrigger>, Vec<&RawHttpTrigger>) =
        raw.trigger.http.iter().partition(has_store);
    let [trigger] = api.as_slice() else {
        bail!("the test host serves exactly one HTTP trigger with a key-value store");
    };
    let component = &raw.component[&trigger.component];
    let mut app_vars = HashMap::new();
    for (name, var) in &raw.variables {
        let env = std::env::var(format!("SPIN_VARIABLE_{}", name.to_uppercase())).ok();
        let value = provided
            .get(name)
            .cloned()
            .or(env)
            .or_else(|| var.default.clone());
        match value {
            Some(v) => {
                app_vars.insert(name.clone(), v);
            }
            None if var.required => bail!(
                "variable '{name}' is required: pass --variable {name}=... or set SPIN_VARIABLE_{}",
                name.to_uppercase()
            ),
            None => {}
        }
    }
    let variables = component
        .variables
        .iter()
        .map(|(name, template)| Ok((name.clone(), render(template, &app_vars)?)))
        .collect::<Result<_>>()?;
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(App {
        component_id: trigger.component.clone(),
        source: base.join(&component.source),
        route_prefix: trigger.route.trim_end_matches("/...").to_string(),
        key_value_stores: component.key_value_stores.clone(),
        variables,
        not_served: others
            .iter()
            .map(|t| (t.route.clone(), t.component.clone()))
            .collect(),
    })
}

/// Renders `{{ name }}` references to application variables.
fn render(template: &str, vars: &HashMap<String, String>) -> Result<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("}}")
            .ok_or_else(|| anyhow!("unclosed '{{{{' in '{template}'"))?;
        let name = rest[start + 2..start + end].trim();
        let value = vars
            .get(name)
            .ok_or_else(|| anyhow!("template '{template}' names unset variable '{name}'"))?;
        out.push_str(value);
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_templates() {
        let vars = HashMap::from([("api_key".to_string(), "k".to_string())]);
        assert_eq!(render("{{ api_key }}", &vars).unwrap(), "k");
        assert_eq!(render("a{{api_key}}b", &vars).unwrap(), "akb");
        assert!(render("{{ other }}", &vars).is_err());
    }

    #[test]
    fn reads_the_project_manifest() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spin.toml");
        let provided = HashMap::from([("api_key".to_string(), "secret".to_string())]);
        let app = load(&manifest, &provided).unwrap();
        assert_eq!(app.route_prefix, "/v1");
        assert_eq!(app.key_value_stores, vec!["default".to_string()]);
        assert_eq!(
            app.variables.get("api_key").map(String::as_str),
            Some("secret")
        );
        assert!(app
            .source
            .ends_with("target/wasm32-wasip1/release/petstore.wasm"));
        assert_eq!(
            app.not_served,
            [
                ("/".to_string(), "reference".to_string()),
                ("/docs/...".to_string(), "reference".to_string())
            ]
        );
    }
}
