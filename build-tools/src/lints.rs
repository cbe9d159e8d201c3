//! The tool contract, checked by the machine: `cargo xtask check-tools` runs
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
//! | `invalid-toolset-table` | the rest of toolsets.toml's checks | source |
//! | `unused-allow` (warning) | an `allow(...)` suppresses something | full runs only |
//!
//! "Source" lints read the `#[hermes_tool]` functions and toolsets.toml and
//! point into the doc comments; "schema" lints need every tool's dumped
//! `parameters` (feature `schema`, which brings the `jsonschema` crate).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use hermes_tool_facts::{is_name_char, BRIDGE_TOOLS, HOME_PLACEHOLDER};
use hermes_tool_model::{ParamKind, ToolFn};
use proc_macro2::Span;
use syn::spanned::Spanned;

pub use hermes_tool_model::lints::*;

use crate::diagnostic::Label;
use crate::discover::{DiscoveredTool, Discovery};
use crate::toolsets::Table;
use crate::{Diagnostic, TOOLSETS_FILE};

/// The longest tool description function-calling providers accept.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Parameters instructional tools must not take: their content is read whole.
pub const PAGINATION_PARAMS: [&str; 2] = ["offset", "limit"];

/// A tools crate as the lints see it.
#[derive(Debug, Clone, Copy)]
pub struct Crate<'a> {
    pub discovery: &'a Discovery,
    pub table: &'a Table,
}

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

// ---------------------------------------------------------------------------
// Source-level lints
// ---------------------------------------------------------------------------

/// Every source-level lint of one crate (the toolset table's own checks
/// are [`crate::validate_toolsets`]).
pub fn check_sources(c: Crate<'_>) -> Vec<Diagnostic> {
    let names = ToolNames::new(c.discovery);
    let exposed = c.table.exposed_tools();
    let instructional = InstructionalToolsets::new(c.table);
    let mut out = Vec::new();
    for (_, t) in c.discovery.tools() {
        let source = c.discovery.sources.get(&t.file).map_or("", String::as_str);
        let here = Place { tool: t, source };
        // Rules 1 and 7 on the doc-comment descriptions.
        let tool_text = Text {
            text: &t.tool.description,
            spans: &t.tool.description_spans,
            whose: format!("the description of `{}`", t.tool.name),
            pointer: None,
        };
        foreign_tools(&here, &names, &tool_text, &mut out);
        home_paths(&here, &tool_text, &mut out);
        for p in t.tool.schema_params() {
            let ParamKind::Property {
                name, description, ..
            } = &p.kind
            else {
                continue;
            };
            match description.as_deref().filter(|d| !d.trim().is_empty()) {
                Some(d) => {
                    let text = Text {
                        text: d,
                        spans: &p.doc_spans,
                        whose: format!("the description of parameter `{name}` of `{}`", t.tool.name),
                        pointer: None,
                    };
                    foreign_tools(&here, &names, &text, &mut out);
                    home_paths(&here, &text, &mut out);
                }
                // Rule 10.
                None => out.push(
                    Diagnostic::lint(
                        UNDOCUMENTED_PARAMETER,
                        format!("parameter `{name}` of `{}` has no description", t.tool.name),
                    )
                    .at_span(&t.file, p.ident.span())
                    .label("undocumented")
                    .note("the model reads the description to know what to send")
                    .help("write a doc comment on the parameter (`/// What it is.`), or an item in the function's `# Arguments` section")
                    .tool(&t.tool.name),
                ),
            }
            // Rule 6.
            if let Some(toolset) = instructional.of(&t.tool) {
                if PAGINATION_PARAMS.contains(&name.as_str()) {
                    out.push(pagination(t, toolset, name).at_span(&t.file, p.ident.span()));
                }
            }
        }
        // Rule 2.
        if !exposed.contains(&t.tool.name) {
            out.push(not_in_toolset(c, t));
        }
        // Rule 8, the part the source knows: the description's length.
        let chars = t.tool.description.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            let d = t
                .diagnostic(
                    INVALID_SCHEMA,
                    format!(
                        "the description of `{}` has {chars} characters; providers accept at most {MAX_DESCRIPTION_CHARS}",
                        t.tool.name
                    ),
                )
                .help("keep the description to what the model needs to choose and call the tool; put the rest in a rustdoc section (`# Details`), which is not sent");
            out.push(match t.tool.description_spans.first() {
                Some(span) => d.at_span(&t.file, *span).label("too long"),
                None => d,
            });
        }
        // Rule 9.
        if !t.tool.attr.requires_env.is_empty() && t.tool.attr.check.is_none() {
            let d = t
                .diagnostic(
                    REQUIRES_ENV_WITHOUT_CHECK,
                    format!(
                        "`{}` requires {} but has no `check`",
                        t.tool.name,
                        t.tool
                            .attr
                            .requires_env
                            .iter()
                            .map(|v| format!("`{v}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .note("without a check the tool is offered to profiles that lack the secret, and every call fails")
                .help("add `check = path::to::fn`, a `fn(&Profile) -> bool` that reads the secret through the profile: `profile.secret(\"KEY\").is_some()`");
            out.push(match t.tool.attr.requires_env_span {
                Some(span) => d.at_span(&t.file, span).label("needs a check"),
                None => d,
            });
        }
    }
    duplicate_names(c, &mut out);
    out
}

/// A tool and the text of its file.
struct Place<'a> {
    tool: &'a DiscoveredTool,
    source: &'a str,
}

/// A model-facing text and where it is written.
struct Text<'a> {
    text: &'a str,
    /// Where the source spells it (doc comment lines or a literal); empty
    /// for text known only from the schema.
    spans: &'a [Span],
    /// "the description of `x`", for messages.
    whose: String,
    /// Where in the parameters schema the text is, for text known only
    /// from the schema.
    pointer: Option<&'a str>,
}

/// Tool name → tool, for the whole-word search of rule 1.
struct ToolNames<'a> {
    by_name: HashMap<&'a str, &'a DiscoveredTool>,
}

