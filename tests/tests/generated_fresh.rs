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

#[test]
fn find_tool_answers_as_the_phf_map() {
    for tables in [
        &hermes_tools::generated::TABLES,
        &hermes_tests::generated::TABLES,
    ] {
        for name in tables.tools.keys() {
            let found = (tables.find_tool)(name).map(|e| e.name);
            assert_eq!(found, Some(*name), "find_tool({name:?})");
            // Near misses of every length class: none is a tool.
            let mut upper = name.to_uppercase();
            upper.push('_');
            for other in [
                &name[..name.len() - 1],
                &format!("{name}x"),
                &upper[..name.len()],
                &name.replace('_', "-"),
            ] {
                assert_eq!(
                    (tables.find_tool)(other).map(|e| e.name),
                    tables.tools.get(other).map(|e| e.name),
                    "find_tool({other:?})"
                );
            }
        }
        assert!((tables.find_tool)("").is_none());
    }
}
