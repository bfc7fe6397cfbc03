//! What the component asks of its host, read from the component itself.

use crate::support::loaded;

#[test]
fn the_component_imports_only_what_a_spin_host_provides() {
    let imports = loaded().imports();
    assert!(
        imports
            .iter()
            .any(|i| i.starts_with("wasi:keyvalue/atomics@0.2.0-draft2")),
        "{imports:?}"
    );
    let allowed = |name: &str| {
        let (interface, version) = name.split_once('@').unwrap_or((name, ""));
        match interface {
            "wasi:keyvalue/store" | "wasi:keyvalue/atomics" | "wasi:keyvalue/batch" => {
                version == "0.2.0-draft2"
            }
            "fermyon:spin/variables" => version == "2.0.0",
            i if i.starts_with("wasi:http/") || i.starts_with("wasi:io/") => {
                version.starts_with("0.2.")
            }
            // What the preview1 adapter needs: WASI CLI, clocks, filesystem, random.
            i if [
                "wasi:cli/",
                "wasi:clocks/",
                "wasi:filesystem/",
                "wasi:random/",
            ]
            .iter()
            .any(|p| i.starts_with(p)) =>
            {
                version.starts_with("0.2.")
            }
            _ => false,
        }
    };
    let unexpected: Vec<&String> = imports.iter().filter(|i| !allowed(i)).collect();
    assert!(
        unexpected.is_empty(),
        "imports a Spin host may not provide: {unexpected:?}"
    );
    // `batch` is imported for set-many, and get-many on DynamoDB only; that
    // get-many never reaches Redis is counted by the host (concurrency.rs).
}