impl<'a> ToolNames<'a> {
    fn new(discovery: &'a Discovery) -> Self {
        ToolNames {
            by_name: discovery
                .tools()
                .map(|(_, t)| (t.tool.name.as_str(), t))
                .collect(),
        }
    }
}

/// The whole words of `text` (runs of tool-name characters) with their byte offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !is_name_char(c))
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// Byte offsets where `needle` occurs in `hay`; as a whole word when `whole_word`.
fn occurrences(hay: &str, needle: &str, whole_word: bool) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    hay.match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| {
            !whole_word
                || (!hay[..i].chars().next_back().is_some_and(is_name_char)
                    && !hay[i + needle.len()..]
                        .chars()
                        .next()
                        .is_some_and(is_name_char))
        })
        .collect()
}

/// Where in the source the `nth` occurrence of `needle` within `spans` is:
/// (1-based line, 0-based column in characters).
fn locate(
    source: &str,
    spans: &[Span],
    needle: &str,
    whole_word: bool,
    nth: usize,
) -> Option<(usize, usize)> {
    let mut seen_starts = BTreeSet::new();
    let mut found = Vec::new();
    for span in spans {
        let (start, end) = (span.start(), span.end());
        if start.line == 0 || !seen_starts.insert((start.line, start.column)) {
            continue;
        }
        for (i, line) in source
            .lines()
            .enumerate()
            .skip(start.line - 1)
            .take(end.line.saturating_sub(start.line) + 1)
        {
            let line_no = i + 1;
            let from = if line_no == start.line {
                start.column
            } else {
                0
            };
            let to = if line_no == end.line {
                end.column
            } else {
                usize::MAX
            };
            let region: String = line
                .chars()
                .skip(from)
                .take(to.saturating_sub(from))
                .collect();
            for at in occurrences(&region, needle, whole_word) {
                found.push((line_no, from + region[..at].chars().count()));
            }
        }
        if found.len() > nth {
            break;
        }
    }
    found.get(nth).copied()
}

