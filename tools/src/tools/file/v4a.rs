//! `patch` with `mode: "patch"`: the V4A multi-file patch format that
//! coding agents emit (`*** Begin Patch`, `*** Add File: p`, `*** Update
//! File: p` with `@@ hint @@` hunks of ` ` context, `-` removed and `+`
//! added lines, `*** Delete File: p`, `*** Move File: a -> b`, `*** End
//! Patch`), parsed and applied as the reference does.
//!
//! Applying runs in two phases: every operation is first checked against
//! the files as they are (hunks of one file in order, each on the text the
//! ones before it produced), and nothing is written unless all pass; then
//! the operations are carried out in order. The file system is reached
//! through [`Files`], so the guard and the atomic writes stay in one place.
//!
//! Bounds: at most [`MAX_OPERATIONS`] operations and [`MAX_HUNKS`] hunks
//! per patch, and all matching of one patch shares one [`Budget`].
//!
//! Errors: [`parse`] answers a [`ParseError`]; a [`Files`] operation a
//! [`FileError`]; applying an update a [`PatchError`]. Checking and applying
//! collect their texts per operation into a [`Failure`], which `patch.rs`
//! turns into a [`FileError`].

use super::diff;
use super::error::FileError;
use super::fuzzy::{self, MatchError};
use super::seqmatch::Budget;
use regex::Regex;
use std::sync::LazyLock;

/// Files one patch may add, update, delete or move.
pub const MAX_OPERATIONS: usize = 200;
/// Hunks one patch may hold, over all its files.
pub const MAX_HUNKS: usize = 2000;

/// Why a patch does not parse. `Display` gives a message meant for the
/// model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Over [`MAX_OPERATIONS`] operations or [`MAX_HUNKS`] hunks.
    #[error(
        "the patch has more than {MAX_OPERATIONS} file operations or \
         {MAX_HUNKS} hunks; split it into several patches"
    )]
    TooLarge,
    /// Operations lacking a part; each problem in patch order.
    #[error(
        "{}",
        problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Incomplete { problems: Vec<Incomplete> },
}

/// An operation lacking a part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Incomplete {
    #[error("an operation has an empty file path")]
    EmptyPath,
    #[error("Update File {path:?} has no hunks (lines starting with ' ', '-' or '+')")]
    NoHunks { path: String },
    #[error("Move File {path:?} has no destination (write it as 'from -> to')")]
    NoDestination { path: String },
}

/// Why an update could not be carried out. `Display` gives a message meant
/// for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// Reading or writing the file failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// An insert-only hunk's hint occurs more than once.
    #[error(
        "the hint {hint:?} of an insert-only hunk occurs {count} times; \
         give a hint that occurs once"
    )]
    AmbiguousHint { hint: String, count: usize },
    /// A hunk's lines did not match, not even near its hint.
    #[error("a hunk could not be applied: {0}")]
    HunkNotApplied(Mismatch),
}

/// Why a hunk's lines did not match: the matching error and, when they
/// were not found, the closest lines of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", mismatch_text(cause, closest.as_deref()))]
pub struct Mismatch {
    pub cause: MatchError,
    pub closest: Option<String>,
}

/// The words of a [`Mismatch`].
fn mismatch_text(cause: &MatchError, closest: Option<&str>) -> String {
    match cause {
        MatchError::NotFound { .. } => {
            let mut msg = "the lines to replace were not found".to_owned();
            if let Some(hint) = closest {
                msg.push_str("\n\nClosest lines in the file:\n");
                msg.push_str(hint);
            }
            msg
        }
        other => other.to_string(),
    }
}

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Add,
    Update,
    Delete,
    Move,
}

/// A group of lines of one file: `(' ' | '-' | '+', text)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    pub hint: Option<String>,
    pub lines: Vec<(char, String)>,
}

impl Hunk {
    fn texts(&self, marks: &[char]) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(m, _)| marks.contains(m))
            .map(|(_, t)| t.as_str())
            .collect()
    }
}

