//! `patch`: edits files in place and shows the diff, in two modes.
//!
//! - `replace`: `old_string` found by the matching chain of [`fuzzy`]
//!   (exact first, then forgiving indentation, white space, escapes,
//!   typographic characters and a few changed lines) and replaced by
//!   `new_string`, once, or everywhere with `replace_all`.
//! - `patch`: a V4A multi-file patch ([`v4a`]).
//!
//! Every file written goes through the write guard the caller passes in
//! (one per path, before anything is read or parsed) and through
//! [`write_text`], so it is checked, written atomically and keeps its line
//! endings and byte order mark as `write_file` does. Files and results over
//! [`MAX_EDIT_FILE_BYTES`] are refused; diffs come from [`diff`] and are
//! kept to [`MAX_DIFF_CHARS`].

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::common::display;
use super::diff;
pub use super::diff::MAX_DIFF_CHARS;
use super::error::{FileError, MAX_EDIT_FILE_BYTES};
use super::fsguard::{open_text_file, real_write_path, special_kind, special_location};
use super::fuzzy::{self, MatchError};
use super::v4a;
use super::write::{line_ending, with_endings, write_text, BOM};

/// What `patch` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PatchOutput {
    /// Always true: a failed patch is an error instead.
    pub success: bool,
    /// The file edited, when the patch edited one (resolved against the
    /// working directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<String>,
    /// How many occurrences were replaced (`replace` mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacements: Option<u64>,
    /// The matching strategy that found `old_string`, when it was not an
    /// exact match (`replace` mode), e.g. `line_trimmed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_strategy: Option<&'static str>,
    /// A unified diff of the change (cut after [`MAX_DIFF_CHARS`]
    /// characters); absent when the file came out unchanged.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// The files the patch named, resolved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_modified: Vec<String>,
    /// Files a V4A patch added.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_created: Vec<String>,
    /// Files a V4A patch deleted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_deleted: Vec<String>,
    /// Set when a file changed since this session last read it.
    #[serde(rename = "_warning", skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Checks that a path may be written and gives its full path.
pub type WriteGuard<'g> = &'g dyn Fn(&str) -> Result<PathBuf, FileError>;

/// Reads a file to edit as text: a regular UTF-8 file within
/// [`MAX_EDIT_FILE_BYTES`].
fn read_text(full: &Path, path: &str) -> Result<String, FileError> {
    let (file, size, _real) = open_text_file(full, path)?;
    let too_large = |size: u64| FileError::FileTooLarge {
        path: path.to_owned(),
        size,
    };
    if size > MAX_EDIT_FILE_BYTES {
        return Err(too_large(size));
    }
    // The size is read again through a capped reader: it may have grown.
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_EDIT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::from_io(&e, path, "read"))?;
    if bytes.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| FileError::NotUtf8 {
        path: path.to_owned(),
    })
}

/// `replace` mode (see the module comment). The byte order mark is set
/// aside while matching, and the result takes the line ending the file's
/// start uses throughout (the model's `\n` in a CRLF file become `\r\n`).
pub fn patch_replace(
    guard: WriteGuard<'_>,
    path: &str,
    old_string: &str,
    new_string: &str,
    replace_all: bool,
) -> Result<PatchOutput, FileError> {
    let full = guard(path)?;
    if old_string.is_empty() {
        return Err(FileError::EmptyOldString);
    }
    if old_string == new_string {
        return Err(FileError::NoChange);
    }
    let text = read_text(&full, path)?;
    let old = text.strip_prefix(BOM).unwrap_or(&text);
    let replaced = fuzzy::find_and_replace(
        old,
        old_string,
        new_string,
        replace_all,
        MAX_EDIT_FILE_BYTES,
    )
    .map_err(|e| match_error(e, path))?;
    let new = with_file_endings(old, replaced.content, replaced.count, path)?;
    // Written without the mark: the write puts the file's mark back, and
    // checks the syntax of what the model meant.
    write_text(&full, path, &new)?;
    let shown = display(&full);
    Ok(PatchOutput {
        success: true,
        resolved_path: Some(shown.clone()),
        replacements: Some(replaced.count as u64),
        match_strategy: (replaced.strategy != fuzzy::Strategy::Exact)
            .then(|| replaced.strategy.name()),
        diff: diff::unified(old, &new, path),
        files_modified: vec![shown],
        ..PatchOutput::default()
    })
}

/// The [`FileError`] of a failed match of `old_string` in `path`.
pub(super) fn match_error(e: MatchError, path: &str) -> FileError {
    match e {
        MatchError::EmptyOld => FileError::EmptyOldString,
        MatchError::Identical => FileError::NoChange,
        MatchError::Ambiguous { count } => FileError::NotUnique {
            path: path.to_owned(),
            count: count as u64,
        },
        MatchError::EscapeDrift { sequence } => FileError::EscapeDrift {
            path: path.to_owned(),
            sequence: sequence.to_owned(),
        },
        MatchError::NotFound { hint } => FileError::TextNotFound {
            path: path.to_owned(),
            hint,
        },
        MatchError::TooComplex => FileError::MatchTooComplex {
            path: path.to_owned(),
        },
        MatchError::TooLarge { count, size } => FileError::ResultTooLarge {
            path: path.to_owned(),
            count: count as u64,
            size,
        },
    }
}

