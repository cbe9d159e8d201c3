//! Diagnostics about tool sources: a message tied to a file, line and column,
//! optionally a lint name, a span to underline and further labelled places.
//! `report.rs` renders them rustc-style or as JSON.

use std::fmt;
use std::path::PathBuf;

use proc_macro2::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A further place a diagnostic points at (the first definition of a
/// duplicate, the toolset to add a tool to), with a short label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Path relative to the crate root.
    pub file: PathBuf,
    /// 1-based line and column (in characters).
    pub line: usize,
    pub column: usize,
    /// How many characters to underline (0: one).
    pub len: usize,
    pub message: String,
}

/// One problem found in a tools crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The stable lint name (`literal-home-path`), when a lint of the tool
    /// contract found the problem; `None` for errors that are not lints
    /// (unparsable files, a missing folder, ...).
    pub lint: Option<&'static str>,
    pub message: String,
    /// Path relative to the crate root, when the problem is in a file.
    pub file: Option<PathBuf>,
    /// 1-based line and column (in characters).
    pub line: usize,
    pub column: usize,
    /// How many characters from `column`, on the same line, are the
    /// offending source (0: just the position).
    pub len: usize,
    /// Text under the underlined span.
    pub label: Option<String>,
    /// Other places involved.
    pub secondary: Vec<Label>,
    /// Further facts, printed as `note:` lines.
    pub notes: Vec<String>,
    /// What to do about it, printed as `help:` lines.
    pub help: Vec<String>,
    /// The tool the problem is about: `allow(...)` on that tool applies.
    pub tool: Option<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            lint: None,
            message: message.into(),
            file: None,
            line: 0,
            column: 0,
            len: 0,
            label: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
            tool: None,
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }

    /// An error found by the lint `lint`.
    pub fn lint(lint: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            lint: Some(lint),
            ..Diagnostic::error(message)
        }
    }

    /// Places the diagnostic at a 1-based line and 0-based column (as
    /// `proc_macro2::LineColumn` gives them).
    pub fn at(mut self, file: impl Into<PathBuf>, line: usize, column0: usize) -> Self {
        self.file = Some(file.into());
        self.line = line;
        self.column = column0 + 1;
        self
    }

    /// Places the diagnostic on a span of a file parsed with `syn` (the
    /// span's first line only).
    pub fn at_span(self, file: impl Into<PathBuf>, span: Span) -> Self {
        let (start, end) = (span.start(), span.end());
        let len = if end.line == start.line {
            end.column.saturating_sub(start.column)
        } else {
            0
        };
        self.at(file, start.line, start.column).underline(len)
    }

    /// Underlines `len` characters from the position.
    pub fn underline(mut self, len: usize) -> Self {
        self.len = len;
        self
    }

    /// The text under the underlined span.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Another place involved, with a label.
    pub fn also(mut self, label: Label) -> Self {
        self.secondary.push(label);
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// The tool the problem is about.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A short, unstyled form without source lines (`report::render_text` is
/// the full one).
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = self.severity.as_str();
        match self.lint {
            Some(lint) => writeln!(f, "{level}[{lint}]: {}", self.message)?,
            None => writeln!(f, "{level}: {}", self.message)?,
        }
        if let Some(file) = &self.file {
            writeln!(f, "  --> {}:{}:{}", file.display(), self.line, self.column)?;
        }
        for note in &self.notes {
            writeln!(f, "   = note: {note}")?;
        }
        for help in &self.help {
            writeln!(f, "   = help: {help}")?;
        }
        Ok(())
    }
}
