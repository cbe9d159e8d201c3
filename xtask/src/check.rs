//! `cargo xtask check-tools`: the tool contract (every lint of
//! `hermes_build_tools::lints`) over the workspace's tools crates or one
//! crate, rendered rustc-style or as JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use hermes_build_tools::lints::{check_all, check_sources_of, Checked};
use hermes_build_tools::report::{render_text, summary, to_json, Sources};
use hermes_build_tools::Diagnostic;
use serde_json::{json, Value};

use crate::{dump_parameters, workspace_root, TOOLS_CRATES};

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

/// What checking one crate gave.
struct Outcome {
    name: String,
    checked: Checked,
    schema_level: bool,
    display: Option<PathBuf>,
    root: PathBuf,
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
    let all: Vec<&Diagnostic> = outcomes
        .iter()
        .flat_map(|o| &o.checked.diagnostics)
        .collect();
    let errors = all.iter().filter(|d| d.is_error()).count();
    match format {
        Format::Text => print_text(&outcomes),
        Format::Json => print_json(&outcomes),
    }
    if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn check_target(target: &Target) -> Result<Outcome, String> {
    // The crate's folder in the workspace, or `.` for `--crate` (whose paths
    // are relative to it), so output does not depend on where it is.
    let name = target
        .display
        .as_ref()
        .map_or_else(|| ".".to_owned(), |d| d.display().to_string());
    let outcome = |checked: Checked, schema_level: bool| Outcome {
        name: name.clone(),
        checked,
        schema_level,
        display: target.display.clone(),
        root: target.root.clone(),
    };
    let schemas: BTreeMap<String, Value> = match &target.schemas {
        SchemaSource::None => return Ok(outcome(check_sources_of(&target.root), false)),
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
            // A crate that breaks a source-level lint does not build (its
            // build script runs them): report those without compiling.
            let sources = check_sources_of(&target.root);
            if sources.diagnostics.iter().any(Diagnostic::is_error) {
                return Ok(outcome(sources, false));
            }
            dump_parameters(package)?
        }
    };
    Ok(outcome(check_all(&target.root, &schemas), true))
}

fn print_text(outcomes: &[Outcome]) {
    let mut all: Vec<Diagnostic> = Vec::new();
    let mut tools = 0;
    let mut allowed = 0;
    for o in outcomes {
        let mut sources = Sources::new(&o.root);
        if let Some(display) = &o.display {
            sources = sources.display_root(display);
        }
        for (file, text) in &o.checked.sources {
            sources.insert(file, text.clone());
        }
        eprint!("{}", render_text(&o.checked.diagnostics, &mut sources));
        if !o.schema_level {
            match &o.display {
                Some(dir) => eprintln!(
                    "note: {}: schema-level lints not run: fix the errors above first (the crate does not build with them)\n",
                    dir.display()
                ),
                None => eprintln!(
                    "note: schema-level lints not run: no {SCHEMAS_FILE} beside the crate (or pass --schemas FILE)\n"
                ),
            }
        }
        all.extend(o.checked.diagnostics.iter().cloned());
        tools += o.checked.tools;
        allowed += o.checked.allowed;
    }
    let crates = if outcomes.len() == 1 {
        "1 crate".to_owned()
    } else {
        format!("{} crates", outcomes.len())
    };
    let tools = if tools == 1 {
        "1 tool".to_owned()
    } else {
        format!("{tools} tools")
    };
    let mut what = format!("check-tools ({tools} in {crates}");
    if allowed > 0 {
        what.push_str(&format!(", {allowed} allowed"));
    }
    what.push(')');
    eprintln!("{}", summary(&all, &what));
}

fn print_json(outcomes: &[Outcome]) {
    let crates: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            json!({
                "crate": o.name,
                "tools": o.checked.tools,
                "allowed": o.checked.allowed,
                "schema_level": o.schema_level,
                "diagnostics": o.checked.diagnostics.iter().map(to_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let count = |error: bool| {
        outcomes
            .iter()
            .flat_map(|o| &o.checked.diagnostics)
            .filter(|d| d.is_error() == error)
            .count()
    };
    let doc = json!({
        "crates": crates,
        "errors": count(true),
        "warnings": count(false),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string())
    );
}
