use hermes_macros::hermes_tool;

fn ready() -> bool {
    true
}

/// Says hello.
#[hermes_tool(toolset = "demo", check = ready)]
fn hello(
    /// Who to greet.
    name: String,
) -> String {
    name
}

fn main() {}
