//! `hermes-build-tools`: the build step behind `cargo xtask gen`.
//!
//! [`discover()`] walks a tools crate's `src/tools/` with `syn` and analyzes
//! every top-level `#[hermes_tool]` function with the same model the macro
//! uses; [`generate_modules`] writes the module declarations of `src/tools/`
//! and [`generate()`] the registry source, which only indexes those modules;
//! [`ensure_file`] writes each only when it changed, or, when checking,
//! reports that it is stale. From the compiled crate's schemas, phase 2
//! renders the coercion plans (`plans`) and the schemas as text
//! ([`render_schemas`]).
//! [`lints`] checks the tool contract (`cargo xtask check-tools`, and the
//! tools crates' build scripts); [`report`] renders diagnostics.
//!
//! Build scripts use this crate with no features: parsing and the
//! source-level lints. The `plans` feature (coercion plans) and the
//! `schema` feature (schema-level lints, provider dialects) need
//! `hermes-runtime`, so tokio and schemars; only `cargo xtask` enables them.

pub mod bases;
mod build_script;
pub mod diagnostic;
pub mod discover;
mod format;
pub mod generate;
pub mod lints;
#[cfg(feature = "plans")]
pub mod plans;
pub mod python;
pub mod report;
pub mod schemas;
mod step;
pub mod toolsets;

pub use build_script::build_script_check;
pub use diagnostic::{Diagnostic, Label, Severity};
pub use discover::{discover, DiscoveredTool, Discovery, ToolModule};
pub use generate::{generate, generate_modules, GENERATED_PREAMBLE};
#[cfg(feature = "plans")]
pub use plans::render_plans;
pub use python::{render_python_module, PyTool};
pub use schemas::render_schemas;
pub use step::{
    declared_members, load_toolsets, read_toolsets, render_registry, table_diagnostic,
    validate_toolsets, Rendered,
};

use std::path::Path;

/// The generated registry of a tools crate, relative to its root: it only
/// indexes the tools (`crate::tools::…`); the crate root declares
/// `pub mod generated;`.
pub const GENERATED_FILE: &str = "src/generated.rs";

/// The generated module declarations of a tools crate's `src/tools/`,
/// relative to its root: the module `crate::tools` (`pub mod tools;` in the
/// crate root), one `pub mod` per tool file or folder.
pub const MODULES_FILE: &str = "src/tools/mod.rs";

/// The toolset table of a tools crate, relative to its root.
pub const TOOLSETS_FILE: &str = "toolsets.toml";

/// The static coercion plans of a tools crate, relative to its root
/// (rendered by `plans::render_plans`, with the `plans` feature).
pub const PLANS_FILE: &str = "src/generated_plans.rs";

/// Every tool's `parameters` schema as JSON text, relative to a tools
/// crate's root (rendered by `schemas::render_schemas` from the same
/// compiled schemas as the plans): what a registry reads instead of
/// deriving the schemas at run time.
pub const SCHEMAS_FILE: &str = "src/generated_schemas.rs";

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
