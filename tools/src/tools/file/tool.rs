//! The `file` toolset: read, write, patch and search files. Each tool's
//! logic lives in its own module (`read.rs`, `write.rs`, `patch.rs`,
//! `search.rs`) over shared ones (`error.rs`, `common.rs`, `fsguard.rs` for
//! special files and capped readers, `ignore_budget.rs` for the search
//! walk's ignore files); this file only declares the tools.
//!
//! Each function takes `base`, the working directory that relative paths are
//! resolved against (absolute paths are used as they are). The outputs derive
//! `serde::Serialize`; errors are `error::FileError`, whose `Display` text
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
mod read_state;
mod remote;
mod search;
mod seqmatch;
mod similar;
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
use std::borrow::Cow;
use std::path::Path;

use hermes_runtime::ToolContext;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::backend::Files;
use hermes_procs::redact::{redact_for, Scope};
pub use read_state::forget_reads as forget_file_reads;
pub use search::{OutputMode, Target};

/// Read a text file and return its lines numbered `N|text`, a page at a time.
///
/// Use `offset` and `limit` to page through long files; the result says where
/// the next page starts. Jupyter notebooks (`.ipynb`) are shown as the text of
/// their cells. Binary files are refused. Reading a page again while the file
/// is unchanged answers that it is unchanged instead of repeating it.
#[hermes_tool(
    toolset = "file",
    emoji = "📖",
    read_only,
    idempotent,
    open_world = false,
    concurrency = "path:path"
)]
pub fn read_file(
    ctx: &ToolContext,
    /// Path of the file: absolute, relative to the working directory, or `~/...`.
    path: String,
    /// First line to return, 1-based (default 1).
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// How many lines to return (default 500, at most 2000).
    #[schemars(range(max = 2000))]
    limit: Option<u64>,
) -> Result<ReadAnswer, error::FileError> {
    // The profile's `tool_output.max_lines` and `max_line_length` lower the
    // page and its lines (never above 2000 lines of 2000 characters).
    let max_lines = ctx.profile().config().tool_output.max_lines.value as u64;
    let limit = Some(limit.unwrap_or(read::DEFAULT_READ_LIMIT).min(max_lines));
    let backend = crate::backend::of(ctx).map_err(error::FileError::Refused)?;
    if let Files::Remote(shell) = backend.files() {
        let max_line = ctx.profile().config().tool_output.max_line_length.value;
        return remote::read_file(ctx, shell, &path, offset, limit, max_line).map(ReadAnswer::Page);
    }
    let real = guard::check_read(ctx, Path::new(&path)).map_err(error::FileError::Refused)?;
    let (first, count) = read::page_bounds(offset, limit);
    let task = ctx.task_id();
    match read_state::before_read(task, &real, &path, first, count) {
        read_state::Before::Read => {}
        read_state::Before::Unchanged(note) => return Ok(ReadAnswer::Unchanged(note)),
        read_state::Before::Refuse(why) => return Err(error::FileError::Refused(why)),
    }
    let max_line = ctx.profile().config().tool_output.max_line_length.value;
    let mut out = read::read_file_cut(ctx.cwd(), &path, offset, limit, max_line)?;
    if let Cow::Owned(clean) = redact_for(ctx.profile(), &out.content, Scope::FileRead) {
        out.content = clean;
    }
    out.warning = read_state::after_read(task, &real, &path, first, count)
        .map_err(error::FileError::Refused)?;
    Ok(ReadAnswer::Page(out))
}

/// What `read_file` answers: a page, or a note that the page is unchanged
/// since this task last read it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum ReadAnswer {
    Page(read::ReadFileOutput),
    Unchanged(read_state::Unchanged),
}

/// Write a text file, replacing its contents; missing parent folders are created.
///
/// Content for `.json`, `.yaml`/`.yml` and `.toml` files must parse, or
/// nothing is written. An existing file keeps its CRLF line endings and
/// byte order mark. If the file changed since you last read it, the write
/// happens and the result warns.
#[hermes_tool(
    toolset = "file",
    emoji = "✍️",
    destructive,
    idempotent,
    open_world = false,
    concurrency = "path:path"
)]
pub fn write_file(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The complete new contents of the file.
    content: String,
) -> Result<write::WriteFileOutput, error::FileError> {
    let backend = crate::backend::of(ctx).map_err(error::FileError::Refused)?;
    if let Files::Remote(shell) = backend.files() {
        return remote::write_file(ctx, shell, &path, &content);
    }
    let real =
        guard::check_write(ctx, Path::new(&path), "write").map_err(error::FileError::Refused)?;
    let warning = read_state::stale_warning(ctx.task_id(), &real, &path);
    let mut out = write::write_file(ctx.cwd(), &path, &content)?;
    read_state::note_write(ctx.task_id(), &real);
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
// Exclusive, not scoped by `path`: mode `patch` writes the files its V4A
// text names, which `path` does not hold.
#[hermes_tool(
    toolset = "file",
    emoji = "🩹",
    destructive,
    idempotent = false,
    open_world = false,
    concurrency = "exclusive"
)]
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
    let backend = crate::backend::of(ctx).map_err(error::FileError::Refused)?;
    if let Files::Remote(shell) = backend.files() {
        return patch_remote(
            ctx,
            shell,
            mode,
            path,
            old_string,
            new_string,
            replace_all,
            patch,
        );
    }
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
            let warning = stale_warning(ctx, &path);
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
            let warnings: Vec<String> =
                paths.iter().filter_map(|p| stale_warning(ctx, p)).collect();
            let mut out = patch::patch_v4a(&guard, &text)?;
            out.warning = (!warnings.is_empty()).then(|| warnings.join(" | "));
            (out, paths)
        }
    };
    for p in &paths {
        if let Some(real) = real_path(ctx, p) {
            read_state::note_write(ctx.task_id(), &real);
        }
    }
    out.success = true;
    Ok(out)
}

