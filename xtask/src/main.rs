//! `cargo xtask`: the project's tasks. Run it bare to list them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hermes_build_tools::{ensure_file, render_registry, FileState, GENERATED_FILE};

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

/// The workspace's tools crates: the built-in tools and the test tools.
const TOOLS_CRATES: &[&str] = &["tools", "tests"];

fn gen(args: &[String]) -> ExitCode {
    let mut check = false;
    let mut crates: Vec<PathBuf> = TOOLS_CRATES
        .iter()
        .map(|c| workspace_root().join(c))
        .collect();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--crate" => match iter.next() {
                Some(dir) => crates = vec![PathBuf::from(dir)],
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
    for crate_root in &crates {
        if gen_crate(crate_root, check) != ExitCode::SUCCESS {
            status = ExitCode::FAILURE;
        }
    }
    status
}

fn gen_crate(crate_root: &Path, check: bool) -> ExitCode {
    let (discovery, source) = match render_registry(crate_root) {
        Ok(ok) => ok,
        Err(diagnostics) => {
            for d in &diagnostics {
                eprint!("{d}");
            }
            let n = diagnostics.iter().filter(|d| d.is_error()).count();
            eprintln!("error: could not generate the registry due to {n} previous error(s)");
            return ExitCode::FAILURE;
        }
    };
    for w in &discovery.warnings {
        eprint!("{w}");
    }
    let target = crate_root.join(GENERATED_FILE);
    let tools = discovery.tools().count();
    match ensure_file(&target, &source, check) {
        Ok(FileState::Unchanged) => {
            eprintln!("{} is up to date ({tools} tools)", target.display());
            ExitCode::SUCCESS
        }
        Ok(FileState::Written) => {
            eprintln!("wrote {} ({tools} tools)", target.display());
            ExitCode::SUCCESS
        }
        Ok(FileState::Stale) => {
            eprintln!(
                "error: {} is stale: the tools changed since it was generated\n  run `cargo xtask gen` and commit the result",
                target.display()
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", target.display());
            ExitCode::FAILURE
        }
    }
}
