//! Diagnostics about tool sources: a message tied to a file, line and column.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in a tools crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Path relative to the crate root, when the problem is in a file.
    pub file: Option<PathBuf>,
    /// 1-based line and column.
    pub line: usize,
    pub column: usize,
    /// Further places and hints, printed as `note:` lines.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            file: None,
            line: 0,
            column: 0,
            notes: Vec::new(),
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
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

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        writeln!(f, "{level}: {}", self.message)?;
        if let Some(file) = &self.file {
            writeln!(f, "  --> {}:{}:{}", file.display(), self.line, self.column)?;
        }
        for note in &self.notes {
            writeln!(f, "   = note: {note}")?;
        }
        Ok(())
    }
}
