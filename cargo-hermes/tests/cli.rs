//! `cargo hermes` through its binary, on a tools crate outside this
//! workspace that builds on the built-in tools.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn builtins() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

fn cargo_hermes(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-hermes"))
        .arg("hermes")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

const TOOL: &str = r#"
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

fn crate_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"my-agent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nhermes-tools = {{ path = {:?} }}\n",
            builtins()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src/tools")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join("src/tools/weather.rs"), TOOL).unwrap();
    std::fs::write(
        root.join("toolsets.toml"),
        "builds_on = [\"hermes-tools\"]\ncore = [\"weather\"]\n\n[toolsets.weather]\ndescription = \"The weather\"\ntools = [\"weather\"]\n",
    )
    .unwrap();
    dir
}

#[test]
fn gen_writes_then_check_finds_it_fresh_then_stale() {
    let dir = crate_dir();
    let root = dir.path();
    let out = cargo_hermes(root, &["gen", "--check"]);
    assert_eq!(out.status.code(), Some(1), "nothing generated yet");

    let out = cargo_hermes(root, &["gen"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = std::fs::read_to_string(root.join("src/generated.rs")).unwrap();
    assert!(generated.contains("\"weather\"") && generated.contains("@generated"));
    assert!(root.join("src/generated_plans.rs").is_file());
    assert!(cargo_hermes(root, &["gen", "--check"]).status.success());

    // A new tool of the toolset: one new file, no other edit.
    std::fs::write(
        root.join("src/tools/forecast.rs"),
        TOOL.replace("fn weather", "fn forecast"),
    )
    .unwrap();
    let out = cargo_hermes(root, &["gen", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is stale") && err.contains("cargo hermes gen"),
        "{err}"
    );
    assert!(cargo_hermes(root, &["gen"]).status.success());
    let generated = std::fs::read_to_string(root.join("src/generated.rs")).unwrap();
    assert!(generated.contains("\"forecast\""));
}

#[test]
fn check_tools_reports_across_the_crates_it_builds_on() {
    let dir = crate_dir();
    let root = dir.path();
    assert!(cargo_hermes(root, &["check-tools"]).status.success());
    std::fs::write(
        root.join("src/tools/weather.rs"),
        TOOL.replace(
            "Today's weather for a city.",
            "Today's weather; then call terminal.",
        ),
    )
    .unwrap();
    let out = cargo_hermes(root, &["check-tools", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lints: Vec<&str> = doc["crates"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["lint"].as_str())
        .collect();
    assert_eq!(lints, ["foreign-tool-in-description"], "{doc:#}");
    let out = cargo_hermes(root, &["check-tools"]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("src/tools/weather.rs") && text.contains("terminal"),
        "{text}"
    );
}

#[test]
fn outside_a_crate_it_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_hermes(dir.path(), &["gen"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Cargo.toml"));
}
