//! `hermes-build-tools`: the build step behind `cargo xtask gen`.
//!
//! [`discover()`] walks a tools crate's `src/tools/` with `syn` and analyzes
//! every top-level `#[hermes_tool]` function with the same model the macro
//! uses; [`generate()`] writes the registry source; [`ensure_file`] writes it
//! only when it changed, or, when checking, reports that it is stale.
//! [`lints`] checks the tool contract (`cargo xtask check-tools`, and the
//! tools crates' build scripts); [`report`] renders diagnostics.
//!
//! Build scripts use this crate with no features: parsing and the
//! source-level lints. The `plans` feature (coercion plans) and the
//! `schema` feature (schema-level lints, provider dialects) need
//! `hermes-runtime`, so tokio and schemars; only `cargo xtask` enables them.

pub mod bases;
pub mod diagnostic;
pub mod discover;
pub mod generate;
pub mod lints;
#[cfg(feature = "plans")]
pub mod plans;
pub mod report;
pub mod toolsets;

pub use diagnostic::{Diagnostic, Label, Severity};
pub use discover::{discover, DiscoveredTool, Discovery, ToolModule};
pub use generate::{generate, GENERATED_PREAMBLE};
#[cfg(feature = "plans")]
pub use plans::render_plans;

use std::path::Path;

/// The generated registry of a tools crate, relative to its root.
pub const GENERATED_FILE: &str = "src/generated.rs";

/// The toolset table of a tools crate, relative to its root.
pub const TOOLSETS_FILE: &str = "toolsets.toml";

/// The static coercion plans of a tools crate, relative to its root
/// (rendered by `plans::render_plans`, with the `plans` feature).
pub const PLANS_FILE: &str = "src/generated_plans.rs";

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
    let source = generate(&discovery, &table).map_err(|d| vec![*d])?;
    Ok((discovery, source))
}

/// Parses `toolsets.toml` and, when discovery succeeded, checks every name
/// in it against the discovered tools.
pub fn load_toolsets(
    crate_root: &Path,
    discovery: Option<&Discovery>,
) -> Result<toolsets::Table, Vec<Diagnostic>> {
    let (mut table, text) = read_toolsets(crate_root)?;
    if let Some(discovery) = discovery {
        table.add_declared_members(declared_members(discovery));
        let errors = validate_toolsets(&table, &text, discovery);
        if !errors.is_empty() {
            return Err(errors);
        }
    }
    Ok(table)
}

/// (tool, the toolset its attribute names) for every discovered tool.
pub fn declared_members(discovery: &Discovery) -> impl Iterator<Item = (&str, &str)> {
    discovery
        .tools()
        .map(|(_, t)| (t.tool.name.as_str(), t.tool.attr.toolset()))
}

/// Reads and parses `toolsets.toml`; returns the table and its text. When
/// it builds on other crates (`builds_on`), their tools and toolsets are
/// loaded into [`toolsets::Table::base`].
pub fn read_toolsets(crate_root: &Path) -> Result<(toolsets::Table, String), Vec<Diagnostic>> {
    let path = crate_root.join(TOOLSETS_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        vec![Diagnostic::error(format!("cannot read {}: {e}", path.display()))
            .note("every tools crate declares its toolsets in toolsets.toml; a tool is only exposed if a toolset names it")]
    })?;
    let mut table = toolsets::parse_table(&text).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| table_diagnostic(e, &text))
            .collect::<Vec<_>>()
    })?;
    if !table.builds_on.is_empty() {
        let bases = bases::load_bases(crate_root, &table, &text)?;
        table.base = bases::BaseNames::of(&bases);
    }
    Ok((table, text))
}

/// Checks the table's names against the discovered tools
/// ([`toolsets::validate`]), as lint diagnostics.
pub fn validate_toolsets(
    table: &toolsets::Table,
    text: &str,
    discovery: &Discovery,
) -> Vec<Diagnostic> {
    let known: Vec<&str> = discovery
        .tools()
        .map(|(_, t)| t.tool.name.as_str())
        .collect();
    toolsets::validate(table, &known)
        .into_iter()
        .map(|e| table_diagnostic(e, text))
        .collect()
}

/// A problem of `toolsets.toml` as a diagnostic: its lint, its position and
/// the entry underlined.
pub fn table_diagnostic(e: toolsets::TableError, text: &str) -> Diagnostic {
    use toolsets::TableErrorKind as K;
    let lint = match e.kind {
        K::UnknownTool | K::UnknownToolset | K::AliasTargetUnknown => lints::UNKNOWN_TOOLSET_ENTRY,
        K::IncludeCycle => lints::INCLUDE_CYCLE,
        _ => lints::INVALID_TOOLSET_TABLE,
    };
    let len = report::token_len(text, e.line, e.column);
    let label = match e.kind {
        K::UnknownTool => "not a tool of this crate",
        K::UnknownToolset | K::AliasTargetUnknown => "not a toolset",
        K::IncludeCycle => "this include closes the cycle",
        K::Parse => "here",
        _ => "",
    };
    let mut d = Diagnostic::lint(lint, e.message)
        .at(TOOLSETS_FILE, e.line, e.column.saturating_sub(1))
        .underline(len);
    if !label.is_empty() {
        d = d.label(label);
    }
    if lint == lints::INVALID_TOOLSET_TABLE && e.kind != K::Parse {
        d = d.note(format!("kind: {}", e.kind));
    }
    d
}

/// The build script of a tools crate (`build.rs`): runs the source-level
/// lints of the tool contract ([`lints::check_sources_of`]) on the crate
/// being built, so a registry that breaks one does not compile — also when
/// `cargo xtask gen` has not run since the last edit. Errors are printed
/// rustc-style (absolute paths) and fail the build; warnings become cargo
/// warnings. Reruns only when `src/tools/` or `toolsets.toml` change.
pub fn build_script_check() {
    println!("cargo::rerun-if-changed={TOOLS_DIR}");
    println!("cargo::rerun-if-changed={TOOLSETS_FILE}");
    let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from) else {
        println!("cargo::warning=CARGO_MANIFEST_DIR is not set: the tool contract was not checked");
        return;
    };
    let checked = lints::check_sources_of(&root);
    for w in checked.diagnostics.iter().filter(|d| !d.is_error()) {
        println!("cargo::warning={}", one_line(&root, w));
    }
    let errors: Vec<&Diagnostic> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    if errors.is_empty() {
        return;
    }
    let mut sources = report::Sources::new(&root).display_root(&root);
    for (file, text) in &checked.sources {
        sources.insert(file, text.clone());
    }
    let errors: Vec<Diagnostic> = errors.into_iter().cloned().collect();
    eprint!("{}", report::render_text(&errors, &mut sources));
    eprintln!(
        "{}",
        report::summary(&errors, "the tool contract (cargo xtask check-tools)")
    );
    for e in &errors {
        println!("cargo::error={}", one_line(&root, e));
    }
    std::process::exit(1);
}

/// `path:line:col: [lint] message`, for cargo's one-line messages.
fn one_line(root: &Path, d: &Diagnostic) -> String {
    let place = d.file.as_ref().map_or_else(String::new, |f| {
        format!("{}:{}:{}: ", root.join(f).display(), d.line, d.column)
    });
    let lint = d.lint.map_or_else(String::new, |l| format!("[{l}] "));
    format!("{place}{lint}{}", d.message).replace('\n', " ")
}
