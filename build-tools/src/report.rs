//! Renders diagnostics: rustc-style text with the offending source
//! underlined (codespan-reporting, plain ASCII), or JSON for machines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Chars, Config};
use serde_json::{json, Map, Value};

use crate::{Diagnostic, Severity};

/// The files diagnostics point into, read once from a crate root.
pub struct Sources {
    root: PathBuf,
    display_root: Option<PathBuf>,
    files: SimpleFiles<String, String>,
    ids: BTreeMap<PathBuf, Option<usize>>,
}

impl Sources {
    /// Files are read from `root` (paths in diagnostics are relative to it).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Sources {
            root: root.into(),
            display_root: None,
            files: SimpleFiles::new(),
            ids: BTreeMap::new(),
        }
    }

    /// Prints paths joined to `prefix` instead of relative to the crate
    /// root (a build script prints absolute paths, which stay clickable
    /// wherever cargo was started).
    pub fn display_root(mut self, prefix: impl Into<PathBuf>) -> Self {
        self.display_root = Some(prefix.into());
        self
    }

    /// Uses `text` for `file` instead of reading it.
    pub fn insert(&mut self, file: &Path, text: String) {
        let id = self.files.add(self.display_name(file), text);
        self.ids.insert(file.to_path_buf(), Some(id));
    }

    fn display_name(&self, file: &Path) -> String {
        match &self.display_root {
            Some(prefix) => prefix.join(file).display().to_string(),
            None => file.display().to_string().replace('\\', "/"),
        }
    }

    fn id(&mut self, file: &Path) -> Option<usize> {
        if let Some(id) = self.ids.get(file) {
            return *id;
        }
        let id = std::fs::read_to_string(self.root.join(file))
            .ok()
            .map(|text| self.files.add(self.display_name(file), text));
        self.ids.insert(file.to_path_buf(), id);
        id
    }

    /// The byte range of `len` characters (at least one) from a 1-based
    /// line and column, clamped to the line.
    fn range(&self, id: usize, line: usize, column: usize, len: usize) -> Option<(usize, usize)> {
        let text = self.files.get(id).ok()?.source();
        let line_text = text.split_inclusive('\n').nth(line.checked_sub(1)?)?;
        let line_start = line_text.as_ptr() as usize - text.as_ptr() as usize;
        let content = line_text.trim_end_matches(['\n', '\r']);
        let byte_at = |chars: usize| {
            content
                .char_indices()
                .nth(chars)
                .map_or(content.len(), |(i, _)| i)
        };
        let start = byte_at(column.saturating_sub(1));
        let end = byte_at(column.saturating_sub(1) + len.max(1)).max(start);
        Some((line_start + start, line_start + end))
    }
}

/// Renders every diagnostic rustc-style, each followed by a blank line.
pub fn render_text(diagnostics: &[Diagnostic], sources: &mut Sources) -> String {
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let mut out = String::new();
    for d in diagnostics {
        let (rendered, fallback) = to_codespan(d, sources);
        match term::emit_into_string(&config, &sources.files, &rendered) {
            Ok(text) => out.push_str(&text),
            Err(_) => out.push_str(&d.to_string()),
        }
        if let Some(fallback) = fallback {
            // The file could not be read: keep its position visible.
            out.push_str(&fallback);
            out.push('\n');
        }
    }
    out
}

fn to_codespan(d: &Diagnostic, sources: &mut Sources) -> (cs::Diagnostic<usize>, Option<String>) {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut out = cs::Diagnostic::new(severity).with_message(&d.message);
    if let Some(lint) = d.lint {
        out = out.with_code(lint);
    }
    let mut fallback = None;
    let mut labels = Vec::new();
    if let Some(file) = &d.file {
        let located = sources
            .id(file)
            .and_then(|id| Some((id, sources.range(id, d.line, d.column, d.len)?)));
        match located {
            Some((id, (start, end))) => {
                let label = cs::Label::primary(id, start..end);
                labels.push(match &d.label {
                    Some(text) => label.with_message(text),
                    None => label,
                });
            }
            None => {
                fallback = Some(format!(
                    "  --> {}:{}:{}\n",
                    sources.display_name(file),
                    d.line,
                    d.column
                ))
            }
        }
    }
    for l in &d.secondary {
        if let Some(id) = sources.id(&l.file) {
            if let Some((start, end)) = sources.range(id, l.line, l.column, l.len) {
                labels.push(cs::Label::secondary(id, start..end).with_message(&l.message));
            }
        }
    }
    let notes = d
        .notes
        .iter()
        .map(|n| format!("note: {n}"))
        .chain(d.help.iter().map(|h| format!("help: {h}")))
        .collect();
    (out.with_labels(labels).with_notes(notes), fallback)
}