/// One operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOp {
    pub kind: Kind,
    pub path: String,
    /// The destination of a move.
    pub to: Option<String>,
    pub hunks: Vec<Hunk>,
}

static UPDATE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\*\*\*\s*Update\s+File:\s*(.+)").ok());
static ADD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\*\*\*\s*Add\s+File:\s*(.+)").ok());
static DELETE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\*\*\*\s*Delete\s+File:\s*(.+)").ok());
static MOVE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\*\*\*\s*Move\s+File:\s*(.+?)\s*->\s*(.+)").ok());
static HINT: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^@@\s*(.+?)\s*@@").ok());

fn captures<'l>(re: &LazyLock<Option<Regex>>, line: &'l str) -> Option<regex::Captures<'l>> {
    re.as_ref().and_then(|re| re.captures(line))
}

fn group(c: &regex::Captures<'_>, i: usize) -> String {
    c.get(i).map_or("", |m| m.as_str()).trim().to_owned()
}

/// Every path a patch names in its operation headers (both ends of a
/// move), in order, wherever they stand in the text: what the guard and
/// the `..` check look at before anything is parsed.
pub fn header_paths(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in patch.lines() {
        if let Some(c) = captures(&MOVE, line) {
            out.push(group(&c, 1));
            out.push(group(&c, 2));
        } else if let Some(c) = captures(&UPDATE, line)
            .or_else(|| captures(&ADD, line))
            .or_else(|| captures(&DELETE, line))
        {
            out.push(group(&c, 1));
        }
    }
    out
}

/// Parses a patch. A patch without operations parses to none; the errors
/// are an operation without a path, an update without hunks, a move
/// without a destination, and a patch over the bounds.
pub fn parse(patch: &str) -> Result<Vec<FileOp>, ParseError> {
    let lines: Vec<&str> = patch.split('\n').collect();
    let mut begin = None;
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if line.contains("*** Begin Patch") || line.contains("***Begin Patch") {
            begin = Some(i);
        } else if line.contains("*** End Patch") || line.contains("***End Patch") {
            end = i;
            break;
        }
    }
    let first = begin.map_or(0, |b| b + 1);
    let mut ops: Vec<FileOp> = Vec::new();
    let mut current: Option<FileOp> = None;
    let mut hunk: Option<Hunk> = None;
    let mut hunks = 0usize;
    fn close(current: &mut Option<FileOp>, hunk: &mut Option<Hunk>, ops: &mut Vec<FileOp>) {
        if let Some(mut op) = current.take() {
            if let Some(h) = hunk.take().filter(|h| !h.lines.is_empty()) {
                op.hunks.push(h);
            }
            ops.push(op);
        }
        *hunk = None;
    }
    let op = |kind, path: String, to| FileOp {
        kind,
        path,
        to,
        hunks: Vec::new(),
    };
    for line in lines.iter().take(end).skip(first).copied() {
        if ops.len() > MAX_OPERATIONS || hunks > MAX_HUNKS {
            return Err(ParseError::TooLarge);
        }
        if let Some(c) = captures(&UPDATE, line) {
            close(&mut current, &mut hunk, &mut ops);
            current = Some(op(Kind::Update, group(&c, 1), None));
        } else if let Some(c) = captures(&ADD, line) {
            close(&mut current, &mut hunk, &mut ops);
            current = Some(op(Kind::Add, group(&c, 1), None));
            hunk = Some(Hunk::default());
        } else if let Some(c) = captures(&DELETE, line) {
            close(&mut current, &mut hunk, &mut ops);
            ops.push(op(Kind::Delete, group(&c, 1), None));
        } else if let Some(c) = captures(&MOVE, line) {
            close(&mut current, &mut hunk, &mut ops);
            ops.push(op(Kind::Move, group(&c, 1), Some(group(&c, 2))));
        } else if line.starts_with("@@") {
            if let Some(op) = current.as_mut() {
                if let Some(h) = hunk.take().filter(|h| !h.lines.is_empty()) {
                    op.hunks.push(h);
                }
                hunks += 1;
                hunk = Some(Hunk {
                    hint: captures(&HINT, line).map(|c| c[1].to_owned()),
                    lines: Vec::new(),
                });
            }
        } else if current.is_some() && !line.is_empty() {
            let h = hunk.get_or_insert_with(|| {
                hunks += 1;
                Hunk::default()
            });
            let mut chars = line.chars();
            match chars.next() {
                Some(m @ ('+' | '-' | ' ')) => h.lines.push((m, chars.as_str().to_owned())),
                // "\ No newline at end of file"
                Some('\\') => {}
                _ => h.lines.push((' ', line.to_owned())),
            }
        }
    }
    close(&mut current, &mut hunk, &mut ops);
    if ops.len() > MAX_OPERATIONS || hunks > MAX_HUNKS {
        return Err(ParseError::TooLarge);
    }
    let mut problems = Vec::new();
    for op in &ops {
        if op.path.is_empty() {
            problems.push(Incomplete::EmptyPath);
        }
        if op.kind == Kind::Update && op.hunks.is_empty() {
            problems.push(Incomplete::NoHunks {
                path: op.path.clone(),
            });
        }
        if op.kind == Kind::Move && op.to.as_deref().is_none_or(str::is_empty) {
            problems.push(Incomplete::NoDestination {
                path: op.path.clone(),
            });
        }
    }
    if problems.is_empty() {
        Ok(ops)
    } else {
        Err(ParseError::Incomplete { problems })
    }
}

