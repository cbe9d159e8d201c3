use hermes_macros::hermes_tool;

struct Point {
    x: i64,
}

/// Moves to a point.
#[hermes_tool(toolset = "demo")]
fn move_to(
    /// Where to go.
    to: Point,
) -> i64 {
    to.x
}

fn main() {}
