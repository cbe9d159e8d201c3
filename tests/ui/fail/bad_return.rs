use hermes_macros::hermes_tool;

struct Opaque;

/// Returns something the model cannot read.
#[hermes_tool(toolset = "demo")]
fn opaque() -> Opaque {
    Opaque
}

fn main() {}
