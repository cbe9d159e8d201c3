//! `allow(...)` with a reason, kebab-case or snake_case lint names: accepted.
use hermes_macros::hermes_tool;

/// Reads what `web_search` saved.
#[hermes_tool(
    toolset = "notes",
    allow(
        foreign-tool-in-description = "names the tool as the notes' source, not as a tool to call",
        undocumented_parameter = "snake_case names the same lint",
    )
)]
fn notes_read(filter: String) -> String {
    filter
}

fn main() {
    let e = &__HERMES_TOOL_notes_read;
    assert_eq!(e.name, "notes_read");
}
