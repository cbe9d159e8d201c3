//! The `file` toolset: read, write, patch and search files.

mod ops;

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;

/// Read a text file and return numbered lines.
#[hermes_tool(toolset = "file", emoji = "📖")]
pub async fn read_file(
    ctx: &ToolContext,
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// First line to return (1-based).
    offset: Option<u64>,
    /// How many lines to return.
    limit: Option<u64>,
) -> Result<ops::ReadFileOutput, ops::FileError> {
    ops::read_file(ctx.cwd(), &path, offset, limit)
}