/// Places a diagnostic on `needle` in the text's source, or on the tool's
/// name when the text has no source (nested schema descriptions).
fn place(
    d: Diagnostic,
    here: &Place<'_>,
    text: &Text<'_>,
    needle: &str,
    whole_word: bool,
    at: usize,
) -> Diagnostic {
    let nth = occurrences(&text.text[..at], needle, whole_word).len();
    match locate(here.source, text.spans, needle, whole_word, nth) {
        Some((line, column0)) => d
            .at(&here.tool.file, line, column0)
            .underline(needle.chars().count()),
        None => on_param(
            here.tool,
            text.pointer.unwrap_or_default(),
            d.at_span(&here.tool.file, here.tool.name_span()),
        ),
    }
}

/// Moves `d` onto the type of the parameter whose schema `pointer`
/// (into `parameters`) is in, when the source declares that parameter.
fn on_param(t: &DiscoveredTool, pointer: &str, d: Diagnostic) -> Diagnostic {
    let Some(rest) = pointer.strip_prefix("/properties/") else {
        return d;
    };
    let name = rest
        .split('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~");
    let param = t
        .tool
        .schema_params()
        .find(|p| matches!(&p.kind, ParamKind::Property { name: n, .. } if *n == name));
    match param {
        Some(p) => d.at_span(&t.file, p.ty.span()),
        None => d,
    }
}

/// Rule 1: mentions of tools registered into another toolset.
fn foreign_tools(
    here: &Place<'_>,
    names: &ToolNames<'_>,
    text: &Text<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let tool = &here.tool.tool;
    let own = tool.attr.toolset();
    let mut reported = BTreeSet::new();
    for (at, word) in words(text.text) {
        let Some(other) = names.by_name.get(word) else {
            continue;
        };
        let theirs = other.tool.attr.toolset();
        if theirs == own || !reported.insert(word) {
            continue;
        }
        let mut d = Diagnostic::lint(
            FOREIGN_TOOL_IN_DESCRIPTION,
            format!(
                "{} names `{word}`, a tool of toolset `{theirs}`",
                text.whose
            ),
        )
        .label(format!("`{word}` is in toolset `{theirs}`; `{}` is in `{own}`", tool.name))
        .note(format!(
            "`{word}` may be disabled or unavailable when `{}` is offered, and the model would call a tool it does not have",
            tool.name
        ))
        .help(format!(
            "drop the mention and add it when definitions are built, only if `{word}` survived: `registry.add_cross_reference(\"{}\", \"{word}\", \"<a sentence naming {word}>\")`",
            tool.name
        ))
        .tool(&tool.name);
        if let Some(pointer) = text.pointer {
            d = d.note(format!("in the parameters schema at `{pointer}`"));
        }
        out.push(place(d, here, text, word, true, at));
    }
}

/// A literal home path found in a text: where, the path, its placeholder form.
fn find_home_paths(text: &str) -> Vec<(usize, &str, Option<String>)> {
    const PREFIXES: [&str; 5] = ["~/.hermes", "${HOME}", "$HOME", "/home/", "/Users/"];
    let ends_path = |c: char| c.is_whitespace() || "`'\"()<>[],;".contains(c);
    let mut found: Vec<(usize, &str, Option<String>)> = Vec::new();
    for prefix in PREFIXES {
        for (at, _) in text.match_indices(prefix) {
            if found.iter().any(|(s, p, _)| at >= *s && at < s + p.len()) {
                continue;
            }
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || "_.-/~$".contains(c)) {
                continue;
            }
            let after = &text[at + prefix.len()..];
            if prefix == "$HOME" && after.chars().next().is_some_and(is_name_char) {
                continue; // $HOMEBREW, $HOME_DIR: another variable
            }
            let rest_len = after.find(ends_path).unwrap_or(after.len());
            let path =
                text[at..at + prefix.len() + rest_len].trim_end_matches(['.', ':', '!', '?']);
            found.push((at, path, placeholder_form(path)));
        }
    }
    found.sort_by_key(|(at, _, _)| *at);
    found
}

