//! `cargo xtask check-tools` through its binary on the fixture crates under
//! `tests/fixtures/lint-*`: each breaks one rule of the tool contract; the
//! exact diagnostics, text and JSON, are insta snapshots (`tests/snapshots/`,
//! refreshed the one way every snapshot of the workspace is: ARCHITECTURE.md,
//! `tests`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

/// Runs check-tools on a fixture: (exit code, text report, JSON report).
fn check(name: &str) -> (i32, String, String) {
    let run = |format: &str| {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["check-tools", "--format", format, "--crate"])
            .arg(fixture(name))
            .output()
            .unwrap()
    };
    let text = run("text");
    let json = run("json");
    assert_eq!(text.status.code(), json.status.code(), "{name}");
    (
        text.status.code().unwrap(),
        String::from_utf8(text.stderr).unwrap(),
        String::from_utf8(json.stdout).unwrap(),
    )
}

/// Snapshots both reports of a fixture and checks its exit status and that
/// every error is the one lint the fixture is about.
fn snapshot(name: &str, lint: Option<&str>) {
    let (code, text, json) = check(name);
    insta::assert_snapshot!(format!("{name}.txt"), text);
    insta::assert_snapshot!(format!("{name}.json"), json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let errors: Vec<&str> = doc["crates"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["lint"].as_str().unwrap_or("(none)"))
        .collect();
    match lint {
        Some(lint) => {
            assert_eq!(code, 1, "{text}");
            assert!(!errors.is_empty(), "{text}");
            assert!(errors.iter().all(|l| *l == lint), "{errors:?}\n{text}");
        }
        None => {
            assert_eq!(code, 0, "{text}");
            assert!(errors.is_empty(), "{text}");
        }
    }
}

#[test]
fn a_clean_crate_passes() {
    snapshot("lint-clean", None);
}

#[test]
fn foreign_tool_in_description() {
    snapshot("lint-foreign-tool", Some("foreign-tool-in-description"));
}

#[test]
fn tool_not_in_toolset() {
    snapshot("lint-not-in-toolset", Some("tool-not-in-toolset"));
}

#[test]
fn unknown_toolset_entry() {
    snapshot("lint-unknown-entry", Some("unknown-toolset-entry"));
}

#[test]
fn duplicate_tool_name() {
    snapshot("lint-duplicate-name", Some("duplicate-tool-name"));
}

#[test]
fn include_cycle() {
    snapshot("lint-include-cycle", Some("include-cycle"));
}

#[test]
fn instructional_pagination() {
    snapshot("lint-instructional", Some("instructional-pagination"));
}

#[test]
fn literal_home_path() {
    snapshot("lint-home-path", Some("literal-home-path"));
}

#[test]
fn invalid_schema() {
    snapshot("lint-invalid-schema", Some("invalid-schema"));
}

#[test]
fn requires_env_without_check() {
    snapshot("lint-requires-env", Some("requires-env-without-check"));
}

#[test]
fn read_only_and_destructive() {
    snapshot(
        "lint-read-only-destructive",
        Some("read-only-and-destructive"),
    );
}

#[test]
fn concurrency_safe_write() {
    snapshot(
        "lint-concurrency-safe-write",
        Some("concurrency-safe-write"),
    );
}

#[test]
fn undocumented_parameter() {
    snapshot("lint-undocumented", Some("undocumented-parameter"));
}

#[test]
fn dialect_incompatible() {
    snapshot("lint-dialect", Some("dialect-incompatible"));
}

#[test]
fn allowed_lints_are_not_errors_and_unused_allows_warn() {
    snapshot("lint-allow", None);
    let (_, text, _) = check("lint-allow");
    assert!(text.contains("warning[unused-allow]"), "{text}");
    assert!(!text.contains("foreign-tool-in-description"), "{text}");
}

#[test]
fn schemas_can_be_given_explicitly() {
    // The source-level fixture lint-clean has schemas.json; pointing
    // --schemas at another crate's file reports what does not match.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["check-tools", "--crate"])
        .arg(fixture("lint-clean"))
        .arg("--schemas")
        .arg(fixture("lint-allow/schemas.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("no compiled schema for `notes_read`") || text.contains("notes_write"),
        "{text}"
    );
}

#[test]
fn bad_options_exit_2() {
    for args in [
        &["check-tools", "--format", "xml"][..],
        &["check-tools", "--bogus"][..],
        &["check-tools", "--crate"][..],
        &["gen", "--bogus"][..],
        &["gen", "--crate"][..],
        &["bench-check", "--sizes", "100,x"][..],
        &["no-such-task"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn the_benchmark_crate_passes() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["bench-check", "--sizes", "30"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("| 30 |"), "{stdout}");
}
