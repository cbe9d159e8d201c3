use hermes_macros::hermes_tool;

/// Says hello.
#[hermes_tool(emoji = "👋")]
fn hello(name: String) -> String {
    name
}

fn main() {}
