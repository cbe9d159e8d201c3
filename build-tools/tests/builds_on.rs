//! A tools crate that builds on the built-in tools (`builds_on =
//! ["hermes-tools"]`): its table may name their tools and toolsets, its
//! tools join their toolsets, its core extends their bundles, and the
//! lints look across both crates.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use hermes_build_tools::{lints, render_registry};

fn builtins() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .canonicalize()
        .unwrap()
}

/// A crate with `tools` (file name → source) and `toolsets` (toolsets.toml).
fn user_crate(tools: &[(&str, &str)], toolsets: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"my-agent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nhermes-tools = {{ path = {:?} }}\n",
            builtins().display().to_string()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src/tools")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    for (name, src) in tools {
        std::fs::write(root.join("src/tools").join(name), src).unwrap();
    }
    std::fs::write(root.join("toolsets.toml"), toolsets).unwrap();
    dir
}

const WEATHER: &str = r#"
use hermes_macros::hermes_tool;
/// Today's weather for a city.
#[hermes_tool(toolset = "weather")]
pub async fn weather(
    /// The city.
    city: String,
) -> String {
    city
}
"#;

const WORD_COUNT: &str = r#"
use hermes_macros::hermes_tool;
/// Counts the words of a text.
#[hermes_tool(toolset = "file")]
pub async fn word_count(
    /// The text.
    text: String,
) -> usize {
    text.split_whitespace().count()
}
"#;

const TABLE: &str = r#"
builds_on = ["hermes-tools"]
core = ["weather"]

[toolsets.weather]
description = "The weather"
tools = ["weather"]

[toolsets.outdoors]
description = "Weather and the web"
includes = ["weather", "web"]
tools = ["web_search"]
"#;

#[test]
fn a_crate_extends_the_toolsets_it_builds_on() {
    let dir = user_crate(
        &[("weather.rs", WEATHER), ("word_count.rs", WORD_COUNT)],
        TABLE,
    );
    let (_, rendered) = render_registry(dir.path()).unwrap_or_else(|d| panic!("{d:#?}"));
    let source = rendered.registry;
    // `word_count` names the built-in toolset `file`: it joins it, in an
    // extension of `file` with no description (the built-ins' is kept).
    let file = source.find("name: \"file\"").expect(&source);
    let rest = &source[file..];
    let end = rest.find("StaticToolset {").unwrap_or(rest.len());
    assert!(rest[..end].contains("\"word_count\""), "{}", &rest[..end]);
    assert!(
        rest[..end].contains("description: \"\""),
        "{}",
        &rest[..end]
    );
    // The core addition reaches the built-ins' platform bundles.
    let cli = source.find("name: \"hermes-cli\"").expect(&source);
    assert!(source[cli..].contains("\"weather\""));
    let checked = lints::check_sources_of(dir.path());
    let errors: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn unknown_toolsets_and_tools_are_errors() {
    let dir = user_crate(
        &[("weather.rs", WEATHER)],
        r#"
builds_on = ["hermes-tools"]
[toolsets.weather]
description = "The weather"
tools = ["weather", "no_such_tool"]
includes = ["no_such_toolset"]

[toolsets.undescribed]
tools = ["weather"]
"#,
    );
    let errors = render_registry(dir.path()).unwrap_err();
    let text: Vec<String> = errors.iter().map(|d| d.message.clone()).collect();
    let all = text.join("\n");
    assert!(all.contains("no_such_tool"), "{all}");
    assert!(all.contains("no_such_toolset"), "{all}");
    assert!(
        all.contains("toolset `undescribed` needs a description"),
        "{all}"
    );
}

#[test]
fn a_package_it_does_not_depend_on_is_an_error_on_the_entry() {
    let dir = user_crate(
        &[("weather.rs", WEATHER)],
        "builds_on = [\"hermes-nothing\"]\n[toolsets.weather]\ndescription = \"w\"\ntools = [\"weather\"]\n",
    );
    let errors = render_registry(dir.path()).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].message.contains("hermes-nothing"), "{errors:#?}");
    assert_eq!(errors[0].line, 1);
}

#[test]
fn lints_look_across_the_composition() {
    let mentions = r#"
use hermes_macros::hermes_tool;
/// The weather; run terminal to see more.
#[hermes_tool(toolset = "weather")]
pub async fn weather(
    /// The city.
    city: String,
) -> String {
    city
}

/// Reads a file, again.
#[hermes_tool(toolset = "weather")]
pub async fn read_file(
    /// The path.
    path: String,
) -> String {
    path
}
"#;
    let dir = user_crate(
        &[("weather.rs", mentions)],
        "builds_on = [\"hermes-tools\"]\n[toolsets.weather]\ndescription = \"w\"\ntools = [\"weather\", \"read_file\"]\n",
    );
    let checked = lints::check_sources_of(dir.path());
    let lints: Vec<(&str, &str)> = checked
        .diagnostics
        .iter()
        .map(|d| (d.lint.unwrap_or(""), d.message.as_str()))
        .collect();
    assert!(
        lints
            .iter()
            .any(|(l, m)| *l == "foreign-tool-in-description"
                && m.contains("`terminal`, a tool of toolset `terminal`")),
        "{lints:#?}"
    );
    assert!(
        lints.iter().any(|(l, m)| *l == "duplicate-tool-name"
            && m.contains("`read_file`, a tool of `hermes-tools`")),
        "{lints:#?}"
    );
}
