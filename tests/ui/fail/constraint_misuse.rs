use hermes_macros::hermes_tool;

/// Bounds on the wrong types.
#[hermes_tool(toolset = "t")]
async fn misplaced(
    /// A path.
    #[schemars(range(min = 1, max = 10))]
    path: String,
    /// A count.
    #[schemars(length(max = 3))]
    count: u32,
    /// A number with a pattern.
    #[schemars(regex(pattern = "^[0-9]+$"))]
    id: Option<u64>,
) -> String {
    format!("{path}{count}{id:?}")
}

fn main() {}
