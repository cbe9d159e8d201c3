//! An `impl Trait` parameter: the schema needs one concrete type.
use hermes_macros::hermes_tool;

/// Says hello.
#[hermes_tool(toolset = "demo")]
fn hello(
    /// Who to greet.
    name: impl Into<String>,
) -> String {
    name.into()
}

fn main() {}
