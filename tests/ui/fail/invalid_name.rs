use hermes_macros::hermes_tool;

/// Says hello.
#[hermes_tool(toolset = "demo", name = "say hello!")]
fn hello(name: String) -> String {
    name
}

fn main() {}
