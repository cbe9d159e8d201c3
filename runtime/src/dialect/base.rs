//! What every part of the rewrite shares: the [`Dialect`]s, their issues
//! ([`DialectIssue`], and [`Found`] before it is tagged), and the limits
//! the passes walk within.

use std::fmt;
use std::str::FromStr;

/// The deepest chain of `$ref`s inlined inside one another.
pub const MAX_REF_DEPTH: usize = 16;

/// The most `$ref`s inlined in one schema (guards against exponential growth).
pub const MAX_INLINED_REFS: usize = 512;

/// The deepest schema nesting any pass walks into.
pub(super) const MAX_SCHEMA_DEPTH: usize = 64;

/// A provider backend whose tool-definition format [`rewrite`](super::rewrite) targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI chat completions `tools`, without strict mode.
    OpenAi,
    /// OpenAI structured outputs (`"strict": true`).
    OpenAiStrict,
    /// Google Gemini `functionDeclarations`.
    Gemini,
    /// llama.cpp server (OpenAI envelope, schema limited to its grammar converter).
    LlamaCpp,
    /// Model Context Protocol `tools/list` entries.
    Mcp,
}

impl Dialect {
    /// Every dialect, in declaration order.
    pub const ALL: [Dialect; 5] = [
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::Gemini,
        Dialect::LlamaCpp,
        Dialect::Mcp,
    ];

    /// Parses a dialect name: ASCII case is ignored, as are `-`, `_`, `.` and
    /// spaces, so `openai-strict`, `OpenAI_Strict`, `llama.cpp` and `llamacpp`
    /// all work; `strict` and `llama` are accepted as short forms.
    /// `"llama-cpp".parse::<Dialect>()` does the same with an error that
    /// names the known dialects.
    pub fn parse(s: &str) -> Option<Dialect> {
        let key = |s: &str| -> String {
            s.chars()
                .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        let wanted = key(s);
        Dialect::ALL.into_iter().find(|d| {
            let rules = d.rules();
            key(rules.name) == wanted || rules.aliases.contains(&wanted.as_str())
        })
    }

    /// The canonical name, which [`Dialect::parse`] reads back.
    pub fn name(&self) -> &'static str {
        self.rules().name
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dialect {
    type Err = ParseDialectError;

    /// As [`Dialect::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::parse(s).ok_or_else(|| ParseDialectError {
            input: s.to_string(),
        })
    }
}

/// A name that is no [`Dialect`]; its message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDialectError {
    input: String,
}

impl ParseDialectError {
    /// The name that was not recognized.
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for ParseDialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown dialect `{}`; expected one of: ", self.input)?;
        for (i, d) in Dialect::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(d.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseDialectError {}

/// One construct that a dialect cannot carry without changing its meaning,
/// or one rule that a dialect-form tool breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DialectIssue {
    /// The dialect whose rules the issue is about.
    pub dialect: Dialect,
    /// A JSON pointer into `parameters`; empty for the root or the envelope.
    pub path: String,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl fmt::Display for DialectIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{}: {}: {}", self.dialect, path, self.message)
    }
}

impl std::error::Error for DialectIssue {}

/// An issue before it is tagged with its dialect: (path, message).
pub(super) type Found = (String, String);

/// What was found, as the dialect's issues.
pub(super) fn tag_issues(found: Vec<Found>, dialect: Dialect) -> Vec<DialectIssue> {
    found
        .into_iter()
        .map(|(path, message)| DialectIssue {
            dialect,
            path,
            message,
        })
        .collect()
}