/// `patch` on a remote backend's machine (`remote.rs`).
#[allow(clippy::too_many_arguments)]
fn patch_remote(
    ctx: &ToolContext,
    shell: &crate::backend::shell::Shell,
    mode: Option<PatchMode>,
    path: Option<String>,
    old_string: Option<String>,
    new_string: Option<String>,
    replace_all: Option<bool>,
    patch: Option<String>,
) -> Result<patch::PatchOutput, error::FileError> {
    match mode.unwrap_or(PatchMode::Replace) {
        PatchMode::Replace => {
            let path = path.ok_or(error::FileError::MissingArgument {
                what: "path is required in mode replace",
            })?;
            let (Some(old), Some(new)) = (old_string, new_string) else {
                return Err(error::FileError::MissingArgument {
                    what: "old_string and new_string are required in mode replace",
                });
            };
            remote::patch_replace(ctx, shell, &path, &old, &new, replace_all.unwrap_or(false))
        }
        PatchMode::Patch => {
            let text =
                patch
                    .filter(|p| !p.is_empty())
                    .ok_or(error::FileError::MissingArgument {
                        what: "patch (the V4A patch text) is required in mode patch",
                    })?;
            remote::patch_v4a(ctx, shell, &text)
        }
    }
}

/// Search file contents with a regular expression, or find files by name.
///
/// Content search (`target: "content"`, the default) returns matching lines
/// with their file and line number (`output_mode: "content"`), the files that
/// match (`"files_only"`) or the matches per file (`"count"`); `context` adds
/// lines around each match. File search (`target: "files"`) finds files whose
/// names match a glob such as `*.py`, newest first: use it instead of `ls` or
/// `find`. Both honour .gitignore and skip hidden and binary files; page with
/// `offset` and `limit`.
#[hermes_tool(
    toolset = "file",
    emoji = "🔎",
    read_only,
    open_world = false,
    concurrency = "safe"
)]
#[allow(clippy::too_many_arguments)]
pub fn search_files(
    ctx: &ToolContext,
    /// Regular expression (Rust regex syntax) for content search, or a glob such
    /// as `*.py` for file search.
    pattern: String,
    /// `content` (search inside files, the default) or `files` (find files by name).
    target: Option<Target>,
    /// Folder or file to search, relative to the working directory (default: it).
    path: Option<String>,
    /// Content search: only search files matching this glob, e.g. `*.rs`.
    file_glob: Option<String>,
    /// Most results to return (default 50, at most 1000).
    limit: Option<u64>,
    /// Results to skip first, to page through many (default 0).
    offset: Option<u64>,
    /// Content search: `content` (matching lines, the default), `files_only`
    /// (paths of matching files) or `count` (matches per file).
    output_mode: Option<OutputMode>,
    /// Content search: lines to show before and after each match (default 0,
    /// at most 20).
    context: Option<u64>,
) -> Result<search::SearchOutput, error::FileError> {
    let req = search::SearchRequest {
        pattern: &pattern,
        target: target.unwrap_or_default(),
        path: path.as_deref(),
        file_glob: file_glob.as_deref(),
        limit,
        offset,
        output_mode: output_mode.unwrap_or_default(),
        context,
    };
    let backend = crate::backend::of(ctx).map_err(error::FileError::Refused)?;
    if let Files::Remote(shell) = backend.files() {
        return remote::search(ctx, shell, &req);
    }
    let guard = guard::Guard::new(ctx);
    if let Some(path) = path.as_deref().filter(|p| !p.is_empty()) {
        let real = guard.resolve(Path::new(path));
        if let Some(refused) = guard.read_error(Path::new(path), &real) {
            return Err(error::FileError::Refused(refused));
        }
    }
    let deadline = std::time::Instant::now() + search::MAX_SEARCH_TIME;
    let mut out = search::search(ctx.cwd(), &req, Some(&guard), deadline)?;
    for found in &mut out.matches {
        if let Cow::Owned(clean) = redact_for(ctx.profile(), &found.content, Scope::FileRead) {
            found.content = clean;
        }
        if let Cow::Owned(inert) = common::escape_controls(&found.content) {
            found.content = inert;
        }
    }
    out.densify();
    Ok(out)
}

/// The real path of `path` as the file tools resolve it, when it exists.
fn real_path(ctx: &ToolContext, path: &str) -> Option<std::path::PathBuf> {
    std::fs::canonicalize(common::resolve(ctx.cwd(), path).ok()?).ok()
}

/// `read_state::stale_warning` for a path as the model gave it.
fn stale_warning(ctx: &ToolContext, path: &str) -> Option<String> {
    read_state::stale_warning(ctx.task_id(), &real_path(ctx, path)?, path)
}
