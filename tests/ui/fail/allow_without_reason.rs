//! `allow(lint)` without a reason, or with an empty one: rejected.
use hermes_macros::hermes_tool;

/// Reads what `web_search` saved.
#[hermes_tool(toolset = "notes", allow(foreign-tool-in-description))]
fn notes_read(
    /// Text to match.
    filter: String,
) -> String {
    filter
}

/// Counts the notes.
#[hermes_tool(toolset = "notes", allow(undocumented-parameter = "  "))]
fn notes_count() -> usize {
    0
}

fn main() {}
