use hermes_macros::hermes_tool;

// Every mistake is reported in one compile, not only the first.
#[hermes_tool(toolset = "demo", colour = "blue", name = "")]
fn hello<T>((a, _b): (T, T)) -> T {
    a
}

fn main() {}
