//! The checked-in registry matches what `cargo xtask gen` would write now,
//! so a stale `tools/src/generated.rs` fails plain `cargo test` too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn generated_registry_is_fresh() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools");
    let (_, expected) = match hermes_build_tools::render_registry(&tools) {
        Ok(ok) => ok,
        Err(diagnostics) => panic!("discovery failed: {diagnostics:#?}"),
    };
    let actual = std::fs::read_to_string(tools.join(hermes_build_tools::GENERATED_FILE)).unwrap();
    assert!(
        actual == expected,
        "tools/src/generated.rs is stale: run `cargo xtask gen` and commit the result"
    );
}

#[test]
fn every_discovered_tool_is_in_the_registry_with_its_toolset() {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools");
    let discovery = hermes_build_tools::discover(&tools).unwrap();
    let registry = hermes_tools::registry();
    for (_, found) in discovery.tools() {
        let entry = registry
            .get(&found.tool.name)
            .unwrap_or_else(|| panic!("{} missing from the registry", found.tool.name));
        assert_eq!(entry.toolset, found.tool.attr.toolset());
        assert_eq!(entry.description, found.tool.description);
    }
}

#[test]
fn static_coercion_plans_match_the_schemas() {
    use hermes_runtime::coerce::CoercionPlan;
    for tables in [
        &hermes_tools::generated::TABLES,
        &hermes_tests::generated::TABLES,
    ] {
        for entry in tables.tools.values() {
            let emitted = tables.plans.get(entry.name).unwrap_or_else(|| {
                panic!("no static plan for `{}`: run `cargo xtask gen`", entry.name)
            });
            assert_eq!(
                **emitted,
                CoercionPlan::compile(entry.parameters()),
                "the static plan of `{}` is stale: run `cargo xtask gen`",
                entry.name
            );
        }
    }
}
