use hermes_macros::hermes_tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PatchArgs {
    /// The file to patch.
    path: String,
    /// Text to find.
    old_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    replace_all: bool,
}

/// Replaces text in a file.
#[hermes_tool(toolset = "file")]
fn patch(args: PatchArgs) -> Result<String, std::io::Error> {
    Ok(format!("{} {} {}", args.path, args.old_string, args.replace_all))
}

fn main() {
    let params = __HERMES_TOOL_patch.parameters();
    assert_eq!(params["type"], "object");
    assert!(params["properties"]["path"].is_object());
}
