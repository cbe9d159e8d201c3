use hermes_macros::hermes_tool;

/// Says it changes nothing and that it destroys things.
#[hermes_tool(toolset = "demo", read_only, destructive)]
fn confused(
    /// A path.
    path: String,
) -> String {
    path
}

fn main() {}
