//! Tools behind an availability check, and tools in several toolsets, for
//! the toolset, availability and definitions tests.

use hermes_macros::hermes_tool;
use hermes_runtime::Profile;

/// Available when the profile's `.env` holds `SEARCH_API_KEY`.
pub fn has_search_key(profile: &Profile) -> bool {
    profile.secret("SEARCH_API_KEY").is_some()
}

/// Searches (pretends to).
#[hermes_tool(toolset = "search", check = has_search_key, requires_env = ["SEARCH_API_KEY"])]
pub fn gated_search(
    /// What to look for.
    query: String,
) -> String {
    format!("results for {query}")
}

/// Fetches a page (pretends to).
#[hermes_tool(toolset = "search", check = has_search_key, requires_env = ["SEARCH_API_KEY"])]
pub fn gated_fetch(
    /// The page.
    url: String,
) -> String {
    format!("page {url}")
}

/// Reads the notes.
#[hermes_tool(toolset = "notes")]
pub fn notes_read() -> &'static str {
    "no notes"
}

/// Writes a note.
#[hermes_tool(toolset = "notes")]
pub fn notes_write(
    /// The note.
    text: String,
) -> usize {
    text.len()
}
