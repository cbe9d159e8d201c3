//! Finds every `#[hermes_tool]` function of a tools crate, with no list kept
//! by hand.
//!
//! Under `src/tools/`:
//! - `NAME.rs` is a tool module when it has a top-level `#[hermes_tool]` fn;
//! - `NAME/tool.rs` is the one file scanned in a folder: the folder is a tool
//!   module when that file has one. Every other file of the folder is a
//!   helper by construction (`mod helper;` from `tool.rs`); a helper that
//!   carries `#[hermes_tool]` is an error, since it would never register.
//!
//! Files and folders are visited in sorted order, so output is stable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hermes_tool_model::lints::DUPLICATE_TOOL_NAME;
use hermes_tool_model::{analyze, attribute_tokens, is_tool_attribute, ToolFn};
use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::diagnostic::Label;
use crate::{Diagnostic, TOOLS_DIR};

/// A module of the tools crate that registers tools.
#[derive(Debug, Clone)]
pub struct ToolModule {
    /// The Rust module name (the file stem or the folder name).
    pub name: String,
    /// Path relative to the crate root (`src/tools/file/tool.rs`).
    pub file: PathBuf,
    pub tools: Vec<DiscoveredTool>,
}

/// One tool and where it is written.
#[derive(Debug, Clone)]
pub struct DiscoveredTool {
    pub tool: ToolFn,
    /// Path relative to the crate root.
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl DiscoveredTool {
    /// Where the tool's name is written: `name = "..."` when given, else
    /// the function's name.
    pub fn name_span(&self) -> Span {
        self.tool
            .attr
            .name
            .as_ref()
            .map_or(self.tool.span, |(_, span)| *span)
    }

    /// The tool's name in the source, labelled.
    pub fn name_label(&self, message: impl Into<String>) -> Label {
        let d = Diagnostic::error("").at_span(&self.file, self.name_span());
        Label {
            file: self.file.clone(),
            line: d.line,
            column: d.column,
            len: d.len,
            message: message.into(),
        }
    }

    /// A diagnostic of `lint` about this tool, underlining its name.
    pub fn diagnostic(&self, lint: &'static str, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::lint(lint, message).at_span(&self.file, self.name_span());
        if d.line == 0 {
            // No position (the tool was not parsed from a file).
            d = d.at(&self.file, self.line, self.column.saturating_sub(1));
        }
        d.tool(&self.tool.name)
    }
}

/// Everything found in one tools crate.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub modules: Vec<ToolModule>,
    /// Warnings that do not stop generation.
    pub warnings: Vec<Diagnostic>,
    /// The text of every tool file read, by path relative to the crate root
    /// (for the lints, which point into descriptions).
    pub sources: BTreeMap<PathBuf, String>,
}

impl Discovery {
    pub fn tools(&self) -> impl Iterator<Item = (&ToolModule, &DiscoveredTool)> {
        self.modules
            .iter()
            .flat_map(|m| m.tools.iter().map(move |t| (m, t)))
    }
}

/// Discovers the tools of the crate rooted at `crate_root`.
///
/// Errors (unparsable files, invalid attributes, duplicate names, helpers
/// with tools) are all collected and returned together.
pub fn discover(crate_root: &Path) -> Result<Discovery, Vec<Diagnostic>> {
    let tools_dir = crate_root.join(TOOLS_DIR);
    let mut errors = Vec::new();
    let mut discovery = Discovery::default();

    let entries = match sorted_entries(&tools_dir) {
        Ok(entries) => entries,
        Err(e) => {
            return Err(vec![Diagnostic::error(format!(
                "cannot read the tools folder {}: {e}",
                tools_dir.display()
            ))])
        }
    };

    let mut module_names: BTreeMap<String, PathBuf> = BTreeMap::new();
    for path in entries {
        let rel = relative(crate_root, &path);
        let (module, file) = if path.is_dir() {
            let tool_rs = path.join("tool.rs");
            check_helpers(crate_root, &path, &mut errors);
            if !tool_rs.is_file() {
                continue;
            }
            (file_name(&path), tool_rs)
        } else if path.extension().is_some_and(|e| e == "rs") {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (stem, path.clone())
        } else {
            continue;
        };
        let file_rel = relative(crate_root, &file);
        let Some((tools, source)) = scan_file(crate_root, &file, &mut errors) else {
            continue;
        };
        discovery.sources.insert(file_rel.clone(), source);
        if tools.is_empty() {
            if module != "mod" {
                discovery.warnings.push(
                    Diagnostic::warning(format!(
                        "{} has no top-level #[hermes_tool] function; it is not compiled",
                        file_rel.display()
                    ))
                    .note("tool files live in src/tools/; put shared helpers in a folder tool beside its tool.rs, or in the crate's lib.rs modules"),
                );
            }
            continue;
        }
        if syn::parse_str::<syn::Ident>(&module).is_err() {
            errors.push(
                Diagnostic::error(format!(
                    "`{module}` is not a valid Rust module name; rename {}",
                    rel.display()
                ))
                .at(&file_rel, 1, 0),
            );
            continue;
        }
        if let Some(previous) = module_names.insert(module.clone(), file_rel.clone()) {
            errors.push(
                Diagnostic::error(format!(
                    "two tool modules are both named `{module}`: {} and {}",
                    previous.display(),
                    file_rel.display()
                ))
                .at(&file_rel, 1, 0),
            );
            continue;
        }
        discovery.modules.push(ToolModule {
            name: module,
            file: file_rel,
            tools,
        });
    }

    check_duplicate_names(&discovery, &mut errors);

    if errors.is_empty() {
        Ok(discovery)
    } else {
        Err(errors)
    }
}