/// `~/.hermes/x`, `$HOME/.hermes/x`, `/home/u/.hermes/x` → `{HERMES_HOME}/x`.
fn placeholder_form(path: &str) -> Option<String> {
    let rest = if let Some(r) = path.strip_prefix("~/.hermes") {
        r
    } else if let Some(r) = path
        .strip_prefix("$HOME/.hermes")
        .or_else(|| path.strip_prefix("${HOME}/.hermes"))
    {
        r
    } else {
        let r = path
            .strip_prefix("/home/")
            .or_else(|| path.strip_prefix("/Users/"))?;
        let (_, r) = r.split_once('/')?;
        r.strip_prefix(".hermes")?
    };
    (rest.is_empty() || rest.starts_with('/')).then(|| format!("{HOME_PLACEHOLDER}{rest}"))
}

/// Rule 7: literal home paths.
fn home_paths(here: &Place<'_>, text: &Text<'_>, out: &mut Vec<Diagnostic>) {
    let tool = &here.tool.tool;
    for (at, path, fixed) in find_home_paths(text.text) {
        let mut d = Diagnostic::lint(
            LITERAL_HOME_PATH,
            format!("{} writes the literal home path `{path}`", text.whose),
        )
        .label(match &fixed {
            Some(f) => format!("write `{f}`"),
            None => "a path on one machine".to_owned(),
        })
        .note(format!(
            "each profile has its own home; descriptions write it as `{HOME_PLACEHOLDER}`, the display home of the profile a call runs under"
        ))
        .tool(&tool.name);
        if fixed.is_none() {
            d = d.help(format!(
                "write the path relative to `{HOME_PLACEHOLDER}` or to the working directory"
            ));
        }
        if let Some(pointer) = text.pointer {
            d = d.note(format!("in the parameters schema at `{pointer}`"));
        }
        out.push(place(d, here, text, path, false, at));
    }
}

/// The instructional toolsets, and which tools belong to them.
struct InstructionalToolsets<'a> {
    /// Instructional toolset names.
    names: BTreeSet<&'a str>,
    /// Tool → the instructional toolset listing it.
    listed: BTreeMap<&'a str, &'a str>,
}

impl<'a> InstructionalToolsets<'a> {
    fn new(table: &'a Table) -> Self {
        let mut names = BTreeSet::new();
        let mut listed = BTreeMap::new();
        for t in table.toolsets.iter().filter(|t| t.instructional) {
            names.insert(t.name.name.as_str());
            for e in &t.tools {
                listed
                    .entry(e.name.as_str())
                    .or_insert(t.name.name.as_str());
            }
        }
        InstructionalToolsets { names, listed }
    }

    /// The instructional toolset `tool` registers into or is listed by.
    fn of(&self, tool: &ToolFn) -> Option<&'a str> {
        let own = tool.attr.toolset();
        if let Some(name) = self.names.get(own) {
            return Some(name);
        }
        self.listed.get(tool.name.as_str()).copied()
    }
}

fn pagination(t: &DiscoveredTool, toolset: &str, param: &str) -> Diagnostic {
    Diagnostic::lint(
        INSTRUCTIONAL_PAGINATION,
        format!(
            "`{}` belongs to the instructional toolset `{toolset}` and takes `{param}`",
            t.tool.name
        ),
    )
    .label("pagination parameter")
    .note("skills, prompts and playbooks are read whole: a model that pages through instructions acts on part of them")
    .help("return the whole document; split a long one into several named documents instead")
    .tool(&t.tool.name)
}

/// Rule 2, with the place in toolsets.toml to fix it.
fn not_in_toolset(c: Crate<'_>, t: &DiscoveredTool) -> Diagnostic {
    let own = t.tool.attr.toolset();
    let mut d = t
        .diagnostic(
            TOOL_NOT_IN_TOOLSET,
            format!("`{}` is not exposed by any toolset", t.tool.name),
        )
        .label("no toolset of toolsets.toml lists it")
        .note("a tool is only offered to the model when a toolset names it");
    match c.table.toolsets.iter().find(|s| s.name.name == own) {
        Some(set) => {
            d = d
                .also(Label {
                    file: TOOLSETS_FILE.into(),
                    line: set.name.pos.line,
                    column: set.name.pos.column,
                    len: own.chars().count(),
                    message: format!("add `{}` to this toolset's `tools`", t.tool.name),
                })
                .help(format!(
                    "add \"{}\" to `tools` of [toolsets.{own}] in toolsets.toml",
                    t.tool.name
                ));
        }
        None => {
            d = d.help(format!(
                "declare its toolset in toolsets.toml: [toolsets.{own}] with description = \"...\" and tools = [\"{}\"]",
                t.tool.name
            ));
        }
    }
    d
}

