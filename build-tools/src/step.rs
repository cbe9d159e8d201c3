//! The build step of one tools crate, phase 1: discovery, then its
//! `toolsets.toml` (and those of the crates it builds on, read the same
//! way), checked against each other, then the registry rendered.

use std::path::Path;

use hermes_tool_model::lints::{INCLUDE_CYCLE, INVALID_TOOLSET_TABLE, UNKNOWN_TOOLSET_ENTRY};

use crate::bases::{locate_package, Base};
use crate::diagnostic::Diagnostic;
use crate::discover::{discover, Discovery};
use crate::generate::{generate, generate_modules};
use crate::toolsets::{self, BaseNames, Entry, Table};
use crate::{report, TOOLSETS_FILE};

/// The generated files phase 1 renders, as they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// `src/tools/mod.rs` ([`crate::MODULES_FILE`]): the module tree of
    /// `src/tools/`.
    pub modules: String,
    /// `src/generated.rs` ([`crate::GENERATED_FILE`]): the registry, which
    /// only indexes.
    pub registry: String,
}

impl Rendered {
    /// (path relative to the crate root, contents) of each file.
    pub fn files(&self) -> [(&'static str, &str); 2] {
        [
            (crate::MODULES_FILE, &self.modules),
            (crate::GENERATED_FILE, &self.registry),
        ]
    }
}

/// Discovers the tools of the crate at `crate_root` and renders its module
/// declarations and its registry.
///
/// The toolset table (`toolsets.toml`) is parsed and checked against the
/// discovered tools; its problems are reported with the tools' problems.
pub fn render_registry(crate_root: &Path) -> Result<(Discovery, Rendered), Vec<Diagnostic>> {
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
    let modules = generate_modules(&discovery).map_err(|d| vec![*d])?;
    let registry = generate(&discovery, &table).map_err(|d| vec![*d])?;
    Ok((discovery, Rendered { modules, registry }))
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
        let bases = load_bases(crate_root, &table, &text)?;
        table.base = BaseNames::of(&bases);
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
        K::UnknownTool | K::UnknownToolset | K::AliasTargetUnknown => UNKNOWN_TOOLSET_ENTRY,
        K::IncludeCycle => INCLUDE_CYCLE,
        _ => INVALID_TOOLSET_TABLE,
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
    if lint == INVALID_TOOLSET_TABLE && e.kind != K::Parse {
        d = d.note(format!("kind: {}", e.kind));
    }
    d
}

/// How deep `builds_on` chains may go (a cycle stops here too).
const MAX_DEPTH: usize = 8;

thread_local! {
    /// How many `read_toolsets` of bases are under way on this thread: a
    /// base's table reads its own bases, so a cycle would never end.
    static BASE_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Loads every base `table.builds_on` names, for the crate at `crate_root`;
/// their own bases come flattened after them.
pub fn load_bases(
    crate_root: &Path,
    table: &Table,
    text: &str,
) -> Result<Vec<Base>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    load_into(crate_root, &table.builds_on, text, 0, &mut out, &mut errors);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn load_into(
    crate_root: &Path,
    builds_on: &[Entry],
    text: &str,
    depth: usize,
    out: &mut Vec<Base>,
    errors: &mut Vec<Diagnostic>,
) {
    for entry in builds_on {
        if out.iter().any(|b| b.package == entry.name) {
            continue;
        }
        let at = |message: String| {
            Diagnostic::error(message)
                .at(
                    TOOLSETS_FILE,
                    entry.pos.line,
                    entry.pos.column.saturating_sub(1),
                )
                .underline(crate::report::token_len(
                    text,
                    entry.pos.line,
                    entry.pos.column,
                ))
        };
        if depth >= MAX_DEPTH || BASE_DEPTH.with(|d| d.get()) >= MAX_DEPTH {
            errors.push(at(format!(
                "`builds_on` chains deeper than {MAX_DEPTH} crates (a cycle?) at `{}`",
                entry.name
            )));
            continue;
        }
        let root = match locate_package(crate_root, &entry.name) {
            Ok(root) => root,
            Err(e) => {
                errors.push(at(e).label("not a dependency of this crate"));
                continue;
            }
        };
        let discovery = crate::discover::discover(&root);
        BASE_DEPTH.with(|d| d.set(d.get() + 1));
        let read = read_toolsets(&root);
        BASE_DEPTH.with(|d| d.set(d.get() - 1));
        let (discovery, (mut base_table, base_text)) = match (discovery, read) {
            (Ok(d), Ok(t)) => (d, t),
            (d, t) => {
                errors.push(
                    at(format!(
                        "the tools of `{}` ({}) do not load: {}",
                        entry.name,
                        root.display(),
                        d.err()
                            .into_iter()
                            .chain(t.err())
                            .flatten()
                            .map(|d| d.message)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ))
                    .label("builds on this crate"),
                );
                continue;
            }
        };
        let _ = base_text;
        base_table.add_declared_members(declared_members(&discovery));
        out.push(Base {
            package: entry.name.clone(),
            root: root.clone(),
            discovery,
            table: base_table,
        });
    }
}
