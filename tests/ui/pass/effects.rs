use hermes_macros::hermes_tool;
use hermes_runtime::{Concurrency, ToolEffects};

/// Writes a file.
#[hermes_tool(toolset = "file", destructive, open_world = false, concurrency = "path:path")]
fn save(
    /// Where.
    path: String,
    /// What.
    text: String,
) -> String {
    format!("{path}: {text}")
}

/// Reads a file.
#[hermes_tool(toolset = "file", read_only, concurrency = "path:path")]
fn load(
    /// Where.
    path: Option<std::path::PathBuf>,
) -> String {
    format!("{path:?}")
}

/// Declares nothing.
#[hermes_tool(toolset = "file")]
fn anything() -> String {
    String::new()
}

fn main() {
    let save = &__HERMES_TOOL_save.effects;
    assert!(!save.read_only && save.destructive && !save.open_world);
    assert_eq!(save.path_scope(), Some("path"));
    // Unstated keys keep the safe default.
    assert!(!save.idempotent);

    let load = &__HERMES_TOOL_load.effects;
    assert!(load.read_only && !load.destructive && load.idempotent);
    assert!(load.parallel_safe());

    // Forgetting is safe: writing, destructive, exclusive.
    assert_eq!(__HERMES_TOOL_anything.effects, ToolEffects::UNDECLARED);
    assert_eq!(
        __HERMES_TOOL_anything.effects.concurrency,
        Concurrency::Exclusive
    );
}
