//! Two `ToolContext` parameters: dispatch injects one.
use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;

/// Says hello.
#[hermes_tool(toolset = "demo")]
fn hello(
    ctx: &ToolContext,
    again: ToolContext,
    /// Who to greet.
    name: String,
) -> String {
    let _ = (ctx, again);
    name
}

fn main() {}
