use hermes_macros::hermes_tool;
use hermes_runtime::{Profile, ToolContext};

fn has_key(profile: &Profile) -> bool {
    profile.home().exists()
}

/// Searches the web.
///
/// Returns titles and links.
#[hermes_tool(
    toolset = "web",
    name = "web-search",
    emoji = "🔎",
    check = has_key,
    requires_env = ["SEARCH_API_KEY"],
    max_result_chars = 4000,
    description = "Search the web for a query.",
    override,
    read_only,
    idempotent = false,
    open_world,
    concurrency = "safe",
)]
async fn web_search(
    ctx: &ToolContext,
    /// What to search for.
    query: String,
    /// How many results.
    limit: Option<u32>,
) -> Result<Vec<String>, String> {
    let _ = ctx.cwd();
    Ok(vec![query; limit.unwrap_or(1) as usize])
}

fn main() {
    let e = &__HERMES_TOOL_web_search;
    assert_eq!(e.name, "web-search");
    assert_eq!(e.description, "Search the web for a query.");
    assert_eq!(e.requires_env, &["SEARCH_API_KEY"]);
    assert_eq!(e.max_result_chars, Some(4000));
    assert!(e.override_existing);
    assert!(e.check.is_some());
    assert!(e.effects.read_only && !e.effects.destructive && !e.effects.idempotent);
    assert!(e.effects.open_world);
    assert_eq!(e.effects.concurrency, hermes_runtime::Concurrency::Safe);
}
