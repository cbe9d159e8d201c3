//! The tool contract holds for the real tools: every lint of `cargo xtask
//! check-tools`, over the schemas of the compiled registries, finds nothing
//! in `tools/` and `tests/` (BEHAVIOUR.md §9: assert contracts, not counts).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use hermes_build_tools::lints::check_all;
use hermes_build_tools::report::{render_text, Sources};
use hermes_runtime::Registry;
use serde_json::Value;

fn assert_contract(dir: &str, registry: &Registry) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let schemas: BTreeMap<String, Value> =
        serde_json::from_value(registry.parameters_by_name()).unwrap();
    let checked = check_all(&root, &schemas);
    assert!(checked.tools > 0);
    assert!(
        checked.diagnostics.is_empty(),
        "{}",
        render_text(&checked.diagnostics, &mut Sources::new(&root))
    );
}

#[test]
fn the_built_in_tools_keep_the_contract() {
    assert_contract("tools", hermes_tools::registry());
}

#[test]
fn the_test_tools_keep_the_contract() {
    assert_contract("tests", hermes_tests::registry());
}
