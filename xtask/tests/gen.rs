//! `cargo xtask gen` through its binary, on fixture crates under `tests/fixtures/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::copy_dir;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

/// Copies a fixture into a temp dir, so generation never writes into the repo.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    dir
}

fn xtask(args: &[&str], root: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .arg("--crate")
        .arg(root)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn finds_files_and_folder_tools_without_a_list() {
    let dir = copy_fixture("gen-ok");
    let (ok, stderr) = xtask(&["gen"], dir.path());
    assert!(ok, "{stderr}");
    let generated = std::fs::read_to_string(dir.path().join("src/generated.rs")).unwrap();
    assert!(generated.starts_with("// @generated"), "{generated}");
    // The module tree is declared where the folders are, in
    // src/tools/mod.rs: a flat file and a folder (its root the folder's
    // tool.rs) are modules of `crate::tools`; the helper is not.
    let modules = std::fs::read_to_string(dir.path().join("src/tools/mod.rs")).unwrap();
    assert!(modules.starts_with("// @generated"), "{modules}");
    assert!(modules.contains("\npub mod alpha;\n"), "{modules}");
    assert!(
        modules.contains("#[path = \"beta/tool.rs\"]\npub mod beta;\n"),
        "{modules}"
    );
    assert!(!modules.contains("helper"), "{modules}");
    // The registry only indexes: it declares no tool module.
    assert!(
        !generated.contains("mod alpha") && !generated.contains("tool.rs"),
        "{generated}"
    );
    assert!(
        generated.contains("(\"hello\", &crate::tools::alpha::__HERMES_TOOL_hello)"),
        "{generated}"
    );
    assert!(
        generated.contains("(\"add\", &crate::tools::beta::__HERMES_TOOL_add)"),
        "{generated}"
    );
    // The toolset table lists each tool under its toolset.
    let flat: String = generated.split_whitespace().collect();
    assert!(
        flat.contains(r#"name:"math",description:"Arithmetic",tools:&["add"],"#),
        "{generated}"
    );

    // Running again changes nothing, and --check agrees it is fresh.
    let (ok, stderr) = xtask(&["gen", "--check"], dir.path());
    assert!(ok, "{stderr}");
    assert!(stderr.contains("up to date"), "{stderr}");
}

#[test]
fn check_fails_when_a_tool_was_added_after_generation() {
    let dir = copy_fixture("gen-ok");
    assert!(xtask(&["gen"], dir.path()).0);
    std::fs::write(
        dir.path().join("src/tools/late.rs"),
        "use hermes_macros::hermes_tool;\n/// Late.\n#[hermes_tool(toolset = \"x\")]\npub fn late() -> u8 { 1 }\n",
    )
    .unwrap();
    let (ok, stderr) = xtask(&["gen", "--check"], dir.path());
    assert!(!ok);
    assert!(stderr.contains("is stale"), "{stderr}");
    assert!(stderr.contains("cargo xtask gen"), "{stderr}");
}

#[test]
fn duplicate_names_name_both_files_and_lines() {
    let dir = copy_fixture("gen-duplicate");
    let (ok, stderr) = xtask(&["gen"], dir.path());
    assert!(!ok);
    assert!(stderr.contains("duplicate tool name `ping`"), "{stderr}");
    assert!(stderr.contains("src/tools/two.rs:4:37"), "{stderr}");
    assert!(stderr.contains("src/tools/one.rs:5:8"), "{stderr}");
    assert!(!dir.path().join("src/generated.rs").exists());
    assert!(!dir.path().join("src/tools/mod.rs").exists());
}

#[test]
fn a_tool_in_a_helper_file_is_an_error() {
    let dir = copy_fixture("gen-helper-tool");
    let (ok, stderr) = xtask(&["gen"], dir.path());
    assert!(!ok);
    assert!(stderr.contains("`hidden` is in a helper file"), "{stderr}");
    assert!(stderr.contains("src/tools/gamma/extra.rs:9:8"), "{stderr}");
}

#[test]
fn attribute_errors_are_the_macros_errors_with_a_location() {
    let dir = copy_fixture("gen-bad-attr");
    let (ok, stderr) = xtask(&["gen"], dir.path());
    assert!(!ok);
    assert!(stderr.contains("unknown key `colour`"), "{stderr}");
    assert!(stderr.contains("src/tools/bad.rs:4:30"), "{stderr}");
}

#[test]
fn bare_xtask_lists_the_tasks() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask")).output().unwrap();
    assert!(out.status.success());
    let listing = String::from_utf8_lossy(&out.stdout);
    for task in ["gen", "check-tools", "bench-check"] {
        assert!(listing.contains(&format!("\n  {task} ")), "{listing}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["gen", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--check") && help.contains("--crate <DIR>"),
        "{help}"
    );
}

#[test]
fn toolset_table_errors_have_positions_and_suggestions() {
    let dir = copy_fixture("gen-bad-toolsets");
    let (ok, stderr) = xtask(&["gen"], dir.path());
    assert!(!ok);
    assert!(stderr.contains("did you mean `hello`?"), "{stderr}");
    assert!(stderr.contains("toolsets.toml:6:"), "{stderr}");
    assert!(
        stderr.contains("greet -> polite -> greet") || stderr.contains("polite -> greet -> polite"),
        "{stderr}"
    );
}

#[test]
fn a_crate_without_a_toolset_table_is_an_error() {
    let dir = copy_fixture("gen-ok");
    std::fs::remove_file(dir.path().join("toolsets.toml")).unwrap();
    let (ok, stderr) = xtask(&["gen"], dir.path());
    assert!(!ok);
    assert!(stderr.contains("toolsets.toml"), "{stderr}");
}