/// The file system as the patch sees it. Paths are the patch's own.
pub trait Files {
    /// The whole text of a file, or why it cannot be had.
    fn read(&mut self, path: &str) -> Result<String, FileError>;
    /// Writes a file whole, creating its folder.
    fn write(&mut self, path: &str, content: &str) -> Result<(), FileError>;
    fn delete(&mut self, path: &str) -> Result<(), FileError>;
    fn rename(&mut self, from: &str, to: &str) -> Result<(), FileError>;
}

/// What an applied patch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// The diffs of all operations, one after the other.
    pub diff: String,
    /// Updated files, and moves as `from -> to`.
    pub modified: Vec<String>,
    pub created: Vec<String>,
    pub deleted: Vec<String>,
}

/// Why a patch was not (or not wholly) applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Checking found problems; no file was touched.
    Invalid(Vec<String>),
    /// Some operations failed while applying; the others were done.
    Partial { errors: Vec<String>, done: Applied },
}

/// How often `needle` occurs in `text`, overlapping occurrences counted
/// (as the reference counts a hunk's hint).
fn occurrences(text: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find(needle) {
        count += 1;
        let next = from + at;
        from = next + text[next..].chars().next().map_or(1, char::len_utf8);
        if from > text.len() {
            break;
        }
    }
    count
}

/// `e` as a [`Mismatch`]: for lines not found, with the closest lines of
/// `content` to `pattern`.
fn mismatch(e: MatchError, pattern: &str, content: &str, budget: &mut Budget) -> Mismatch {
    let closest = match e {
        MatchError::NotFound { .. } => fuzzy::closest_lines(pattern, content, budget),
        _ => None,
    };
    Mismatch { cause: e, closest }
}

