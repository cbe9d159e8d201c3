use hermes_macros::hermes_tool;

#[hermes_tool(toolset = "demo")]
fn hello(name: String) -> String {
    name
}

fn main() {}
