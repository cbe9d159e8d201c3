//! `cargo xtask`: the project's tasks. Run it bare to list them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::collections::BTreeMap;
use std::process::Command;

use hermes_build_tools::{
    ensure_file, render_plans, render_registry, FileState, GENERATED_FILE, PLANS_FILE,
};

const USAGE: &str = "\
cargo xtask <task>

Tasks:
  gen [--check] [--crate DIR]   Discover every #[hermes_tool] function of a tools
                                crate and write its registry, src/generated.rs
                                (default: every tools crate of the workspace,
                                tools/ and tests/). With --check, write nothing
                                and fail when a checked-in registry is stale.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => gen(&args[1..]),
        Some("help" | "-h" | "--help") | None => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("error: unknown task `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The workspace's tools crates (folder, package): the built-in tools and
/// the test tools. Each has an `examples/dump_parameters.rs`, which `gen`
/// runs to compile the static coercion plans.
const TOOLS_CRATES: &[(&str, &str)] = &[("tools", "hermes-tools"), ("tests", "hermes-tests")];

fn gen(args: &[String]) -> ExitCode {
    let mut check = false;
    let mut crates: Vec<(PathBuf, Option<&str>)> = TOOLS_CRATES
        .iter()
        .map(|(dir, package)| (workspace_root().join(dir), Some(*package)))
        .collect();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--crate" => match iter.next() {
                Some(dir) => crates = vec![(PathBuf::from(dir), None)],
                None => {
                    eprintln!("error: --crate needs a directory");
                    return ExitCode::from(2);
                }
            },
            other => {
                eprintln!("error: unknown option `{other}` for `gen`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }

    let mut status = ExitCode::SUCCESS;
    for (crate_root, package) in &crates {
        if !gen_crate(crate_root, check) {
            status = ExitCode::FAILURE;
            continue;
        }
        if let Some(package) = package {
            if !gen_plans(crate_root, package, check) {
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}

/// Writes (or checks) `file`, reporting what happened. `false` on failure.
fn ensure(target: &Path, contents: &str, check: bool, what: &str) -> bool {
    match ensure_file(target, contents, check) {
        Ok(FileState::Unchanged) => {
            eprintln!("{} is up to date ({what})", target.display());
            true
        }
        Ok(FileState::Written) => {
            eprintln!("wrote {} ({what})", target.display());
            true
        }
        Ok(FileState::Stale) => {
            eprintln!(
                "error: {} is stale: the tools changed since it was generated\n  run `cargo xtask gen` and commit the result",
                target.display()
            );
            false
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", target.display());
            false
        }
    }
}

/// Phase 2: compile the crate, dump every tool's parameters, render the
/// static coercion plans from them.
fn gen_plans(crate_root: &Path, package: &str, check: bool) -> bool {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--package",
            package,
            "--example",
            "dump_parameters",
        ])
        .current_dir(workspace_root())
        .output();
    let output = match output {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!(
                "error: `cargo run -p {package} --example dump_parameters` failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            return false;
        }
        Err(e) => {
            eprintln!("error: cannot run cargo: {e}");
            return false;
        }
    };
    let parameters: BTreeMap<String, serde_json::Value> =
        match serde_json::from_slice(&output.stdout) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: dump_parameters of {package} printed no JSON object: {e}");
                return false;
            }
        };
    match render_plans(&parameters) {
        Ok(source) => ensure(
            &crate_root.join(PLANS_FILE),
            &source,
            check,
            &format!("{} coercion plans", parameters.len()),
        ),
        Err(d) => {
            eprint!("{d}");
            false
        }
    }
}

/// Phase 1: discover and write the registry. `false` on failure.
fn gen_crate(crate_root: &Path, check: bool) -> bool {
    let (discovery, source) = match render_registry(crate_root) {
        Ok(ok) => ok,
        Err(diagnostics) => {
            for d in &diagnostics {
                eprint!("{d}");
            }
            let n = diagnostics.iter().filter(|d| d.is_error()).count();
            eprintln!("error: could not generate the registry due to {n} previous error(s)");
            return false;
        }
    };
    for w in &discovery.warnings {
        eprint!("{w}");
    }
    let tools = discovery.tools().count();
    let fresh = ensure(
        &crate_root.join(GENERATED_FILE),
        &source,
        check,
        &format!("{tools} tools"),
    );
    // The registry includes the plans file; a new crate starts with an empty
    // one, which phase 2 fills in.
    let plans = crate_root.join(PLANS_FILE);
    if !check && !plans.exists() {
        match render_plans(&BTreeMap::new()) {
            Ok(empty) => return fresh && ensure(&plans, &empty, false, "no plans yet"),
            Err(d) => {
                eprint!("{d}");
                return false;
            }
        }
    }
    fresh
}
