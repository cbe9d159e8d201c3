//! `hermes-build-tools`: the build step behind `cargo xtask gen`.
//!
//! [`discover`] walks a tools crate's `src/tools/` with `syn` and analyzes
//! every top-level `#[hermes_tool]` function with the same model the macro
//! uses; [`generate`] writes the registry source; [`ensure_file`] writes it
//! only when it changed, or, when checking, reports that it is stale.

pub mod diagnostic;
pub mod discover;
pub mod generate;
pub mod plans;
pub mod toolsets;

pub use diagnostic::{Diagnostic, Severity};
pub use discover::{discover, DiscoveredTool, Discovery, ToolModule};
pub use generate::{generate, GENERATED_PREAMBLE};
pub use plans::{render_plans, PLANS_FILE};

use std::path::Path;

/// The generated registry of a tools crate, relative to its root.
pub const GENERATED_FILE: &str = "src/generated.rs";

/// The toolset table of a tools crate, relative to its root.
pub const TOOLSETS_FILE: &str = "toolsets.toml";

/// Where tool files live, relative to a tools crate's root.
pub const TOOLS_DIR: &str = "src/tools";

/// What [`ensure_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    Unchanged,
    Written,
    /// `check` was set and the file on disk differs.
    Stale,
}

/// Writes `contents` to `path` unless it already holds them. With `check`,
/// never writes: a difference is reported as [`FileState::Stale`].
pub fn ensure_file(path: &Path, contents: &str, check: bool) -> std::io::Result<FileState> {
    match std::fs::read_to_string(path) {
        Ok(old) if old == contents => return Ok(FileState::Unchanged),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if check {
        return Ok(FileState::Stale);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)?;
    Ok(FileState::Written)
}

/// Discovers the tools of the crate at `crate_root` and renders its registry.
///
/// The toolset table (`toolsets.toml`) is parsed and checked against the
/// discovered tools; its problems are reported with the tools' problems.
pub fn render_registry(crate_root: &Path) -> Result<(Discovery, String), Vec<Diagnostic>> {
    let discovered = discover(crate_root);
    let table = load_toolsets(crate_root, discovered.as_ref().ok());
    let (discovery, table) = match (discovered, table) {
        (Ok(d), Ok(t)) => (d, t),
        (Err(mut a), Err(b)) => {
            a.extend(b);
            return Err(a);
        }
        (Err(a), _) | (_, Err(a)) => return Err(a),
    };
    let source = generate(&discovery, &table).map_err(|d| vec![d])?;
    Ok((discovery, source))
}

/// Parses `toolsets.toml` and, when discovery succeeded, checks every name
/// in it against the discovered tools.
pub fn load_toolsets(
    crate_root: &Path,
    discovery: Option<&Discovery>,
) -> Result<toolsets::Table, Vec<Diagnostic>> {
    let path = crate_root.join(TOOLSETS_FILE);
    let located = |e: toolsets::TableError| {
        Diagnostic::error(format!("{} [{}]", e.message, e.kind)).at(
            TOOLSETS_FILE,
            e.line,
            e.column.saturating_sub(1),
        )
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        vec![Diagnostic::error(format!("cannot read {}: {e}", path.display()))
            .note("every tools crate declares its toolsets in toolsets.toml; a tool is only exposed if a toolset names it")]
    })?;
    let table = toolsets::parse_table(&text)
        .map_err(|errors| errors.into_iter().map(located).collect::<Vec<_>>())?;
    if let Some(discovery) = discovery {
        let known: Vec<&str> = discovery
            .tools()
            .map(|(_, t)| t.tool.name.as_str())
            .collect();
        let errors = toolsets::validate(&table, &known);
        if !errors.is_empty() {
            return Err(errors.into_iter().map(located).collect());
        }
    }
    Ok(table)
}
