//! A `# Arguments` item that names no parameter (here a stale name).
use hermes_macros::hermes_tool;

/// Says hello.
///
/// # Arguments
/// * `name` - Who to greet.
/// * `times` - How many times.
#[hermes_tool(toolset = "demo")]
fn hello(name: String, count: u32) -> String {
    name.repeat(count as usize)
}

fn main() {}
