//! `args: T` takes the whole arguments object: no other property beside it.
use hermes_macros::hermes_tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct HelloArgs {
    /// Who to greet.
    name: String,
}

/// Says hello.
#[hermes_tool(toolset = "demo")]
fn hello(
    args: HelloArgs,
    /// How many times.
    times: u32,
) -> String {
    args.name.repeat(times as usize)
}

fn main() {}
