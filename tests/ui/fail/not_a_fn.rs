//! `#[hermes_tool]` on something other than a function. The item is kept as
//! written, so the code that uses it compiles on: only the misplaced attribute
//! is reported.
use hermes_macros::hermes_tool;

mod greetings {
    use super::hermes_tool;

    /// A greeting.
    #[hermes_tool(toolset = "demo")]
    pub struct Greeting {
        pub name: String,
    }
}

use greetings::*;

fn main() {
    let g = Greeting {
        name: String::from("hi"),
    };
    let _ = g.name;
}