/// Checks every operation without writing (see the module comment).
fn check(ops: &[FileOp], files: &mut dyn Files, max_len: u64, budget: &mut Budget) -> Vec<String> {
    let mut errors = Vec::new();
    let mut changes = 0;
    for op in ops {
        match op.kind {
            Kind::Add => changes += 1,
            Kind::Delete => {
                changes += 1;
                if files.read(&op.path).is_err() {
                    errors.push(format!("{}: no such file to delete", op.path));
                }
            }
            Kind::Move => {
                changes += 1;
                let to = op.to.as_deref().unwrap_or_default();
                if files.read(&op.path).is_err() {
                    errors.push(format!("{}: no such file to move", op.path));
                }
                if files.read(to).is_ok() {
                    errors.push(format!("{to}: already exists; the move would overwrite it"));
                }
            }
            Kind::Update => {
                let mut text = match files.read(&op.path) {
                    Ok(text) => text,
                    Err(e) => {
                        errors.push(format!("{}: {e}", op.path));
                        continue;
                    }
                };
                for (n, hunk) in op.hunks.iter().enumerate() {
                    let search = hunk.texts(&[' ', '-']);
                    let (removed, added) = (hunk.texts(&['-']), hunk.texts(&['+']));
                    if removed.is_empty() && added.is_empty() {
                        continue;
                    }
                    changes += 1;
                    if search.is_empty() {
                        if let Some(hint) = &hunk.hint {
                            match occurrences(&text, hint) {
                                0 => errors.push(format!(
                                    "{}: the hint {hint:?} of an insert-only hunk is not in the file",
                                    op.path
                                )),
                                1 => {}
                                k => errors.push(format!(
                                    "{}: the hint {hint:?} of an insert-only hunk occurs {k} \
                                     times; give a hint that occurs once",
                                    op.path
                                )),
                            }
                        }
                        continue;
                    }
                    let pattern = search.join("\n");
                    let replacement = hunk.texts(&[' ', '+']).join("\n");
                    match fuzzy::find_and_replace_within(
                        &text,
                        &pattern,
                        &replacement,
                        false,
                        max_len,
                        budget,
                    ) {
                        Ok(r) => text = r.content,
                        Err(e) => {
                            let label = hunk
                                .hint
                                .as_deref()
                                .map_or_else(|| "(no hint)".to_owned(), |h| format!("{h:?}"));
                            errors.push(format!(
                                "{}: hunk {} {label}: {}",
                                op.path,
                                n + 1,
                                mismatch(e, &pattern, &text, budget)
                            ));
                        }
                    }
                }
            }
        }
    }
    if errors.is_empty() && changes == 0 {
        errors.push("the patch changes nothing (it has only context lines)".to_owned());
    }
    errors
}

/// The text a hunk list makes of `current`, as the apply phase does it
/// (an unmatched hunk with a hint is tried again near the hint).
fn updated(
    current: &str,
    hunks: &[Hunk],
    max_len: u64,
    budget: &mut Budget,
) -> Result<String, PatchError> {
    let mut text = current.to_owned();
    for hunk in hunks {
        let search = hunk.texts(&[' ', '-']);
        let replace = hunk.texts(&[' ', '+']);
        if !search.is_empty() && search == replace {
            continue;
        }
        if search.is_empty() {
            let insert = replace.join("\n");
            let at_end = |t: &str| format!("{}\n{insert}\n", t.trim_end_matches('\n'));
            text = match hunk.hint.as_deref() {
                None => at_end(&text),
                Some(hint) => match occurrences(&text, hint) {
                    0 => at_end(&text),
                    1 => {
                        let at = text.find(hint).unwrap_or_default();
                        match text[at..].find('\n') {
                            Some(eol) => {
                                let cut = at + eol + 1;
                                format!("{}{insert}\n{}", &text[..cut], &text[cut..])
                            }
                            None => format!("{text}\n{insert}"),
                        }
                    }
                    count => {
                        return Err(PatchError::AmbiguousHint {
                            hint: hint.to_owned(),
                            count,
                        })
                    }
                },
            };
            continue;
        }
        let pattern = search.join("\n");
        let replacement = replace.join("\n");
        match fuzzy::find_and_replace_within(&text, &pattern, &replacement, false, max_len, budget)
        {
            Ok(r) => text = r.content,
            Err(first) => {
                let near = hunk
                    .hint
                    .as_deref()
                    .and_then(|hint| text.find(hint).map(|at| window(&text, at)))
                    .and_then(|(from, to)| {
                        fuzzy::find_and_replace_within(
                            &text[from..to],
                            &pattern,
                            &replacement,
                            false,
                            max_len,
                            budget,
                        )
                        .ok()
                        .map(|r| format!("{}{}{}", &text[..from], r.content, &text[to..]))
                    });
                match near {
                    Some(t) => text = t,
                    None => {
                        return Err(PatchError::HunkNotApplied(mismatch(
                            first, &pattern, &text, budget,
                        )))
                    }
                }
            }
        }
    }
    Ok(text)
}

