//! The tool contract, checked by the machine: `cargo hermes check-tools`
//! (any tools crate) and `cargo xtask check-tools` (this workspace's) run
//! every lint; the tools crates' build scripts run the source-level ones, so
//! a violating registry does not build.
//!
//! Each lint has a stable name (listed in `hermes_tool_model::lints`, so the
//! macro checks `allow(NAME = "reason")` against the same list):
//!
//! | lint | rule | level |
//! |---|---|---|
//! | `foreign-tool-in-description` | no description names a tool of another toolset | source (doc comments), schema (nested descriptions) |
//! | `tool-not-in-toolset` | every tool is exposed by a toolset | source |
//! | `unknown-toolset-entry` | toolsets.toml names known tools and toolsets | source ([`crate::toolsets::validate`]) |
//! | `duplicate-tool-name` | unique names, also ignoring case and `-`/`_`; no alias or bridge tool has one | source |
//! | `include-cycle` | no include cycle | source ([`crate::toolsets::validate`]) |
//! | `instructional-pagination` | tools of instructional toolsets take no `offset`/`limit` | source, schema (`args` structs) |
//! | `literal-home-path` | descriptions write `{HERMES_HOME}`, not `~/.hermes`, `$HOME`, `/home/...` | source, schema |
//! | `invalid-schema` | valid JSON Schema that function-calling providers accept | source (description length), schema |
//! | `requires-env-without-check` | `requires_env` comes with a `check` | source |
//! | `undocumented-parameter` | every parameter is described | source, schema (`args` structs) |
//! | `dialect-incompatible` | the schema rewrites into every provider dialect | schema |
//! | `read-only-and-destructive` | no tool is declared both `read_only` and `destructive` | source (also a compile error of the macro) |
//! | `concurrency-safe-write` | `concurrency = "safe"` only on `read_only` tools | source (also a compile error of the macro) |
//! | `invalid-toolset-table` | the rest of toolsets.toml's checks | source |
//! | `unused-allow` (warning) | an `allow(...)` suppresses something | full runs only |
//!
//! "Source" lints read the `#[hermes_tool]` functions and toolsets.toml and
//! point into the doc comments; "schema" lints need every tool's dumped
//! `parameters` (feature `schema`, which brings the `jsonschema` crate).

mod allow;
mod base;
mod location;
#[cfg(feature = "schema")]
mod schema;
mod source;

use std::collections::BTreeMap;
use std::path::Path;

pub use hermes_tool_model::lints::*;

use crate::{Diagnostic, TOOLSETS_FILE};

pub use allow::apply_allows;
pub use base::{Crate, MAX_DESCRIPTION_CHARS, PAGINATION_PARAMS};
#[cfg(feature = "schema")]
pub use schema::check_schemas;
pub use source::check_sources;

/// The result of checking one tools crate.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// Every problem, sorted by place (allowed ones removed).
    pub diagnostics: Vec<Diagnostic>,
    /// How many tools were checked.
    pub tools: usize,
    /// How many problems `allow(...)` suppressed.
    pub allowed: usize,
    /// The text of every file read, for rendering.
    pub sources: BTreeMap<std::path::PathBuf, String>,
}

/// Runs the source-level lints on the crate at `crate_root`: discovery, the
/// toolset table, and every rule that needs no compiled schema.
pub fn check_sources_of(crate_root: &Path) -> Checked {
    run(crate_root, None)
}

/// Runs every lint: the source-level ones and, over `schemas` (tool name →
/// `parameters`, as `dump_parameters` prints them), the schema-level ones.
#[cfg(feature = "schema")]
pub fn check_all(crate_root: &Path, schemas: &BTreeMap<String, serde_json::Value>) -> Checked {
    run(crate_root, Some(&|c: Crate<'_>| check_schemas(c, schemas)))
}

type SchemaPass<'s> = &'s dyn Fn(Crate<'_>) -> Vec<Diagnostic>;

fn run(crate_root: &Path, schema_pass: Option<SchemaPass<'_>>) -> Checked {
    let discovered = crate::discover(crate_root);
    let table = crate::read_toolsets(crate_root);
    let mut checked = Checked::default();
    let (discovery, (mut table, text)) = match (discovered, table) {
        (Ok(d), Ok(t)) => (d, t),
        (discovered, table) => {
            if let Ok(d) = &discovered {
                checked.sources = d.sources.clone();
                checked.tools = d.tools().count();
            }
            checked.diagnostics = discovered.err().unwrap_or_default();
            checked.diagnostics.extend(table.err().unwrap_or_default());
            sort(&mut checked.diagnostics);
            return checked;
        }
    };
    table.add_declared_members(crate::declared_members(&discovery));
    let c = Crate {
        discovery: &discovery,
        table: &table,
    };
    let mut diagnostics = discovery.warnings.clone();
    diagnostics.extend(crate::validate_toolsets(&table, &text, &discovery));
    diagnostics.extend(check_sources(c));
    if let Some(pass) = schema_pass {
        diagnostics.extend(pass(c));
    }
    let before = diagnostics.len();
    let mut diagnostics = apply_allows(&discovery, diagnostics, schema_pass.is_some());
    checked.allowed = before.saturating_sub(
        diagnostics
            .iter()
            .filter(|d| d.lint != Some(UNUSED_ALLOW))
            .count(),
    );
    sort(&mut diagnostics);
    checked.diagnostics = diagnostics;
    checked.tools = discovery.tools().count();
    checked.sources = discovery.sources;
    checked.sources.insert(TOOLSETS_FILE.into(), text);
    checked
}

/// By file, position, then the rules' order.
fn sort(diagnostics: &mut [Diagnostic]) {
    let rule = |d: &Diagnostic| {
        d.lint
            .and_then(|l| LINTS.iter().position(|x| x.name == l))
            .unwrap_or(0)
    };
    diagnostics.sort_by(|a, b| {
        (a.file.is_none(), &a.file, a.line, a.column, rule(a)).cmp(&(
            b.file.is_none(),
            &b.file,
            b.line,
            b.column,
            rule(b),
        ))
    });
}
