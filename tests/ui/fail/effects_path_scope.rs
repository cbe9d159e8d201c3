use hermes_macros::hermes_tool;

/// Names a parameter it does not have.
#[hermes_tool(toolset = "demo", destructive, concurrency = "path:file")]
fn missing(
    /// A path.
    path: String,
    /// Its text.
    text: String,
) -> String {
    format!("{path}{text}")
}

/// Names a parameter that is not a string.
#[hermes_tool(toolset = "demo", destructive, concurrency = "path:line")]
fn not_a_string(
    /// A line.
    line: u64,
) -> String {
    line.to_string()
}

fn main() {}
