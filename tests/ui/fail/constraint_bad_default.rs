use hermes_macros::hermes_tool;

struct NoDefault;

fn wrong_type() -> String {
    String::new()
}

/// A default of the wrong type, and one the type cannot give.
#[hermes_tool(toolset = "t")]
async fn bad_default(
    /// A limit.
    #[serde(default = "wrong_type")]
    limit: u32,
    /// A list.
    #[serde(default = "missing_fn")]
    items: Vec<String>,
) -> String {
    format!("{limit}{items:?}")
}

fn main() {
    let _ = NoDefault;
}
