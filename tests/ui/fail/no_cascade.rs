//! Tools with a mistake, named by a registry as `cargo xtask gen` writes it
//! (by path) and by a glob import: each tool's real error is reported, and no
//! "cannot find value `__HERMES_TOOL_...`" for the entries.
use hermes_macros::hermes_tool;

mod tools {
    use super::hermes_tool;

    /// Says hello.
    #[hermes_tool(toolset = "demo")]
    pub fn hello(
        /// Who to greet.
        name: &str,
    ) -> String {
        name.to_string()
    }

    /// Says goodbye.
    #[hermes_tool(toolset = "demo", colour = "blue")]
    pub async fn goodbye(
        /// Who to see off.
        name: String,
    ) -> String {
        name
    }
}

/// The shape of the generated registry: entries named by path.
static TOOLS: &[(&str, &hermes_runtime::ToolEntry)] = &[
    ("hello", &tools::__HERMES_TOOL_hello),
    ("goodbye", &tools::__HERMES_TOOL_goodbye),
];

mod by_glob {
    use super::tools::*;

    pub static HELLO: &hermes_runtime::ToolEntry = &__HERMES_TOOL_hello;
}

fn main() {
    assert_eq!(TOOLS.len(), 2);
    assert_eq!(by_glob::HELLO.name, "hello");
    let _ = tools::hello("you");
}
