use hermes_macros::hermes_tool;

fn five() -> u8 {
    5
}

/// Constraints on every kind of parameter that can carry one.
#[hermes_tool(toolset = "t")]
fn constrained(
    /// A count.
    #[schemars(range(min = 1, max = 10))]
    #[serde(default = "five")]
    count: u8,
    /// Names.
    #[schemars(length(equal = 2))]
    names: std::collections::BTreeSet<String>,
    /// A map.
    #[schemars(length(max = 3))]
    map: Option<std::collections::HashMap<String, u32>>,
    /// A word.
    #[schemars(pattern("^[a-z]+$"), length(min = 1))]
    #[serde(rename = "the-word")]
    word: String,
    /// A default from the type.
    #[serde(default)]
    ratio: f32,
) -> String {
    format!("{count}{names:?}{map:?}{word}{ratio}")
}

fn main() {
    let p = (__HERMES_TOOL_constrained.parameters)();
    assert_eq!(p["properties"]["count"]["maximum"], 10);
    assert_eq!(p["properties"]["count"]["default"], 5);
    assert_eq!(p["properties"]["names"]["minItems"], 2);
    assert_eq!(p["properties"]["names"]["maxItems"], 2);
    assert_eq!(p["properties"]["map"]["maxProperties"], 3);
    assert_eq!(p["properties"]["the-word"]["pattern"], "^[a-z]+$");
    assert_eq!(p["properties"]["the-word"]["minLength"], 1);
    assert_eq!(p["required"], hermes_runtime::__private::serde_json::json!(["names", "the-word"]));
}
