use hermes_macros::hermes_tool;

/// Unknown concurrency.
#[hermes_tool(toolset = "demo", concurrency = "parallel")]
fn one(
    /// A path.
    path: String,
) -> String {
    path
}

/// A flag takes true or false.
#[hermes_tool(toolset = "demo", read_only = "yes", open_world = maybe, colour = 1)]
fn two() -> String {
    String::new()
}

/// An empty path scope.
#[hermes_tool(toolset = "demo", concurrency = "path:")]
fn three(
    /// A path.
    path: String,
) -> String {
    path
}

fn main() {}