/// The closing line: `error: 2 errors, 1 warning ...` or a clean bill.
pub fn summary(diagnostics: &[Diagnostic], what: &str) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("1 {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    match (errors, warnings) {
        (0, 0) => format!("{what}: no problems found"),
        (0, w) => format!("warning: {what}: {}", plural(w, "warning")),
        (e, 0) => format!("error: {what}: {}", plural(e, "error")),
        (e, w) => format!(
            "error: {what}: {}, {}",
            plural(e, "error"),
            plural(w, "warning")
        ),
    }
}

/// One diagnostic as a JSON object. Positions are 1-based; `end_column`
/// is exclusive; paths are relative to the crate root.
pub fn to_json(d: &Diagnostic) -> Value {
    let mut o = Map::new();
    o.insert("lint".into(), json!(d.lint));
    o.insert("severity".into(), json!(d.severity.as_str()));
    o.insert("message".into(), json!(d.message));
    o.insert("tool".into(), json!(d.tool));
    let path = |p: &Path| p.display().to_string().replace('\\', "/");
    match &d.file {
        Some(file) => {
            o.insert("file".into(), json!(path(file)));
            o.insert("line".into(), json!(d.line));
            o.insert("column".into(), json!(d.column));
            o.insert("end_column".into(), json!(d.column + d.len.max(1)));
        }
        None => {
            o.insert("file".into(), Value::Null);
        }
    }
    o.insert("label".into(), json!(d.label));
    let secondary: Vec<Value> = d
        .secondary
        .iter()
        .map(|l| {
            json!({
                "file": path(&l.file),
                "line": l.line,
                "column": l.column,
                "end_column": l.column + l.len.max(1),
                "message": l.message,
            })
        })
        .collect();
    o.insert("secondary".into(), Value::Array(secondary));
    o.insert("notes".into(), json!(d.notes));
    o.insert("help".into(), json!(d.help));
    Value::Object(o)
}

/// The length of the TOML token at a 1-based line and column of `text`: a
/// quoted string with its quotes, or a bare key.
pub fn token_len(text: &str, line: usize, column: usize) -> usize {
    let Some(line_text) = line.checked_sub(1).and_then(|l| text.lines().nth(l)) else {
        return 0;
    };
    let mut chars = line_text.chars().skip(column.saturating_sub(1)).peekable();
    match chars.peek().copied() {
        Some(q @ ('"' | '\'')) => {
            let mut len = 1;
            let mut escaped = false;
            for c in chars.skip(1) {
                len += 1;
                if c == q && !escaped {
                    return len;
                }
                escaped = c == '\\' && !escaped;
            }
            len
        }
        _ => chars
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))
            .count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_lengths() {
        let text = "a = [\"read_file\", 'x']\n[toolsets.file-x]\n";
        assert_eq!(token_len(text, 1, 6), "\"read_file\"".len());
        assert_eq!(token_len(text, 1, 19), 3);
        assert_eq!(token_len(text, 2, 11), "file-x".len());
        assert_eq!(token_len(text, 9, 1), 0);
    }

    #[test]
    fn summary_lines() {
        let e = Diagnostic::error("x");
        let w = Diagnostic::warning("y");
        assert_eq!(summary(&[], "check"), "check: no problems found");
        assert_eq!(
            summary(std::slice::from_ref(&e), "check"),
            "error: check: 1 error"
        );
        assert_eq!(
            summary(&[e.clone(), e, w], "check"),
            "error: check: 2 errors, 1 warning"
        );
    }
}
