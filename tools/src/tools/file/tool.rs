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
mod error;
mod fsguard;
pub(crate) mod guard;
mod ignore_budget;
mod patch;
mod read;
mod search;
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

use crate::redact::{redact_as, Scope};

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
    let mut out = read::read_file(ctx.cwd(), &path, offset, limit)?;
    if let Cow::Owned(clean) = redact_as(&out.content, Scope::FileRead) {
        out.content = clean;
    }
    Ok(out)
}

/// Write a text file, replacing its contents; missing parent folders are created.
#[hermes_tool(toolset = "file", emoji = "✍️")]
pub fn write_file(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The complete new contents of the file.
    content: String,
) -> Result<write::WriteFileOutput, error::FileError> {
    guard::check_write(ctx, Path::new(&path), "write").map_err(error::FileError::Refused)?;
    write::write_file(ctx.cwd(), &path, &content)
}

/// Replace exact text in a file and show the diff.
///
/// `old_string` must occur exactly once unless `replace_all` is set; include
/// enough surrounding lines to make it unique.
#[hermes_tool(toolset = "file", emoji = "🩹")]
pub fn patch(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The exact text to find, white space included.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    replace_all: Option<bool>,
) -> Result<patch::PatchOutput, error::FileError> {
    guard::check_write(ctx, Path::new(&path), "patch").map_err(error::FileError::Refused)?;
    patch::patch(
        ctx.cwd(),
        &path,
        &old_string,
        &new_string,
        replace_all.unwrap_or(false),
    )
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