fn check_duplicate_names(discovery: &Discovery, errors: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<&str, &DiscoveredTool> = BTreeMap::new();
    for (_, tool) in discovery.tools() {
        if let Some(first) = seen.insert(tool.tool.name.as_str(), tool) {
            errors.push(
                tool.diagnostic(
                    DUPLICATE_TOOL_NAME,
                    format!("duplicate tool name `{}`", tool.tool.name),
                )
                .label("defined again here")
                .also(first.name_label("first defined here"))
                .help("tool names are global: set `name = \"...\"` on one of them"),
            );
        }
    }
}

/// Parses one file and analyzes its top-level `#[hermes_tool]` functions;
/// returns them with the file's text. `None` when the file cannot be read
/// or parsed (an error is recorded).
fn scan_file(
    crate_root: &Path,
    file: &Path,
    errors: &mut Vec<Diagnostic>,
) -> Option<(Vec<DiscoveredTool>, String)> {
    let rel = relative(crate_root, file);
    let source = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            errors.push(Diagnostic::error(format!(
                "cannot read {}: {e}",
                rel.display()
            )));
            return None;
        }
    };
    let ast = match syn::parse_file(&source) {
        Ok(ast) => ast,
        Err(e) => {
            let start = e.span().start();
            errors.push(
                Diagnostic::error(format!("cannot parse {}: {e}", rel.display())).at(
                    &rel,
                    start.line,
                    start.column,
                ),
            );
            return None;
        }
    };
    let mut tools = Vec::new();
    for item in &ast.items {
        let syn::Item::Fn(func) = item else { continue };
        let Some(attr) = func.attrs.iter().find(|a| is_tool_attribute(a)) else {
            continue;
        };
        match analyze(attribute_tokens(attr), func) {
            Ok(tool) => {
                let start = tool.span.start();
                tools.push(DiscoveredTool {
                    tool,
                    file: rel.clone(),
                    line: start.line,
                    column: start.column + 1,
                });
            }
            Err(err) => {
                for e in err {
                    let span = fix_call_site(e.span(), attr.span());
                    errors.push(Diagnostic::error(e.to_string()).at_span(&rel, span));
                }
            }
        }
    }
    Some((tools, source))
}

/// Errors the model raises at `Span::call_site()` (the attribute itself)
/// have no position outside a macro; place them on the attribute.
fn fix_call_site(span: Span, attr: Span) -> Span {
    if span.start().line == 0 {
        attr
    } else {
        span
    }
}

/// A folder's files other than `tool.rs` must not carry tools.
fn check_helpers(crate_root: &Path, dir: &Path, errors: &mut Vec<Diagnostic>) {
    let Ok(entries) = sorted_entries(dir) else {
        return;
    };
    for path in entries {
        if path.is_dir() {
            check_helpers(crate_root, &path, errors);
            continue;
        }
        if path.file_name().is_some_and(|n| n == "tool.rs") && path.parent() == Some(dir)
            || path.extension().is_none_or(|e| e != "rs")
        {
            continue;
        }
        let mut scratch = Vec::new();
        if let Some((tools, _)) = scan_file(crate_root, &path, &mut scratch) {
            if let Some(t) = tools.first() {
                errors.push(
                    Diagnostic::error(format!(
                        "`{}` is in a helper file of a folder tool and would never register",
                        t.tool.name
                    ))
                    .at(&t.file, t.line, t.column.saturating_sub(1))
                    .note(format!(
                        "a folder tool registers only from {}/tool.rs; move it there",
                        relative(crate_root, dir).display()
                    )),
                );
            }
        }
    }
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        entries.push(entry?.path());
    }
    entries.sort();
    Ok(entries)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}
