use hermes_macros::hermes_tool;

/// Keys a parameter cannot take.
#[hermes_tool(toolset = "t")]
async fn unknown(
    /// A path.
    #[schemars(example = "x")]
    #[serde(deserialize_with = "from_str")]
    path: String,
    /// A count.
    #[schemars(range(minimum = 1))]
    count: u32,
    /// A limit.
    #[schemars(range(min = "one"))]
    limit: u32,
    /// A flag, optional already.
    #[serde(default)]
    flag: Option<bool>,
    /// A size.
    #[schemars(length(min = 5, max = 2))]
    size: String,
) -> String {
    format!("{path}{count}{limit}{flag:?}{size}")
}

fn main() {}
