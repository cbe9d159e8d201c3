use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;

/// Counts words.
///
/// # Arguments
/// * `text` - The text to count.
/// * `unique` - Count each word once.
#[hermes_tool(toolset = "text")]
fn count_words(_ctx: ToolContext, text: String, unique: Option<bool>) -> usize {
    let words = text.split_whitespace();
    if unique.unwrap_or(false) {
        words.collect::<std::collections::BTreeSet<_>>().len()
    } else {
        words.count()
    }
}

fn main() {
    let e = &__HERMES_TOOL_count_words;
    assert_eq!(e.params[0].description, "The text to count.");
    assert!(e.params[0].required);
    assert!(!e.params[1].required);
    assert_eq!(e.description, "Counts words.");
}