/// `replaced` (the text of `old` with `count` replacements) with the line
/// ending `old`'s start uses throughout, within [`MAX_EDIT_FILE_BYTES`].
pub(super) fn with_file_endings(
    old: &str,
    replaced: String,
    count: usize,
    path: &str,
) -> Result<String, FileError> {
    let new = match line_ending(old) {
        Some(ending) => with_endings(&replaced, ending).into_owned(),
        None => replaced,
    };
    if new.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(FileError::ResultTooLarge {
            path: path.to_owned(),
            count: count as u64,
            size: new.len() as u64,
        });
    }
    Ok(new)
}

/// Whether a path has a `..` component.
pub(super) fn climbs(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| matches!(c, Component::ParentDir))
}

/// The file system of a V4A patch: every path through the guard.
struct GuardedFiles<'g> {
    guard: WriteGuard<'g>,
}

impl GuardedFiles<'_> {
    fn full(&self, path: &str) -> Result<PathBuf, FileError> {
        (self.guard)(path)
    }

    /// The real path of an existing regular file to remove or move.
    fn existing(&self, path: &str, action: &'static str) -> Result<PathBuf, FileError> {
        let full = self.full(path)?;
        let real = real_write_path(&full).map_err(|e| FileError::from_io(&e, path, action))?;
        if let Some(reason) = special_location(&real) {
            return Err(FileError::Special {
                path: path.to_owned(),
                action,
                reason,
            });
        }
        let meta = fs::symlink_metadata(&full).map_err(|e| FileError::from_io(&e, path, action))?;
        if meta.is_dir() {
            return Err(FileError::IsDirectory {
                path: path.to_owned(),
            });
        }
        if let Some(kind) = special_kind(&meta) {
            return Err(FileError::Special {
                path: path.to_owned(),
                action,
                reason: format!("it is {kind}, not a regular file"),
            });
        }
        Ok(full)
    }
}

impl v4a::Files for GuardedFiles<'_> {
    fn read(&mut self, path: &str) -> Result<String, FileError> {
        let full = self.full(path)?;
        read_text(&full, path)
    }

    fn write(&mut self, path: &str, content: &str) -> Result<(), FileError> {
        let full = self.full(path)?;
        write_text(&full, path, content).map(|_| ())
    }

    fn delete(&mut self, path: &str) -> Result<(), FileError> {
        // A symlink is removed itself, not its target.
        let full = self.existing(path, "delete")?;
        fs::remove_file(&full).map_err(|e| FileError::from_io(&e, path, "delete"))
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), FileError> {
        let source = self.existing(from, "move")?;
        let dest = self.full(to)?;
        let real = real_write_path(&dest).map_err(|e| FileError::from_io(&e, to, "move"))?;
        if let Some(reason) = special_location(&real) {
            return Err(FileError::Special {
                path: to.to_owned(),
                action: "move",
                reason,
            });
        }
        if fs::symlink_metadata(&dest).is_ok() {
            return Err(FileError::MoveTargetExists {
                path: to.to_owned(),
            });
        }
        if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent)
                .map_err(|e| FileError::from_io(&e, to, "create the parent directories of"))?;
        }
        fs::rename(&source, &dest).map_err(|e| FileError::from_io(&e, from, "move"))
    }
}

/// `patch` mode: applies a V4A patch. Every path its headers name (both
/// ends of a move) must be free of `..` and pass the guard before the
/// patch is even parsed; then it is checked whole, and applied only if
/// every operation would succeed.
pub fn patch_v4a(guard: WriteGuard<'_>, patch: &str) -> Result<PatchOutput, FileError> {
    let mut resolved: Vec<String> = Vec::new();
    for path in v4a::header_paths(patch) {
        if climbs(&path) {
            return Err(FileError::PatchTraversal { path });
        }
        let shown = display(&guard(&path)?);
        if !resolved.contains(&shown) {
            resolved.push(shown);
        }
    }
    let ops = v4a::parse(patch).map_err(|e| FileError::PatchParse {
        message: e.to_string(),
    })?;
    let mut files = GuardedFiles { guard };
    match v4a::apply(&ops, &mut files, MAX_EDIT_FILE_BYTES) {
        Ok(done) => Ok(PatchOutput {
            success: true,
            resolved_path: (resolved.len() == 1).then(|| resolved[0].clone()),
            diff: cut_diff(done.diff),
            files_modified: resolved,
            files_created: done.created,
            files_deleted: done.deleted,
            ..PatchOutput::default()
        }),
        Err(v4a::Failure::Invalid(errors)) => Err(FileError::PatchInvalid { errors }),
        Err(v4a::Failure::Partial { errors, done }) => {
            let mut parts: Vec<String> = Vec::new();
            for (what, list) in [
                ("modified", &done.modified),
                ("created", &done.created),
                ("deleted", &done.deleted),
            ] {
                if !list.is_empty() {
                    parts.push(format!("{what} {}", list.join(", ")));
                }
            }
            let done = if parts.is_empty() {
                "nothing".to_owned()
            } else {
                parts.join("; ")
            };
            Err(FileError::PatchPartial { errors, done })
        }
    }
}

/// The diffs of a multi-file patch, cut to [`MAX_DIFF_CHARS`] in all.
pub(super) fn cut_diff(diff: String) -> String {
    match diff.char_indices().nth(MAX_DIFF_CHARS) {
        None => diff,
        Some((at, _)) => {
            let rest = diff[at..].lines().count();
            format!("{}\n... [diff truncated, {rest} more lines]\n", &diff[..at])
        }
    }
}
