use hermes_macros::hermes_tool;

/// Adds two numbers.
#[hermes_tool(toolset = "demo")]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
