//! `cargo hermes` through its binary, on tools crates outside this
//! workspace that build on the built-in tools (fixture crates written into
//! temporary folders), and on this workspace's own test tools.
//!
//! The fixture crates take `examples/agent`'s dependencies, profiles and
//! the workspace's lock file, and build into the workspace's target folder
//! (`CARGO_TARGET_DIR`): their dump crates then reuse what the example's
//! build compiled, and only the fixture itself is compiled anew.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// The target folder this test was built into (`target/debug/deps/cli-*`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_exe()
            .unwrap()
            .ancestors()
            .nth(3)
            .unwrap()
            .to_path_buf(),
    }
}

fn cargo_hermes(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-hermes"))
        .arg("hermes")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

fn lints(doc: &serde_json::Value) -> Vec<String> {
    doc["crates"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["lint"].as_str().map(str::to_owned))
        .collect()
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

/// A crate named `my-agent` with `examples/agent`'s manifest (its
/// dependencies pointed at this workspace, no binary), the workspace's lock
/// file and toolchain, `src/lib.rs` exporting the generated registry, and `tools` under
/// `src/tools/`.
fn crate_with(tools: &[(&str, &str)], toolsets: &str) -> Fixture {
    let dir = Fixture(tempfile::tempdir().unwrap());
    let root = dir.path();
    let ws = workspace();
    let manifest = std::fs::read_to_string(ws.join("examples/agent/Cargo.toml")).unwrap();
    let manifest = manifest
        .replace("name = \"hermes-example-agent\"", "name = \"my-agent\"")
        .replace("[[bin]]\nname = \"agent\"\npath = \"src/main.rs\"\n", "")
        .replace("\"../../", &format!("\"{}/", ws.display()));
    assert!(manifest.contains("my-agent") && !manifest.contains("[[bin]]"));
    std::fs::write(root.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(ws.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::copy(
        ws.join("rust-toolchain.toml"),
        root.join("rust-toolchain.toml"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src/tools")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub mod generated;\npub mod tools;\n",
    )
    .unwrap();
    for (file, text) in tools {
        std::fs::write(root.join("src/tools").join(file), text).unwrap();
    }
    std::fs::write(root.join("toolsets.toml"), toolsets).unwrap();
    dir
}

const WEATHER_TOOLSETS: &str = "builds_on = [\"hermes-tools\"]\ncore = [\"weather\"]\n\n[toolsets.weather]\ndescription = \"The weather\"\ntools = [\"weather\"]\n";

/// A fixture crate; dropped, it takes with it its dump crate and binaries
/// from the shared target folder (each fixture's folder is new, so each
/// has a dump crate of its own).
struct Fixture(tempfile::TempDir);

impl Fixture {
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let target = target_dir();
        let root = self.0.path().canonicalize().unwrap();
        let Ok(dumps) = std::fs::read_dir(target.join("hermes-dump")) else {
            return;
        };
        for dump in dumps.flatten() {
            let manifest =
                std::fs::read_to_string(dump.path().join("Cargo.toml")).unwrap_or_default();
            let name = dump.file_name().to_string_lossy().into_owned();
            let (Some(hash), true) = (
                name.rsplit('-').next(),
                manifest.contains(&format!("path = '{}'", root.display())),
            ) else {
                continue;
            };
            let bin = format!("hermes_dump_{hash}");
            for dir in [target.join("debug"), target.join("debug/deps")] {
                for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    if file.file_name().to_string_lossy().starts_with(&bin) {
                        let _ = std::fs::remove_file(file.path());
                    }
                }
            }
            let _ = std::fs::remove_dir_all(dump.path());
        }
    }
}

fn crate_dir() -> Fixture {
    crate_with(&[("weather.rs", TOOL)], WEATHER_TOOLSETS)
}

#[test]
fn gen_writes_then_check_finds_it_fresh_then_stale() {
    let dir = crate_dir();
    let root = dir.path();
    let out = cargo_hermes(root, &["gen", "--check"]);
    assert_eq!(out.status.code(), Some(1), "nothing generated yet");

    let out = cargo_hermes(root, &["gen"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let generated = std::fs::read_to_string(root.join("src/generated.rs")).unwrap();
    assert!(generated.contains("\"weather\"") && generated.contains("@generated"));
    // Phase 2: the crate was built, its plan and its schema's text rendered.
    let plans = std::fs::read_to_string(root.join("src/generated_plans.rs")).unwrap();
    assert!(plans.contains("(\"weather\", &PLAN_0)"), "{plans}");
    let schemas = std::fs::read_to_string(root.join("src/generated_schemas.rs")).unwrap();
    assert!(
        schemas.contains("(\"weather\", SCHEMA_0)") && schemas.contains("\"city\""),
        "{schemas}"
    );
    assert!(
        stderr(&out).contains("(1 coercion plans)") && stderr(&out).contains("(1 schemas)"),
        "{}",
        stderr(&out)
    );
    let out = cargo_hermes(root, &["gen", "--check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Nothing was written into the crate but the generated files.
    let mut files: Vec<String> = walk(root);
    files.sort();
    assert_eq!(
        files,
        [
            "Cargo.lock",
            "Cargo.toml",
            "rust-toolchain.toml",
            "src/generated.rs",
            "src/generated_plans.rs",
            "src/generated_schemas.rs",
            "src/lib.rs",
            "src/tools/mod.rs",
            "src/tools/weather.rs",
            "toolsets.toml"
        ]
    );

    // A parameter's type changes: the registry is the same, the plan and
    // the schema's text are stale.
    std::fs::write(
        root.join("src/tools/weather.rs"),
        TOOL.replace(
            "city: String,\n) -> String {\n    city",
            "city: u32,\n) -> String {\n    city.to_string()",
        ),
    )
    .unwrap();
    let out = cargo_hermes(root, &["gen", "--check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("generated.rs is up to date")
            && err.contains("generated_plans.rs is stale")
            && err.contains("generated_schemas.rs is stale")
            && err.contains("cargo hermes gen"),
        "{err}"
    );
    assert!(cargo_hermes(root, &["gen"]).status.success());
    let plans_now = std::fs::read_to_string(root.join("src/generated_plans.rs")).unwrap();
    assert_ne!(plans, plans_now);
    let schemas_now = std::fs::read_to_string(root.join("src/generated_schemas.rs")).unwrap();
    assert!(schemas_now.contains("\"integer\""), "{schemas_now}");

    // A new tool of the toolset: one new file, no other edit.
    std::fs::write(
        root.join("src/tools/forecast.rs"),
        TOOL.replace("fn weather", "fn forecast"),
    )
    .unwrap();
    let out = cargo_hermes(root, &["gen", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("generated.rs is stale")
            && err.contains("tools/mod.rs is stale")
            && err.contains("cargo hermes gen"),
        "{err}"
    );
    let out = cargo_hermes(root, &["gen"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let generated = std::fs::read_to_string(root.join("src/generated.rs")).unwrap();
    assert!(generated.contains("\"forecast\""));
    let plans = std::fs::read_to_string(root.join("src/generated_plans.rs")).unwrap();
    assert!(plans.contains("\"forecast\"") && plans.contains("\"weather\""));
    let schemas = std::fs::read_to_string(root.join("src/generated_schemas.rs")).unwrap();
    assert!(schemas.contains("\"forecast\"") && schemas.contains("\"weather\""));
    let modules = std::fs::read_to_string(root.join("src/tools/mod.rs")).unwrap();
    assert!(
        modules.contains("pub mod forecast;\npub mod weather;\n"),
        "{modules}"
    );

    // A hand-written src/tools/mod.rs is not overwritten.
    std::fs::write(root.join("src/tools/mod.rs"), "pub mod weather;\n").unwrap();
    let out = cargo_hermes(root, &["gen"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not generated"),
        "{}",
        stderr(&out)
    );
    let kept = std::fs::read_to_string(root.join("src/tools/mod.rs")).unwrap();
    assert_eq!(kept, "pub mod weather;\n");
}

/// Every file under `root`, relative, `target/` aside.
fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                if rel != "target" {
                    dirs.push(path);
                }
            } else {
                out.push(rel);
            }
        }
    }
    out
}

#[test]
fn check_tools_reports_across_the_crates_it_builds_on() {
    let dir = crate_dir();
    let root = dir.path();
    assert!(cargo_hermes(root, &["gen"]).status.success());
    let out = cargo_hermes(root, &["check-tools", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["crates"][0]["schema_level"], true, "{doc:#}");
    assert_eq!(doc["errors"], 0, "{doc:#}");

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
    let doc = json(&out);
    assert_eq!(lints(&doc), ["foreign-tool-in-description"], "{doc:#}");
    let out = cargo_hermes(root, &["check-tools"]);
    let text = stderr(&out);
    assert!(
        text.contains("src/tools/weather.rs") && text.contains("terminal"),
        "{text}"
    );

    // A tool added after the last `gen`: the built registry does not have
    // it, and the check says what to run.
    std::fs::write(root.join("src/tools/weather.rs"), TOOL).unwrap();
    std::fs::write(
        root.join("src/tools/forecast.rs"),
        TOOL.replace("fn weather", "fn forecast"),
    )
    .unwrap();
    let out = cargo_hermes(root, &["check-tools"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("no compiled schema for `forecast`")
            && text.contains("run `cargo hermes gen`"),
        "{text}"
    );
}

/// A tool whose parameter type says `not` (no provider dialect but the
/// plain one can express it), and whose options struct describes a field
/// with a built-in tool of another toolset: both only visible in the
/// compiled schema.
const PICK: &str = r#"
use hermes_macros::hermes_tool;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use std::borrow::Cow;

/// Any mode but `off`.
#[derive(serde::Deserialize)]
pub struct NotOff(pub String);

impl JsonSchema for NotOff {
    fn schema_name() -> Cow<'static, str> {
        "NotOff".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "not": { "const": "off" } })
    }
}

/// How to pick.
#[derive(serde::Deserialize, JsonSchema)]
pub struct Options {
    /// Pick again with terminal when unsure.
    pub retry: bool,
}

/// Pick a mode.
#[hermes_tool(toolset = "choice")]
pub fn pick(
    /// The mode.
    mode: NotOff,
    /// How to pick.
    options: Option<Options>,
) -> String {
    let _ = options.map(|o| o.retry);
    mode.0
}
"#;

const PICK_TOOLSETS: &str = "builds_on = [\"hermes-tools\"]\ncore = [\"pick\"]\n\n[toolsets.choice]\ndescription = \"Choices\"\ntools = [\"pick\"]\n";

#[test]
fn schema_level_lints_run_on_the_built_crate_across_the_composition() {
    let dir = crate_with(&[("pick.rs", PICK)], PICK_TOOLSETS);
    let root = dir.path();
    let out = cargo_hermes(root, &["gen"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cargo_hermes(root, &["check-tools", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["crates"][0]["schema_level"], true, "{doc:#}");
    let found = lints(&doc);
    // One per dialect that cannot express `not`, and the nested
    // description naming the built-in `terminal`.
    assert_eq!(
        found
            .iter()
            .filter(|l| *l == "dialect-incompatible")
            .count(),
        3,
        "{doc:#}"
    );
    assert_eq!(
        found
            .iter()
            .filter(|l| *l == "foreign-tool-in-description")
            .count(),
        1,
        "{doc:#}"
    );
    assert_eq!(found.len(), 4, "{doc:#}");

    let out = cargo_hermes(root, &["check-tools"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("error[dialect-incompatible]: the schema of `pick` does not rewrite into the `gemini` dialect")
            && text.contains("src/tools/pick.rs")
            && text.contains("/properties/options/properties/retry/description")
            && text.contains("check-tools (1 tool in 1 crate): 4 errors"),
        "{text}"
    );
}

#[test]
fn a_crate_that_does_not_build_keeps_its_source_diagnostics_and_says_why_the_rest_did_not_run() {
    // A source-level error: reported without building.
    let dir = crate_with(
        &[(
            "weather.rs",
            &TOOL.replace("/// The city.", "/// The city, as in ~/.hermes/cities."),
        )],
        WEATHER_TOOLSETS,
    );
    let root = dir.path();
    assert!(cargo_hermes(root, &["gen"]).status.success());
    let out = cargo_hermes(root, &["check-tools"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("error[literal-home-path]")
            && text.contains(
                "note: schema-level lints not run: fix the errors above first (the crate does not build with them)"
            )
            && !text.contains("reading the compiled schemas"),
        "{text}"
    );

    // Clean sources, but the crate does not compile: cargo's error, then
    // why the schema-level lints did not run; JSON says so too.
    std::fs::write(
        root.join("src/tools/weather.rs"),
        TOOL.replace("    city\n}", "    city + 1\n}"),
    )
    .unwrap();
    let out = cargo_hermes(root, &["check-tools"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("error[E0308]")
            && text.contains("error: schema-level lints not run: `my-agent` does not build")
            && text.contains("check-tools (1 tool in 1 crate): no problems found"),
        "{text}"
    );
    let out = cargo_hermes(root, &["check-tools", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    assert_eq!(doc["crates"][0]["schema_level"], false, "{doc:#}");
    assert!(
        doc["crates"][0]["schema_level_skipped"]
            .as_str()
            .unwrap()
            .contains("does not build"),
        "{doc:#}"
    );
    // `gen` writes the registry, then says the plans and schemas were not
    // rendered.
    let out = cargo_hermes(root, &["gen"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the coercion plans and schemas were not rendered"),
        "{}",
        stderr(&out)
    );

    // A crate without `pub mod generated` in a library is told what to add.
    std::fs::write(root.join("src/tools/weather.rs"), TOOL).unwrap();
    std::fs::write(root.join("src/lib.rs"), "mod generated;\nmod tools;\n").unwrap();
    let out = cargo_hermes(root, &["check-tools"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("`pub mod tools;` and `pub mod generated;` in src/lib.rs"),
        "{text}"
    );
}

/// This workspace's test tools: their checked-in plans are what `cargo
/// xtask gen` rendered (CI's `cargo xtask gen --check` keeps them so);
/// `cargo hermes`, through its own dump crate, finds them fresh.
#[test]
fn plans_are_the_ones_xtask_renders() {
    let tests = workspace().join("tests");
    let out = cargo_hermes(&tests, &["gen", "--check"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("generated_plans.rs is up to date")
            && err.contains("coercion plans)")
            && err.contains("generated_schemas.rs is up to date"),
        "{err}"
    );
    // And its whole contract holds there as under `cargo xtask check-tools`.
    let out = cargo_hermes(&tests, &["check-tools", "--format", "json"]);
    let doc = json(&out);
    assert!(out.status.success(), "{doc:#}");
    assert_eq!(doc["crates"][0]["schema_level"], true, "{doc:#}");
    assert_eq!(doc["errors"], 0, "{doc:#}");
}

#[test]
fn outside_a_crate_it_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_hermes(dir.path(), &["gen"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Cargo.toml"));
}
