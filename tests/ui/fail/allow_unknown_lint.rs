//! `allow(...)` of an unknown lint, or of one that cannot be allowed per tool: rejected.
use hermes_macros::hermes_tool;

/// Reads the notes.
#[hermes_tool(toolset = "notes", allow(foreign-tool = "a typo of the lint name"))]
fn notes_read(
    /// Text to match.
    filter: String,
) -> String {
    filter
}

/// Counts the notes.
#[hermes_tool(toolset = "notes", allow(duplicate-tool-name = "not a per-tool lint"))]
fn notes_count() -> usize {
    0
}

fn main() {}
