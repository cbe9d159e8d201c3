//! A borrowed parameter (`&str`): arguments are decoded from JSON, so owned types only.
use hermes_macros::hermes_tool;

/// Says hello.
#[hermes_tool(toolset = "demo")]
fn hello(
    /// Who to greet.
    name: &str,
) -> String {
    name.to_string()
}

fn main() {}
