//! A key written twice.
use hermes_macros::hermes_tool;

/// Says hello.
#[hermes_tool(toolset = "demo", emoji = "👋", toolset = "greetings")]
fn hello(
    /// Who to greet.
    name: String,
) -> String {
    name
}

fn main() {}
