//! `cargo xtask`: the project's tasks. Run it bare to list them.

mod bench;
mod check;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use clap::{Args, CommandFactory, Parser, Subcommand};

use cargo_hermes::dump::{self, Schemas};

/// The project's tasks.
#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    disable_version_flag = true
)]
struct Cli {
    #[command(subcommand)]
    task: Option<Task>,
}

#[derive(Subcommand)]
enum Task {
    /// Discover every `#[hermes_tool]` function of a tools crate and write its
    /// modules, src/tools/mod.rs, its registry, src/generated.rs, and its
    /// coercion plans (default: every
    /// tools crate of the workspace, tools/ and tests/).
    Gen(GenArgs),
    /// Check the tool contract: every lint of build-tools/src/lints/.
    /// Default: every tools crate of the workspace, with the schemas their
    /// `dump_parameters` example prints. Exits 1 on any error.
    CheckTools(check::CheckArgs),
    /// Time check-tools on generated crates of that many tools.
    BenchCheck(bench::BenchArgs),
}

#[derive(Args)]
struct GenArgs {
    /// Write nothing; fail when a checked-in file is stale.
    #[arg(long)]
    check: bool,
    /// One tools crate (its registry only: no plans) instead of the
    /// workspace's.
    #[arg(long = "crate", value_name = "DIR")]
    one_crate: Option<PathBuf>,
}

fn main() -> ExitCode {
    match Cli::parse().task {
        Some(Task::Gen(args)) => gen(args),
        Some(Task::CheckTools(args)) => check::check_tools(args),
        Some(Task::BenchCheck(args)) => bench::bench_check(args),
        None => {
            // Bare `cargo xtask` lists the tasks.
            match Cli::command().print_help() {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
    }
}

/// The workspace xtask runs in: the nearest folder, from the current
/// directory upward, whose `Cargo.toml` declares `[workspace]` (cargo runs
/// `cargo xtask` where it was typed). Never the path compiled into the
/// binary: a copy of the tree built into the same target folder must check
/// its own sources. Found once per run.
fn workspace_root() -> Result<PathBuf, String> {
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
const TOOLS_CRATES: &[(&str, &str)] = &[("tools", "hermes-tools"), ("tests", "hermes-tests")];

/// The example target that dumps a package's parameters. Example names
/// must differ between packages (they share `target/*/examples/`).
fn dump_example(package: &str) -> String {
    format!("dump_{}", package.replace('-', "_"))
}

fn gen(GenArgs { check, one_crate }: GenArgs) -> ExitCode {
    let crates: Vec<(PathBuf, Option<&str>)> = match one_crate {
        Some(dir) => vec![(dir, None)],
        None => match workspace_root() {
            Ok(root) => TOOLS_CRATES
                .iter()
                .map(|(dir, package)| (root.join(dir), Some(*package)))
                .collect(),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };

    // Phase 1 for every crate first: phase 2 compiles them all at once.
    let mut status = ExitCode::SUCCESS;
    let mut fresh = Vec::new();
    for (crate_root, package) in &crates {
        if gen_crate(crate_root, check) {
            fresh.push((crate_root, package));
        } else {
            status = ExitCode::FAILURE;
        }
    }
    for (crate_root, package) in fresh {
        if let Some(package) = package {
            if !gen_plans(crate_root, package, check) {
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}

/// Compiles the tools crates and runs `package`'s `dump_parameters`
/// example: `{tool name: parameters}` of every tool in its compiled registry.
fn dump_parameters(package: &str) -> Result<Schemas, String> {
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

/// Phase 2: compile the crate, dump every tool's parameters, render the
/// static coercion plans from them (the library code `cargo hermes gen`
/// runs on the schemas of its dump crate).
fn gen_plans(crate_root: &Path, package: &str, check: bool) -> bool {
    cargo_hermes::gen_plans(
        crate_root,
        dump_parameters(package),
        check,
        "cargo xtask gen",
    )
}

/// Phase 1: discover and write the registry (the library code `cargo
/// hermes gen` runs). `false` on failure.
fn gen_crate(crate_root: &Path, check: bool) -> bool {
    cargo_hermes::gen_crate(crate_root, check, "cargo xtask gen")
}
