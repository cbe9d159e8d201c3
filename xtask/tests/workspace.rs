//! xtask finds the workspace where it runs (the nearest `Cargo.toml` with
//! `[workspace]` from the current directory up), not from the path compiled
//! into its binary: the binary built from this tree, run inside a copy,
//! checks the copy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::copy_dir;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

/// A workspace whose two tools crates (`tools/`, `tests/`, the folders
/// xtask checks) are copies of the clean lint fixture.
fn copied_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
    for member in ["tools", "tests"] {
        copy_dir(&fixture("lint-clean"), &dir.path().join(member));
    }
    dir
}

fn xtask(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn check_tools_checks_the_workspace_it_runs_in() {
    let ws = copied_workspace();
    let schemas = ws.path().join("tools/schemas.json");
    let schemas = schemas.to_str().unwrap();
    // From a folder below the root: the search goes up to `[workspace]`,
    // past `tools/`, whose crate has no Cargo.toml of its own here.
    let below = ws.path().join("tools/src/tools");

    let clean = xtask(&["check-tools", "--schemas", schemas], &below);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(stderr(&clean).contains("in 2 crates"), "{}", stderr(&clean));

    // Break the copy's tools crate only: a literal home path in a
    // description. This tree's own crates stay clean, so a failure can only
    // come from reading the copy.
    let notes = ws.path().join("tools/src/tools/notes.rs");
    let text = std::fs::read_to_string(&notes).unwrap();
    let broken = text.replacen("{HERMES_HOME}/notes", "~/.hermes/notes", 1);
    assert_ne!(text, broken);
    std::fs::write(&notes, broken).unwrap();

    let dirty = xtask(&["check-tools", "--schemas", schemas], &below);
    let report = stderr(&dirty);
    assert_eq!(dirty.status.code(), Some(1), "{report}");
    assert!(report.contains("literal-home-path"), "{report}");
    assert!(report.contains("tools/src/tools/notes.rs"), "{report}");
    assert!(!report.contains("tests/src/tools/notes.rs"), "{report}");
}

#[test]
fn gen_checks_the_workspace_it_runs_in() {
    // The copies have no generated registry yet: `gen --check` calls each
    // stale at the copy's path (and stops before compiling anything).
    let ws = copied_workspace();
    let out = xtask(&["gen", "--check"], ws.path());
    let report = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    for member in ["tools", "tests"] {
        let generated = ws.path().join(member).join("src/generated.rs");
        assert!(
            report.contains(&format!("error: {} is stale", generated.display())),
            "{report}"
        );
    }
    assert!(!ws.path().join("tools/src/generated.rs").exists());
}

#[test]
fn outside_a_workspace_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for task in ["check-tools", "gen"] {
        let out = xtask(&[task], dir.path());
        let report = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{task}: {report}");
        assert!(
            report.contains("no Cargo.toml with [workspace]"),
            "{task}: {report}"
        );
    }
}

/// The tools crates' build scripts run only parsing and the source-level
/// lints: their copy of `hermes-build-tools` (no features) pulls in neither
/// the runtime nor what the runtime pulls in.
#[test]
fn build_scripts_do_not_pull_the_runtime() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    for heavy in ["hermes-runtime", "tokio", "schemars", "jsonschema"] {
        // Who depends on `heavy`, in the tools crates' normal and build
        // graphs: hermes-build-tools is only ever a build dependency there.
        let out = Command::new(&cargo)
            .args([
                "tree",
                "--offline",
                "-e",
                "normal,build",
                "--prefix",
                "none",
            ])
            .args(["-p", "hermes-tools", "-p", "hermes-tests", "-i", heavy])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let tree = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            !tree.lines().any(|l| l.starts_with("hermes-build-tools ")),
            "a build script pulls in {heavy}:\n{tree}"
        );
    }
}
