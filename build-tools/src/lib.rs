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

pub use diagnostic::{Diagnostic, Severity};
pub use discover::{discover, DiscoveredTool, Discovery, ToolModule};
pub use generate::{generate, GENERATED_PREAMBLE};
pub use plans::{render_plans, PLANS_FILE};

use std::path::Path;

/// The generated registry of a tools crate, relative to its root.
pub const GENERATED_FILE: &str = "src/generated.rs";

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
pub fn render_registry(crate_root: &Path) -> Result<(Discovery, String), Vec<Diagnostic>> {
    let discovery = discover(crate_root)?;
    let source = generate(&discovery).map_err(|d| vec![d])?;
    Ok((discovery, source))
}
