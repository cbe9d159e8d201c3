//! The `file` toolset: read, write, patch and search files. Each tool's
//! logic lives in its own module (`read.rs`, `write.rs`, `patch.rs`,
//! `search.rs`) over shared ones (`error.rs`, `common.rs`, `fsguard.rs` for
//! special files and capped readers, `ignore_budget.rs` for the search
//! walk's ignore files); this file only declares the tools.
//!
//! Each function takes `base`, the working directory that relative paths are
//! resolved against (absolute paths are used as they are). The outputs derive
//! `serde::Serialize`; errors are [`error::FileError`], whose `Display` text
//! says what went wrong and what to do next.

mod common;
mod diff;
mod error;
mod fsguard;
mod fuzzy;
pub(crate) mod guard;
mod ignore_budget;
mod patch;
mod read;
mod search;
mod seqmatch;
mod stale;
mod v4a;
mod write;

#[cfg(test)]
mod patch_tests;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod write_tests;

use hermes_macros::hermes_tool;
use std::path::Path;

use hermes_runtime::ToolContext;
use schemars::JsonSchema;
use serde::Deserialize;

/// Read a text file and return its lines numbered `N|text`, a page at a time.
///
/// Use `offset` and `limit` to page through long files; the result says where
/// the next page starts. Binary files are refused.
#[hermes_tool(toolset = "file", emoji = "📖")]
pub fn read_file(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// First line to return, 1-based (default 1).
    offset: Option<u64>,
    /// How many lines to return (default 500, at most 2000).
    limit: Option<u64>,
) -> Result<read::ReadFileOutput, error::FileError> {
    guard::check_read(ctx, Path::new(&path)).map_err(error::FileError::Refused)?;
    // The profile's `tool_output.max_lines` lowers the page (not above 2000).
    let max_lines = ctx.profile().config().tool_output.max_lines.value as u64;
    let limit = limit.unwrap_or(read::DEFAULT_READ_LIMIT).min(max_lines);
    let out = read::read_file(ctx.cwd(), &path, offset, Some(limit))?;
    stale::note_read(ctx, &path);
    Ok(out)
}

/// Write a text file, replacing its contents; missing parent folders are created.
///
/// Content for `.json`, `.yaml`/`.yml` and `.toml` files must parse, or
/// nothing is written. An existing file keeps its CRLF line endings and
/// byte order mark. If the file changed since you last read it, the write
/// happens and the result warns.
#[hermes_tool(toolset = "file", emoji = "✍️")]
pub fn write_file(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The complete new contents of the file.
    content: String,
) -> Result<write::WriteFileOutput, error::FileError> {
    guard::check_write(ctx, Path::new(&path), "write").map_err(error::FileError::Refused)?;
    let warning = stale::warning(ctx, &path);
    let mut out = write::write_file(ctx.cwd(), &path, &content)?;
    stale::note_write(ctx, &path);
    out.warning = warning;
    Ok(out)
}

/// How `patch` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PatchMode {
    /// Find `old_string` in `path` and replace it with `new_string`.
    Replace,
    /// Apply the V4A multi-file patch in `patch`.
    Patch,
}

/// Targeted edits of files, returning a unified diff. Use it instead of
/// sed or awk.
///
/// Mode `replace` (the default) needs `path`, `old_string` and
/// `new_string`: it finds `old_string` and puts `new_string` in its place.
/// Matching forgives small differences (indentation, white space, escaped
/// `\n`, typographic quotes, a changed line in a longer block) and keeps
/// the file's indentation, line endings and byte order mark. `old_string`
/// must match one place unless `replace_all` is set; include surrounding
/// lines to make it unique.
///
/// Mode `patch` needs only `patch`, a V4A patch that can add, update,
/// delete and move several files at once; nothing is written unless every
/// part of it applies.
#[hermes_tool(toolset = "file", emoji = "🩹")]
pub fn patch(
    ctx: &ToolContext,
    /// `replace` (default) or `patch`.
    mode: Option<PatchMode>,
    /// Mode replace: the file to edit, absolute or relative to the working
    /// directory.
    path: Option<String>,
    /// Mode replace: the text to find; it must be unique in the file unless
    /// `replace_all` is true.
    old_string: Option<String>,
    /// Mode replace: the text to put in its place (empty to delete it).
    new_string: Option<String>,
    /// Mode replace: replace every match instead of requiring exactly one
    /// (default false).
    replace_all: Option<bool>,
    /// Mode patch: the V4A patch, e.g. `*** Begin Patch` / `*** Update File:
    /// src/a.py` / `@@ def f @@` / ` context line` / `-removed line` /
    /// `+added line` / `*** End Patch`; also `*** Add File: p` (lines with
    /// `+`), `*** Delete File: p`, `*** Move File: from -> to`.
    patch: Option<String>,
) -> Result<patch::PatchOutput, error::FileError> {
    // Every path patch writes (both ends of a move) passes the write guard.
    let guard = |p: &str| {
        guard::check_write(ctx, Path::new(p), "patch").map_err(error::FileError::Refused)?;
        common::resolve(ctx.cwd(), p)
    };
    let (mut out, paths) = match mode.unwrap_or(PatchMode::Replace) {
        PatchMode::Replace => {
            let path = path.ok_or(error::FileError::MissingArgument {
                what: "path is required in mode replace",
            })?;
            let (Some(old), Some(new)) = (old_string, new_string) else {
                return Err(error::FileError::MissingArgument {
                    what: "old_string and new_string are required in mode replace",
                });
            };
            let warning = stale::warning(ctx, &path);
            let mut out =
                patch::patch_replace(&guard, &path, &old, &new, replace_all.unwrap_or(false))?;
            out.warning = warning;
            (out, vec![path])
        }
        PatchMode::Patch => {
            let text =
                patch
                    .filter(|p| !p.is_empty())
                    .ok_or(error::FileError::MissingArgument {
                        what: "patch (the V4A patch text) is required in mode patch",
                    })?;
            let paths = v4a::header_paths(&text);
            let warnings: Vec<String> = paths
                .iter()
                .filter_map(|p| stale::warning(ctx, p))
                .collect();
            let mut out = patch::patch_v4a(&guard, &text)?;
            out.warning = (!warnings.is_empty()).then(|| warnings.join(" | "));
            (out, paths)
        }
    };
    for p in &paths {
        stale::note_write(ctx, p);
    }
    out.success = true;
    Ok(out)
}

/// Search file contents with a regular expression, honouring .gitignore.
///
/// Returns matching lines with their file and line number; binary and hidden
/// files are skipped.
#[hermes_tool(toolset = "file", emoji = "🔎")]
pub fn search_files(
    ctx: &ToolContext,
    /// Regular expression (Rust regex syntax) to look for.
    pattern: String,
    /// Folder or file to search, relative to the working directory (default: it).
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs`.
    file_glob: Option<String>,
    /// Most matches to return (default 50).
    limit: Option<u64>,
) -> Result<search::SearchOutput, error::FileError> {
    if let Some(path) = path.as_deref().filter(|p| !p.is_empty()) {
        guard::check_read(ctx, Path::new(path)).map_err(error::FileError::Refused)?;
    }
    search::search_files(
        ctx.cwd(),
        &pattern,
        path.as_deref(),
        file_glob.as_deref(),
        limit,
    )
}
