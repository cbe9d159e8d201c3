use hermes_macros::hermes_tool;

/// Echoes a value.
#[hermes_tool(toolset = "demo")]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
