//! `cargo xtask check-tools`: the tool contract (every lint of
//! `hermes_build_tools::lints`) over the workspace's tools crates or one
//! crate, rendered rustc-style or as JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use cargo_hermes::dump::Schemas;
use cargo_hermes::{check_compiled, print, Outcome};
use hermes_build_tools::lints::{check_all, check_sources_of};

use crate::workspace::{dump_parameters, workspace_root, TOOLS_CRATES};

/// The schemas of a fixture crate, beside its `toolsets.toml`: the same
/// `{tool name: parameters}` object `dump_parameters` prints.
pub const SCHEMAS_FILE: &str = "schemas.json";

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// One crate instead of the workspace's; its schemas come from
    /// --schemas or DIR/schemas.json (without one, only the source-level
    /// lints run).
    #[arg(long = "crate", value_name = "DIR")]
    one_crate: Option<PathBuf>,
    /// The `{tool name: parameters}` object to check the schemas of.
    #[arg(long, value_name = "FILE")]
    schemas: Option<PathBuf>,
    /// How to report: rustc-style text on stderr or JSON on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// One crate to check, and where its schemas come from.
struct Target {
    root: PathBuf,
    /// Shown before paths in text output (`tools` for `tools/src/...`).
    display: Option<PathBuf>,
    schemas: SchemaSource,
}

enum SchemaSource {
    /// Compile the package and run its `dump_parameters` example.
    Dump(&'static str),
    File(PathBuf),
    None,
}

pub fn check_tools(
    CheckArgs {
        one_crate,
        schemas,
        format,
    }: CheckArgs,
) -> ExitCode {
    let targets: Vec<Target> = match one_crate {
        Some(root) => {
            let file = schemas.unwrap_or_else(|| root.join(SCHEMAS_FILE));
            let schemas = if file.is_file() {
                SchemaSource::File(file)
            } else {
                SchemaSource::None
            };
            vec![Target {
                root,
                display: None,
                schemas,
            }]
        }
        None => {
            let root = match workspace_root() {
                Ok(root) => root,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            TOOLS_CRATES
                .iter()
                .map(|(dir, package)| Target {
                    root: root.join(dir),
                    display: Some(PathBuf::from(dir)),
                    schemas: match &schemas {
                        Some(file) => SchemaSource::File(file.clone()),
                        None => SchemaSource::Dump(package),
                    },
                })
                .collect()
        }
    };

    let mut outcomes = Vec::new();
    for target in targets {
        match check_target(&target) {
            Ok(outcome) => outcomes.push(outcome),
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    print(
        &outcomes,
        match format {
            Format::Text => cargo_hermes::Format::Text,
            Format::Json => cargo_hermes::Format::Json,
        },
    );
    if outcomes.iter().any(Outcome::failed) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn check_target(target: &Target) -> Result<Outcome, String> {
    let (root, display) = (&target.root, target.display.clone());
    let schemas: Schemas = match &target.schemas {
        SchemaSource::None => {
            return Ok(Outcome::new(root, display, check_sources_of(root)).skipped(
                format!("no {SCHEMAS_FILE} beside the crate (or pass --schemas FILE)"),
                false,
            ))
        }
        SchemaSource::File(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a JSON object of tool name → parameters schema: {e}",
                    file.display()
                )
            })?
        }
        SchemaSource::Dump(package) => {
            // A failed build of the workspace fails the whole run, as before.
            let outcome = check_compiled(root, display, || dump_parameters(package));
            return match &outcome.skipped {
                Some(s) if s.fails => Err(s.reason.clone()),
                _ => Ok(outcome),
            };
        }
    };
    Ok(Outcome::new(root, display, check_all(root, &schemas)))
}
