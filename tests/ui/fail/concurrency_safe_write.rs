use hermes_macros::hermes_tool;

/// Writes, yet says any two calls may run at once.
#[hermes_tool(toolset = "demo", destructive, concurrency = "safe")]
fn racy(
    /// A path.
    path: String,
) -> String {
    path
}

fn main() {}