/// `read-file`, `Read_File` and `read_file` are one name to a model.
fn normalized(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

/// Rule 4 (exact duplicates are discovery's error): names equal after
/// normalizing, and names of aliases and bridge tools.
fn duplicate_names(c: Crate<'_>, out: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<String, &DiscoveredTool> = HashMap::new();
    for (_, t) in c.discovery.tools() {
        let key = normalized(&t.tool.name);
        match seen.get(&key) {
            Some(first) if first.tool.name != t.tool.name => out.push(
                t.diagnostic(
                    DUPLICATE_TOOL_NAME,
                    format!(
                        "tool name `{}` differs from `{}` only in case or `-`/`_`",
                        t.tool.name, first.tool.name
                    ),
                )
                .label("this name")
                .also(first.name_label(format!("`{}` is defined here", first.tool.name)))
                .note("models and several providers do not tell such names apart")
                .help("rename one of them (`name = \"...\"` in #[hermes_tool])"),
            ),
            Some(_) => {}
            None => {
                seen.insert(key, t);
            }
        }
    }
    for a in &c.table.aliases {
        if let Some(t) = seen.get(&normalized(&a.alias.name)) {
            out.push(
                t.diagnostic(
                    DUPLICATE_TOOL_NAME,
                    format!(
                        "tool `{}` has the name of the toolset alias `{}`",
                        t.tool.name, a.alias.name
                    ),
                )
                .label("this tool")
                .also(Label {
                    file: TOOLSETS_FILE.into(),
                    line: a.alias.pos.line,
                    column: a.alias.pos.column,
                    len: a.alias.name.chars().count(),
                    message: "the alias".into(),
                })
                .help("rename the tool or the alias"),
            );
        }
    }
    for bridge in BRIDGE_TOOLS {
        if let Some(t) = seen.get(&normalized(bridge)) {
            out.push(
                t.diagnostic(
                    DUPLICATE_TOOL_NAME,
                    format!(
                        "tool `{}` has the name of the bridge tool `{bridge}`",
                        t.tool.name
                    ),
                )
                .label("reserved name")
                .note(format!(
                    "{} are added when schemas are deferred (progressive disclosure)",
                    BRIDGE_TOOLS.join(", ")
                ))
                .help("rename the tool (`name = \"...\"` in #[hermes_tool])"),
            );
        }
    }
}

// ---------------------------------------------------------------------------
// allow(...)
// ---------------------------------------------------------------------------

/// Drops the diagnostics a tool allows; with `full`, warns about allows
/// that suppressed nothing (a source-only run cannot tell).
pub fn apply_allows(
    discovery: &Discovery,
    diagnostics: Vec<Diagnostic>,
    full: bool,
) -> Vec<Diagnostic> {
    let tools: BTreeMap<&str, &DiscoveredTool> = discovery
        .tools()
        .map(|(_, t)| (t.tool.name.as_str(), t))
        .collect();
    let mut used: BTreeSet<(String, &'static str)> = BTreeSet::new();
    let mut kept: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| {
            let (Some(tool), Some(lint)) = (&d.tool, d.lint) else {
                return true;
            };
            let allowed = tools
                .get(tool.as_str())
                .is_some_and(|t| t.tool.attr.allow.iter().any(|a| a.lint == lint));
            if allowed {
                used.insert((tool.clone(), lint));
            }
            !allowed
        })
        .collect();
    if full {
        for t in tools.values() {
            for a in &t.tool.attr.allow {
                if used.contains(&(t.tool.name.clone(), a.lint)) {
                    continue;
                }
                let start = a.span.start();
                kept.push(
                    Diagnostic::warning(format!(
                        "`{}` allows `{}`, which finds nothing to allow",
                        t.tool.name, a.lint
                    ))
                    .at(&t.file, start.line, start.column)
                    .underline(a.lint.chars().count())
                    .label("unused")
                    .help("remove this entry from allow(...)")
                    .tool(&t.tool.name),
                );
                if let Some(d) = kept.last_mut() {
                    d.lint = Some(UNUSED_ALLOW);
                }
            }
        }
    }
    kept
}

// ---------------------------------------------------------------------------
// Schema-level lints
// ---------------------------------------------------------------------------

/// Every schema-level lint, over `schemas` (tool name → `parameters`).
#[cfg(feature = "schema")]
pub fn check_schemas(
    c: Crate<'_>,
    schemas: &BTreeMap<String, serde_json::Value>,
) -> Vec<Diagnostic> {
    schema::check(c, schemas)
}

#[cfg(feature = "schema")]
mod schema {
    use super::*;
    use hermes_runtime::dialect::{rewrite, Dialect};
    use serde_json::{json, Map, Value};

    pub(super) fn check(c: Crate<'_>, schemas: &BTreeMap<String, Value>) -> Vec<Diagnostic> {
        let names = ToolNames::new(c.discovery);
        let instructional = InstructionalToolsets::new(c.table);
        let meta = jsonschema::draft7::meta::validator();
        let mut out = Vec::new();
        for (_, t) in c.discovery.tools() {
            let Some(parameters) = schemas.get(&t.tool.name) else {
                out.push(
                    Diagnostic::error(format!(
                        "no compiled schema for `{}`: the registry is older than the sources",
                        t.tool.name
                    ))
                    .at_span(&t.file, t.name_span())
                    .help("run `cargo xtask gen`"),
                );
                continue;
            };
            let source = c.discovery.sources.get(&t.file).map_or("", String::as_str);
            let here = Place { tool: t, source };
            // A schema that is not valid JSON Schema, or not an object, is
            // reported once, not again by every dialect.
            if invalid_schema(t, parameters, &meta, &mut out) {
                dialects(t, parameters, &mut out);
            }
            nested_texts(&here, &names, parameters, &mut out);
            args_struct_properties(t, &instructional, parameters, &mut out);
        }
        let known: BTreeSet<&str> = c
            .discovery
            .tools()
            .map(|(_, t)| t.tool.name.as_str())
            .collect();
        for name in schemas.keys().filter(|n| !known.contains(n.as_str())) {
            out.push(
                Diagnostic::error(format!(
                    "the compiled registry has `{name}`, which the sources no longer define"
                ))
                .help("run `cargo xtask gen`"),
            );
        }
        out
    }

    /// JSON pointer escaping (RFC 6901).
    fn escape(key: &str) -> String {
        key.replace('~', "~0").replace('/', "~1")
    }

    /// Calls `f(pointer, schema)` on `schema` and every subschema under it.
    fn walk(schema: &Value, pointer: &str, f: &mut dyn FnMut(&str, &Map<String, Value>)) {
        let Value::Object(map) = schema else { return };
        f(pointer, map);
        for (key, value) in map {
            let here = format!("{pointer}/{}", escape(key));
            match key.as_str() {
                "properties" | "patternProperties" | "definitions" | "$defs"
                | "dependentSchemas" | "dependencies" => {
                    if let Value::Object(children) = value {
                        for (name, child) in children {
                            walk(child, &format!("{here}/{}", escape(name)), f);
                        }
                    }
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" if value.is_array() => {
                    for (i, child) in value.as_array().into_iter().flatten().enumerate() {
                        walk(child, &format!("{here}/{i}"), f);
                    }
                }
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "contains"
                | "not"
                | "if"
                | "then"
                | "else"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems" => walk(value, &here, f),
                _ => {}
            }
        }
    }

    fn has_type(map: &Map<String, Value>, ty: &str) -> bool {
        match map.get("type") {
            Some(Value::String(s)) => s == ty,
            Some(Value::Array(types)) => types.iter().any(|t| t == ty),
            _ => false,
        }
    }

    fn show(pointer: &str) -> &str {
        if pointer.is_empty() {
            "(root)"
        } else {
            pointer
        }
    }

    /// Rule 8: the meta-schema, and what function-calling providers accept.
    /// `false` when the schema is not valid JSON Schema or not an object.
    fn invalid_schema(
        t: &DiscoveredTool,
        parameters: &Value,
        meta: &jsonschema::meta::MetaValidator<'_>,
        out: &mut Vec<Diagnostic>,
    ) -> bool {
        let name = &t.tool.name;
        let mut first_path = None;
        let errors: Vec<String> = meta
            .iter_errors(parameters)
            .map(|e| {
                let path = e.instance_path().as_str().to_owned();
                let line = format!("at {}: {e}", show(&path));
                first_path.get_or_insert(path);
                line
            })
            .collect();
        let mut valid = errors.is_empty();
        if !errors.is_empty() {
            let mut d = t
                .diagnostic(
                    INVALID_SCHEMA,
                    format!(
                        "the parameters schema of `{name}` is not valid JSON Schema (draft-07)"
                    ),
                )
                .label("its schema is invalid");
            for e in errors {
                d = d.note(e);
            }
            let d = on_param(t, first_path.as_deref().unwrap_or_default(), d);
            out.push(d.help("fix the parameter types' `JsonSchema` implementations"));
        }
        match parameters.as_object() {
            Some(root)
                if has_type(root, "object") && !root.get("type").is_some_and(Value::is_array) => {}
            _ => {
                valid = false;
                out.push(
                t.diagnostic(
                    INVALID_SCHEMA,
                    format!("the parameters of `{name}` are not an object schema"),
                )
                .label("its parameters")
                .note("function-calling providers take the arguments as one JSON object: `parameters` must have `\"type\": \"object\"`"),
            );
            }
        }
        let mut problems = Vec::new();
        walk(parameters, "", &mut |pointer, map| {
            if map.contains_key("$ref") {
                problems.push((
                    pointer.to_owned(),
                    format!("the parameters schema of `{name}` uses `$ref` at `{}`", show(pointer)),
                    "providers need every subschema inlined; schemars inlines them unless a type is recursive",
                ));
            }
            if has_type(map, "object") && !map.contains_key("properties") {
                problems.push((
                    pointer.to_owned(),
                    format!(
                        "the parameters schema of `{name}` has an object without `properties` at `{}`",
                        show(pointer)
                    ),
                    "strict backends (llama.cpp's grammar converter, OpenAI strict mode, Gemini) reject a bare object; use a struct with named fields",
                ));
            }
        });
        for (pointer, message, note) in problems {
            let d = t
                .diagnostic(INVALID_SCHEMA, message)
                .label("in this tool's parameters")
                .note(note);
            let d = on_param(t, &pointer, d);
            out.push(d);
        }
        valid
    }

    /// Rule 11: every provider dialect can carry the schema.
    fn dialects(t: &DiscoveredTool, parameters: &Value, out: &mut Vec<Diagnostic>) {
        let tool = json!({
            "name": t.tool.name,
            "description": t.tool.description,
            "parameters": parameters,
        });
        for dialect in Dialect::ALL {
            let Err(issues) = rewrite(&tool, dialect) else {
                continue;
            };
            let mut d = t
                .diagnostic(
                    DIALECT_INCOMPATIBLE,
                    format!(
                        "the schema of `{}` does not rewrite into the `{dialect}` dialect",
                        t.tool.name
                    ),
                )
                .label(format!("not for {dialect}"));
            if let Some(first) = issues.first() {
                d = on_param(t, &first.path, d);
            }
            for issue in issues {
                d = d.note(format!("at {}: {}", show(&issue.path), issue.message));
            }
            out.push(d.help(format!(
                "use parameter types every provider can express, or `allow(dialect-incompatible = \"...\")` if `{}` is never offered to {dialect} backends",
                t.tool.name
            )));
        }
    }

    /// Rules 1 and 7 on the descriptions inside the schema that the
    /// source-level pass did not see (nested properties, `args` fields).
    fn nested_texts(
        here: &Place<'_>,
        names: &ToolNames<'_>,
        parameters: &Value,
        out: &mut Vec<Diagnostic>,
    ) {
        let tool = &here.tool.tool;
        let linted: BTreeSet<String> = tool
            .schema_params()
            .filter_map(|p| match &p.kind {
                ParamKind::Property {
                    name,
                    description: Some(_),
                    ..
                } => Some(format!("/properties/{}", escape(name))),
                _ => None,
            })
            .collect();
        let mut texts: Vec<(String, String)> = Vec::new();
        walk(parameters, "", &mut |pointer, map| {
            if linted.contains(pointer) {
                return;
            }
            if let Some(Value::String(d)) = map.get("description") {
                texts.push((format!("{pointer}/description"), d.clone()));
            }
        });
        for (pointer, description) in texts {
            let text = Text {
                text: &description,
                spans: &[],
                whose: format!("a description in the parameters of `{}`", tool.name),
                pointer: Some(&pointer),
            };
            foreign_tools(here, names, &text, out);
            home_paths(here, &text, out);
        }
    }

    /// Rules 10 and 6 on properties the source does not declare one by one
    /// (the fields of an `args` struct).
    fn args_struct_properties(
        t: &DiscoveredTool,
        instructional: &InstructionalToolsets<'_>,
        parameters: &Value,
        out: &mut Vec<Diagnostic>,
    ) {
        let declared: BTreeSet<&str> = t
            .tool
            .schema_params()
            .filter_map(|p| match &p.kind {
                ParamKind::Property { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let Some(Value::Object(properties)) = parameters.get("properties") else {
            return;
        };
        for (name, schema) in properties {
            if declared.contains(name.as_str()) {
                continue;
            }
            let described = schema
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if !described {
                out.push(
                    t.diagnostic(
                        UNDOCUMENTED_PARAMETER,
                        format!("parameter `{name}` of `{}` has no description", t.tool.name),
                    )
                    .label(format!("`{name}` is a field of its arguments struct"))
                    .note("the model reads the description to know what to send")
                    .help(format!(
                        "write a doc comment on the field `{name}` of the arguments struct"
                    )),
                );
            }
            if let Some(toolset) = instructional.of(&t.tool) {
                if PAGINATION_PARAMS.contains(&name.as_str()) {
                    let d = pagination(t, toolset, name)
                        .at_span(&t.file, t.name_span())
                        .label(format!("`{name}` is a field of its arguments struct"));
                    out.push(d);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only() {
        assert_eq!(
            occurrences("patch dispatch patch-x patch.", "patch", true),
            vec![0, 23]
        );
        let w: Vec<_> = words("use `read_file`, then patch.")
            .map(|(_, w)| w)
            .collect();
        assert_eq!(w, ["use", "read_file", "then", "patch"]);
    }

    #[test]
    fn home_paths_and_their_placeholder_form() {
        let found = find_home_paths(
            "Reads ~/.hermes/skills/x.md, $HOME/.hermes, ${HOME}/a, /home/al/.hermes/db. Not $HOMEBREW, /data/home/x or {HERMES_HOME}/ok.",
        );
        let paths: Vec<_> = found.iter().map(|(_, p, f)| (*p, f.as_deref())).collect();
        assert_eq!(
            paths,
            [
                ("~/.hermes/skills/x.md", Some("{HERMES_HOME}/skills/x.md")),
                ("$HOME/.hermes", Some("{HERMES_HOME}")),
                ("${HOME}/a", None),
                ("/home/al/.hermes/db", Some("{HERMES_HOME}/db")),
            ]
        );
    }

    #[test]
    fn normalized_names_collide() {
        assert_eq!(normalized("Read-File"), normalized("read_file"));
        assert_ne!(normalized("readfile"), normalized("read_file"));
    }
}
