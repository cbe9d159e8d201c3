//! `cargo xtask`: the project's tasks. Run it bare to list them.

mod bench;
mod check;
mod load;
mod workspace;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

use workspace::{dump_parameters, workspace_root, TOOLS_CRATES};

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
    /// Load `serve --mcp --http` on 127.0.0.1: calls/s and p50/p99 of
    /// `read_file` and `terminal true`, one host direct and 1 or 2 hosts
    /// behind HAProxy (deploy/mcp-hosts), and with a host killed halfway.
    McpLoad(load::LoadArgs),
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
        Some(Task::McpLoad(args)) => load::mcp_load(args),
        None => {
            // Bare `cargo xtask` lists the tasks.
            match Cli::command().print_help() {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
    }
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
            if let Some((_, file)) = PYTHON_MODULES.iter().find(|(p, _)| p == package) {
                if !gen_python(crate_root, package, file, check) {
                    status = ExitCode::FAILURE;
                }
            }
        }
    }
    status
}

/// The Python modules of `execute_code` (package, file under its root):
/// a function per tool of the package, for scripts to call it by.
const PYTHON_MODULES: &[(&str, &str)] =
    &[("hermes-tools", "src/tools/execute_code/hermes_tools.py")];

/// Renders (or with `check`, compares) the Python module of `package`'s
/// tools: each tool's description from discovery, its parameters from the
/// compiled schemas (the dump phase 2 built already).
fn gen_python(crate_root: &Path, package: &str, file: &str, check: bool) -> bool {
    let discovery = match hermes_build_tools::discover(crate_root) {
        Ok(d) => d,
        Err(diagnostics) => {
            diagnostics.iter().for_each(|d| eprint!("{d}"));
            return false;
        }
    };
    let parameters = match dump_parameters(package) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}\nerror: {file} was not rendered");
            return false;
        }
    };
    let mut tools = std::collections::BTreeMap::new();
    for (_, found) in discovery.tools() {
        let name = &found.tool.name;
        let Some(params) = parameters.get(name) else {
            eprintln!("error: `{name}` has no compiled schema; {file} was not rendered");
            return false;
        };
        tools.insert(
            name.clone(),
            hermes_build_tools::PyTool {
                description: found.tool.description.clone(),
                parameters: params.clone(),
            },
        );
    }
    let n = tools.len();
    match hermes_build_tools::render_python_module(&tools) {
        Ok(source) => cargo_hermes::ensure(
            &crate_root.join(file),
            &source,
            check,
            &format!("the Python functions of {n} tools"),
            "cargo xtask gen",
        ),
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
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
