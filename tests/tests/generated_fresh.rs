//! Every tools crate of the workspace has checked-in generated files
//! (`src/tools/mod.rs`, `src/generated.rs`, `src/generated_plans.rs`,
//! `src/generated_schemas.rs`) that match what
//! `cargo xtask gen` would write now, so a stale one fails plain
//! `cargo test` too.
//!
//! A tools crate is a workspace member with a `src/tools/` folder and a
//! `toolsets.toml`: found from `cargo metadata`, not from a list kept here.
//! The plans and schemas are rendered from the crate's compiled registry, so each tools
//! crate must be linked into this test ([`compiled`]); one that is not fails
//! the test instead of going unchecked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod workspace;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hermes_build_tools::{
    render_plans, render_registry, render_schemas, GENERATED_FILE, MODULES_FILE, PLANS_FILE,
    SCHEMAS_FILE, TOOLSETS_FILE, TOOLS_DIR,
};
use hermes_runtime::Registry;
use serde_json::Value;

/// The compiled registry of the tools crate named `package`, when this test
/// binary links it.
fn compiled(package: &str) -> Option<&'static Registry> {
    match package {
        "hermes-tools" => Some(hermes_tools::registry()),
        "hermes-tests" => Some(hermes_tests::registry()),
        _ => None,
    }
}

/// Every tools crate of the workspace: (package name, crate root).
fn tools_crates() -> Vec<(String, PathBuf)> {
    let metadata = workspace::metadata();
    let mut crates: Vec<(String, PathBuf)> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|package| {
            let name = package["name"].as_str()?;
            let root = Path::new(package["manifest_path"].as_str()?).parent()?;
            let is_tools_crate =
                root.join(TOOLS_DIR).is_dir() && root.join(TOOLSETS_FILE).is_file();
            is_tools_crate.then(|| (name.to_string(), root.to_path_buf()))
        })
        .collect();
    crates.sort();
    crates
}

/// The generated files of the crate at `root` that differ from what
/// `cargo xtask gen` would write for them, given `parameters`
/// (`{tool name: parameters schema}`, as its compiled registry reports them).
fn stale_files(root: &Path, parameters: &Value) -> Vec<&'static str> {
    let (_, rendered) = match render_registry(root) {
        Ok(ok) => ok,
        Err(diagnostics) => panic!("discovery failed in {}: {diagnostics:#?}", root.display()),
    };
    let parameters: BTreeMap<String, Value> = serde_json::from_value(parameters.clone()).unwrap();
    let plans = render_plans(&parameters).unwrap_or_else(|d| panic!("{d}"));
    let schemas = render_schemas(&parameters).unwrap_or_else(|d| panic!("{d}"));
    let mut files = rendered.files().to_vec();
    files.push((PLANS_FILE, &plans));
    files.push((SCHEMAS_FILE, &schemas));
    files
        .into_iter()
        .filter(|(file, expected)| {
            std::fs::read_to_string(root.join(file)).ok().as_deref() != Some(*expected)
        })
        .map(|(file, _)| file)
        .collect()
}

#[test]
fn every_tools_crate_has_fresh_generated_files() {
    let crates = tools_crates();
    let packages: Vec<&str> = crates.iter().map(|(p, _)| p.as_str()).collect();
    // The built-in tools are one of them: discovery that found nothing
    // would make this test pass vacuously.
    assert!(
        packages.contains(&"hermes-tools"),
        "tools crates found: {packages:?}"
    );
    for (package, root) in &crates {
        let registry = compiled(package).unwrap_or_else(|| {
            panic!("tools crate {package} is not linked into this test: add it to `compiled`")
        });
        let stale = stale_files(root, &registry.parameters_by_name());
        assert!(
            stale.is_empty(),
            "{package}: {stale:?} stale: run `cargo xtask gen` and commit the result"
        );
    }
}

