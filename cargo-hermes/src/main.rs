//! `cargo hermes`: the build step of `#[hermes_tool]` for any tools crate.
//!
//! Install: `cargo install --path cargo-hermes` (from this repository), then
//! in a tools crate (a `src/tools/` folder and a `toolsets.toml`):
//!
//! - `cargo hermes gen [--check]`: write (or check) the module declarations
//!   of `src/tools/` (`src/tools/mod.rs`), the registry (`src/generated.rs`)
//!   the coercion plans (`src/generated_plans.rs`) and the schemas as text
//!   (`src/generated_schemas.rs`);
//! - `cargo hermes check-tools [--format json]`: the tool contract, every
//!   lint (source- and schema-level).

use std::path::PathBuf;
use std::process::ExitCode;

use cargo_hermes::{check_tools, gen_all, Format};
use clap::{Parser, Subcommand};

/// Cargo runs `cargo-hermes hermes <args>`: the first argument is the
/// subcommand's own name.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum Cargo {
    /// The build step of #[hermes_tool] tools crates.
    Hermes(Cli),
}

#[derive(clap::Args)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    task: Task,
    /// The tools crate (default: the current directory).
    #[arg(long = "crate", value_name = "DIR", global = true)]
    dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Task {
    /// Discover every #[hermes_tool] function under src/tools/, check it
    /// against toolsets.toml, and write src/tools/mod.rs (the modules) and
    /// src/generated.rs (the registry); then build the crate and write its
    /// coercion plans, src/generated_plans.rs, and its schemas as text,
    /// src/generated_schemas.rs.
    Gen {
        /// Write nothing; fail when a generated file is stale.
        #[arg(long)]
        check: bool,
    },
    /// Check the tool contract: the source-level lints, then the
    /// schema-level ones on the built crate's schemas, across the crates
    /// this one builds on. Exits 1 on any error.
    CheckTools {
        #[arg(long, value_enum, default_value = "text")]
        format: FormatArg,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

fn main() -> ExitCode {
    let Cargo::Hermes(cli) = Cargo::parse();
    let root = match cli.dir {
        Some(dir) => dir,
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("error: cannot read the current directory: {e}");
                return ExitCode::from(2);
            }
        },
    };
    if !root.join("Cargo.toml").is_file() {
        eprintln!(
            "error: {} has no Cargo.toml: run cargo hermes in a tools crate (or pass --crate DIR)",
            root.display()
        );
        return ExitCode::from(2);
    }
    match cli.task {
        Task::Gen { check } => {
            if gen_all(&root, check, "cargo hermes gen") {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Task::CheckTools { format } => {
            let format = match format {
                FormatArg::Text => Format::Text,
                FormatArg::Json => Format::Json,
            };
            if check_tools(&root, format) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
