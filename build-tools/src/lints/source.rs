//! Source-level lints: they read the `#[hermes_tool]` functions and
//! toolsets.toml and point into the doc comments.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hermes_tool_facts::{is_name_char, BRIDGE_TOOLS, HOME_PLACEHOLDER};
use hermes_tool_model::lints::*;
use hermes_tool_model::{contradictions, ParamKind, ToolFn};

use crate::diagnostic::Label;
use crate::discover::{DiscoveredTool, Discovery};
use crate::toolsets::Table;
use crate::{Diagnostic, TOOLSETS_FILE};

use super::base::{Crate, MAX_DESCRIPTION_CHARS, PAGINATION_PARAMS};
use super::location::{place, words, Place, Text};

/// Every source-level lint of one crate (the toolset table's own checks
/// are [`crate::validate_toolsets`]).
pub fn check_sources(c: Crate<'_>) -> Vec<Diagnostic> {
    let names = ToolNames::new(c.discovery, c.table);
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
        // Rules 11 and 12: effect keys that contradict each other (the
        // macro reports the same list, `hermes_tool_model::contradictions`).
        for c in contradictions(&t.tool.attr.effects) {
            out.push(
                t.diagnostic(c.lint, format!("`{}`: {}", t.tool.name, c.message))
                    .at_span(&t.file, c.span)
                    .label("contradicts")
                    .help(c.help),
            );
        }
    }
    duplicate_names(c, &mut out);
    out
}

/// Tool name → tool, for the whole-word search of rule 1.
/// Every tool of the composition (this crate's and those of the crates it
/// builds on) → its toolset: the cross-tool rules look across crates.
pub(super) struct ToolNames<'a> {
    pub(super) by_name: HashMap<&'a str, &'a str>,
}

impl<'a> ToolNames<'a> {
    pub(super) fn new(discovery: &'a Discovery, table: &'a Table) -> Self {
        let mut by_name: HashMap<&str, &str> = table
            .base
            .tools
            .iter()
            .map(|(t, set, _)| (t.as_str(), set.as_str()))
            .collect();
        // This crate's own tools win (an `override` of a base tool).
        by_name.extend(
            discovery
                .tools()
                .map(|(_, t)| (t.tool.name.as_str(), t.tool.attr.toolset())),
        );
        ToolNames { by_name }
    }
}

/// Rule 1: mentions of tools registered into another toolset.
pub(super) fn foreign_tools(
    here: &Place<'_>,
    names: &ToolNames<'_>,
    text: &Text<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let tool = &here.tool.tool;
    let own = tool.attr.toolset();
    let mut reported = BTreeSet::new();
    for (at, word) in words(text.text) {
        let Some(theirs) = names.by_name.get(word).copied() else {
            continue;
        };
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
pub(super) fn find_home_paths(text: &str) -> Vec<(usize, &str, Option<String>)> {
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
pub(super) fn placeholder_form(path: &str) -> Option<String> {
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
pub(super) fn home_paths(here: &Place<'_>, text: &Text<'_>, out: &mut Vec<Diagnostic>) {
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
pub(super) struct InstructionalToolsets<'a> {
    /// Instructional toolset names.
    pub(super) names: BTreeSet<&'a str>,
    /// Tool → the instructional toolset listing it.
    pub(super) listed: BTreeMap<&'a str, &'a str>,
}

impl<'a> InstructionalToolsets<'a> {
    pub(super) fn new(table: &'a Table) -> Self {
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
    pub(super) fn of(&self, tool: &ToolFn) -> Option<&'a str> {
        let own = tool.attr.toolset();
        if let Some(name) = self.names.get(own) {
            return Some(name);
        }
        self.listed.get(tool.name.as_str()).copied()
    }
}

pub(super) fn pagination(t: &DiscoveredTool, toolset: &str, param: &str) -> Diagnostic {
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
pub(super) fn not_in_toolset(c: Crate<'_>, t: &DiscoveredTool) -> Diagnostic {
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
pub(super) fn normalized(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

/// Rule 4 (exact duplicates are discovery's error): names equal after
/// normalizing, and names of aliases and bridge tools.
pub(super) fn duplicate_names(c: Crate<'_>, out: &mut Vec<Diagnostic>) {
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
    // Across the composition: a name of a crate this one builds on is
    // taken only with `override` (the registry refuses it otherwise).
    for (name, toolset, package) in &c.table.base.tools {
        if let Some(t) = seen.get(&normalized(name)) {
            if t.tool.attr.override_existing && t.tool.name == *name {
                continue;
            }
            out.push(
                t.diagnostic(
                    DUPLICATE_TOOL_NAME,
                    format!(
                        "tool `{}` has the name of `{name}`, a tool of `{package}` (toolset `{toolset}`)",
                        t.tool.name
                    ),
                )
                .label("this name")
                .note(format!(
                    "this crate builds on `{package}`: a registry composing both would refuse the second definition"
                ))
                .help("rename it, or add `override` to its #[hermes_tool] to replace the base tool"),
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

#[cfg(test)]
mod tests {
    use super::*;

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