/// Copies what generation reads and writes of the crate at `from` to `to`.
fn copy_tools_crate(from: &Path, to: &Path) {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    copy_dir(&from.join(TOOLS_DIR), &to.join(TOOLS_DIR));
    for file in [TOOLSETS_FILE, GENERATED_FILE, PLANS_FILE, SCHEMAS_FILE] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

#[test]
fn freshness_check_reports_each_stale_file() {
    let source = workspace::root().join("tests");
    let parameters = hermes_tests::registry().parameters_by_name();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tools_crate(&source, root);
    assert_eq!(
        stale_files(root, &parameters),
        Vec::<&str>::new(),
        "a faithful copy is fresh"
    );

    // A tool is added to a module: the registry is stale.
    let module = root.join(TOOLS_DIR).join("gated.rs");
    let text = std::fs::read_to_string(&module).unwrap();
    let added = format!(
        "{text}\n/// Added after generation.\n#[hermes_tool(toolset = \"notes\")]\npub fn notes_added() -> String {{\n    String::new()\n}}\n"
    );
    std::fs::write(&module, added).unwrap();
    assert_eq!(stale_files(root, &parameters), [GENERATED_FILE]);
    std::fs::write(&module, text).unwrap();
    assert_eq!(stale_files(root, &parameters), Vec::<&str>::new());

    // A parameter's schema changes: the plans and the schemas' text are stale.
    let mut changed = parameters.clone();
    let (name, schema) = changed.as_object_mut().unwrap().iter_mut().next().unwrap();
    let name = name.clone();
    schema["properties"]["__added"] = serde_json::json!({"type": "integer"});
    assert_eq!(
        stale_files(root, &changed),
        [PLANS_FILE, SCHEMAS_FILE],
        "after changing `{name}`"
    );

    // Only a description changes: no plan does, the schemas' text does.
    let mut described = parameters.clone();
    let schema = described
        .as_object_mut()
        .unwrap()
        .values_mut()
        .next()
        .unwrap();
    schema["description"] = serde_json::json!("Described after generation.");
    assert_eq!(stale_files(root, &described), [SCHEMAS_FILE]);

    // A generated file is missing: it is stale too.
    std::fs::remove_file(root.join(PLANS_FILE)).unwrap();
    assert_eq!(stale_files(root, &parameters), [PLANS_FILE]);
    std::fs::remove_file(root.join(SCHEMAS_FILE)).unwrap();
    assert_eq!(stale_files(root, &parameters), [PLANS_FILE, SCHEMAS_FILE]);

    // A new tool file: a new module, so both the module declarations and
    // the registry are stale.
    std::fs::write(
        root.join(TOOLS_DIR).join("late.rs"),
        "use hermes_macros::hermes_tool;\n/// Late.\n#[hermes_tool(toolset = \"notes\")]\npub fn notes_late() -> String {\n    String::new()\n}\n",
    )
    .unwrap();
    assert_eq!(
        stale_files(root, &parameters),
        [MODULES_FILE, GENERATED_FILE, PLANS_FILE, SCHEMAS_FILE]
    );
}

#[test]
fn every_discovered_tool_is_in_its_crates_registry_with_its_toolset() {
    for (package, root) in tools_crates() {
        let discovery = hermes_build_tools::discover(&root).unwrap();
        let Some(registry) = compiled(&package) else {
            continue; // reported by every_tools_crate_has_fresh_generated_files
        };
        for (_, found) in discovery.tools() {
            let entry = registry.builtin(&found.tool.name).unwrap_or_else(|| {
                panic!("{} missing from the {package} registry", found.tool.name)
            });
            assert_eq!(entry.toolset, found.tool.attr.toolset());
            assert_eq!(entry.description, found.tool.description);
        }
    }
}

#[test]
fn static_coercion_plans_match_the_schemas() {
    use hermes_runtime::CoercionPlan;
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

/// The schemas a registry reads from the build step's text are, byte for
/// byte, the ones the Rust types derive: every tool of every tools crate
/// has a text, each text is the derived schema as the build step writes it
/// (pretty JSON), and what is read from it prints as the derived one does.
#[test]
fn static_schemas_are_the_derived_ones_byte_for_byte() {
    // A registry over the tables gives each entry its text.
    let registries = [hermes_tools::registry(), hermes_tests::registry()];
    for (tables, registry) in [
        &hermes_tools::generated::TABLES,
        &hermes_tests::generated::TABLES,
    ]
    .into_iter()
    .zip(registries)
    {
        assert_eq!(
            tables.schemas.len(),
            tables.tools.len(),
            "{}: one schema text per tool",
            tables.krate
        );
        for entry in tables.tools.values() {
            let name = entry.name;
            let text = tables
                .schemas
                .get(name)
                .unwrap_or_else(|| panic!("no schema text for `{name}`: run `cargo xtask gen`"));
            let derived = entry.derived_parameters();
            assert_eq!(
                *text,
                serde_json::to_string_pretty(&derived).unwrap(),
                "the schema text of `{name}` is stale: run `cargo xtask gen`"
            );
            let read: Value = serde_json::from_str(text).unwrap();
            assert_eq!(read, derived, "`{name}`");
            for print in [serde_json::to_string, serde_json::to_string_pretty] {
                assert_eq!(print(&read).unwrap(), print(&derived).unwrap(), "`{name}`");
            }
            // What the registry serves.
            let served = registry.builtin(name).unwrap();
            assert_eq!(
                serde_json::to_string(served.parameters()).unwrap(),
                serde_json::to_string(&derived).unwrap(),
                "`{name}` as served"
            );
        }
        for name in tables.schemas.keys() {
            assert!(
                (tables.find_tool)(name).is_some(),
                "a schema text for `{name}`, which is no tool: run `cargo xtask gen`"
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
