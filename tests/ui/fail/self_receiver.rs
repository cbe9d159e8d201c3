use hermes_macros::hermes_tool;

struct Greeter;

impl Greeter {
    /// Says hello.
    #[hermes_tool(toolset = "demo")]
    fn hello(&self, name: String) -> String {
        name
    }
}

fn main() {}