/// The span 500 characters before `at` to 2000 after it.
fn window(text: &str, at: usize) -> (usize, usize) {
    let before = text[..at]
        .char_indices()
        .rev()
        .nth(499)
        .map_or(0, |(i, _)| i);
    let after = text[at..]
        .char_indices()
        .nth(2000)
        .map_or(text.len(), |(i, _)| at + i);
    (before, after)
}

/// Checks and then applies a parsed patch.
pub fn apply(ops: &[FileOp], files: &mut dyn Files, max_len: u64) -> Result<Applied, Failure> {
    apply_within(ops, files, max_len, fuzzy::MATCH_BUDGET)
}

/// [`apply`] with `steps` of matching work for each of its two phases.
fn apply_within(
    ops: &[FileOp],
    files: &mut dyn Files,
    max_len: u64,
    steps: u64,
) -> Result<Applied, Failure> {
    let mut budget = Budget::new(steps);
    let errors = check(ops, files, max_len, &mut budget);
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let mut budget = Budget::new(steps);
    let mut done = Applied::default();
    let mut diffs = Vec::new();
    let mut errors = Vec::new();
    for op in ops {
        let path = op.path.as_str();
        match op.kind {
            Kind::Add => {
                let lines: Vec<&str> = op.hunks.iter().flat_map(|h| h.texts(&['+'])).collect();
                match files.write(path, &lines.join("\n")) {
                    Ok(()) => {
                        done.created.push(path.to_owned());
                        let mut d = format!("--- /dev/null\n+++ b/{path}\n");
                        d.push_str(
                            &lines
                                .iter()
                                .map(|l| format!("+{l}"))
                                .collect::<Vec<_>>()
                                .join("\n"),
                        );
                        diffs.push(d);
                    }
                    Err(e) => errors.push(format!("could not add {path}: {e}")),
                }
            }
            Kind::Delete => {
                let result = files
                    .read(path)
                    .and_then(|old| files.delete(path).map(|()| old));
                match result {
                    Ok(old) => {
                        done.deleted.push(path.to_owned());
                        let d = diff::labelled(&old, "", &format!("a/{path}"), "/dev/null");
                        diffs.push(if d.is_empty() {
                            format!("# Deleted: {path}")
                        } else {
                            d
                        });
                    }
                    Err(e) => errors.push(format!("could not delete {path}: {e}")),
                }
            }
            Kind::Move => {
                let to = op.to.as_deref().unwrap_or_default();
                match files.rename(path, to) {
                    Ok(()) => {
                        done.modified.push(format!("{path} -> {to}"));
                        diffs.push(format!("# Moved: {path} -> {to}"));
                    }
                    Err(e) => errors.push(format!("could not move {path}: {e}")),
                }
            }
            Kind::Update => {
                let result = files.read(path).map_err(PatchError::File).and_then(|old| {
                    let new = updated(&old, &op.hunks, max_len, &mut budget)?;
                    files.write(path, &new)?;
                    Ok((old, new))
                });
                match result {
                    Ok((old, new)) => {
                        done.modified.push(path.to_owned());
                        diffs.push(diff::unified(&old, &new, path));
                    }
                    Err(e) => errors.push(format!("could not update {path}: {e}")),
                }
            }
        }
    }
    done.diff = diffs.join("\n");
    if errors.is_empty() {
        Ok(done)
    } else {
        Err(Failure::Partial { errors, done })
    }
}

#[cfg(test)]
#[path = "v4a_tests.rs"]
mod tests;
