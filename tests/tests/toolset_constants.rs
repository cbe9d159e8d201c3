//! The generated `toolset` constants: code enables toolsets by constant, so
//! a misspelt name fails to compile instead of resolving to nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::Registry;
use hermes_tests::generated::{toolset, TOOLSET_NAMES};

#[test]
fn every_constant_names_a_toolset_the_registry_knows() {
    let reg = Registry::new(&hermes_tests::generated::TABLES);
    for name in TOOLSET_NAMES {
        assert!(reg.toolsets().validate_toolset(name), "{name}");
    }
    // Declared toolsets and bundles, plus the alias `lookup`.
    let mut declared = reg.toolsets().toolset_names();
    declared.push(toolset::LOOKUP.to_owned());
    declared.sort();
    assert_eq!(declared, TOOLSET_NAMES);
}

#[test]
fn a_session_enables_toolsets_by_constant() {
    let reg = Registry::new(&hermes_tests::generated::TABLES);
    let dir = tempfile::tempdir().unwrap();
    let profile = hermes_runtime::Profile::new(dir.path());
    let defs = reg.get_tool_definitions(Some(&[toolset::NOTES]), &[], &profile);
    assert_eq!(defs.names(), ["notes_read", "notes_write"]);
    assert!(defs.unknown.is_empty());
    // A bundle's constant enables the bundle: core plus its extras.
    let cli = reg.toolsets().resolve_toolset(toolset::HERMES_CLI);
    assert!(cli.iter().any(|t| t == "gated_search"), "{cli:?}");
    assert!(cli.iter().any(|t| t == "echo"), "{cli:?}");
    // The built-in tools' constants enable their toolsets too.
    let file = hermes_tools::registry()
        .toolsets()
        .resolve_toolset(hermes_tools::generated::toolset::FILE);
    assert!(file.iter().any(|t| t == "read_file"), "{file:?}");
}
