//! The workspace xtask runs in, its tools crates, and the parameters their
//! compiled registries dump: what `gen` and `check-tools` both start from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cargo_hermes::dump::{self, Schemas};

/// The workspace xtask runs in: the nearest folder, from the current
/// directory upward, whose `Cargo.toml` declares `[workspace]` (cargo runs
/// `cargo xtask` where it was typed). Never the path compiled into the
/// binary: a copy of the tree built into the same target folder must check
/// its own sources. Found once per run.
pub(crate) fn workspace_root() -> Result<PathBuf, String> {
    static ROOT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?;
        find_workspace(&cwd)
    })
    .clone()
}

/// The nearest ancestor of `start` (itself included) whose `Cargo.toml`
/// has a `[workspace]` table.
fn find_workspace(start: &Path) -> Result<PathBuf, String> {
    for dir in start.ancestors() {
        let manifest = dir.join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e| format!("cannot parse {}: {e}", manifest.display()))?;
        if table.contains_key("workspace") {
            return Ok(dir.to_path_buf());
        }
    }
    Err(format!(
        "no Cargo.toml with [workspace] in {} or above: run cargo xtask inside the workspace",
        start.display()
    ))
}

/// The workspace's tools crates (folder, package): the built-in tools and
/// the test tools. Each has an `examples/dump_parameters.rs`, which `gen`
/// runs to compile the static coercion plans.
pub(crate) const TOOLS_CRATES: &[(&str, &str)] =
    &[("tools", "hermes-tools"), ("tests", "hermes-tests")];

/// The example target that dumps a package's parameters. Example names
/// must differ between packages (they share `target/*/examples/`).
fn dump_example(package: &str) -> String {
    format!("dump_{}", package.replace('-', "_"))
}

/// Compiles the tools crates and runs `package`'s `dump_parameters`
/// example: `{tool name: parameters}` of every tool in its compiled registry.
pub(crate) fn dump_parameters(package: &str) -> Result<Schemas, String> {
    let example = dump_example(package);
    // Built once per run: phase 1 of `gen` has written every registry by
    // then, and `check-tools` writes none.
    static BUILT: OnceLock<Result<BTreeMap<String, PathBuf>, String>> = OnceLock::new();
    let exe = BUILT
        .get_or_init(build_dump_examples)
        .as_ref()
        .map_err(Clone::clone)?
        .get(&example)
        .cloned()
        .ok_or_else(|| format!("cargo built no example `{example}` for {package}"))?;
    dump::run_dump(&exe, &workspace_root()?)
}

/// Builds the dump example of every tools crate in one cargo invocation and
/// returns their executables by example name. `--workspace` makes cargo
/// unify dependency features the way `cargo test --workspace` does, so the
/// two share every compiled artifact instead of building the tree twice.
fn build_dump_examples() -> Result<BTreeMap<String, PathBuf>, String> {
    let mut command = dump::cargo_command();
    command.args([
        "build",
        "--quiet",
        "--workspace",
        "--message-format=json-render-diagnostics",
    ]);
    for (_, package) in TOOLS_CRATES {
        command.args(["--example", &dump_example(package)]);
    }
    let output = command
        .current_dir(workspace_root()?)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building the dump_parameters examples failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(dump::executables(&output.stdout))
}
