//! The `file` toolset: read, write, patch and search files. The logic lives
//! in `ops.rs`; this file only declares the tools.

mod ops;
#[cfg(test)]
mod ops_tests;

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;

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
) -> Result<ops::ReadFileOutput, ops::FileError> {
    // The profile's `tool_output.max_lines` lowers the page (not above 2000).
    let max_lines = ctx.profile().config().tool_output.max_lines.value as u64;
    let limit = limit.unwrap_or(ops::DEFAULT_READ_LIMIT).min(max_lines);
    ops::read_file(ctx.cwd(), &path, offset, Some(limit))
}

/// Write a text file, replacing its contents; missing parent folders are created.
#[hermes_tool(toolset = "file", emoji = "✍️")]
pub fn write_file(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The complete new contents of the file.
    content: String,
) -> Result<ops::WriteFileOutput, ops::FileError> {
    ops::write_file(ctx.cwd(), &path, &content)
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
) -> Result<ops::PatchOutput, ops::FileError> {
    ops::patch(
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
) -> Result<ops::SearchOutput, ops::FileError> {
    ops::search_files(
        ctx.cwd(),
        &pattern,
        path.as_deref(),
        file_glob.as_deref(),
        limit,
    )
}
