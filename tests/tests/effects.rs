//! What a tool does, asked of the registry: the built-in tools' declared
//! `ToolEffects`, a run-time tool that declares nothing, and the rules every
//! tool of the registry keeps.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use hermes_runtime::tool::DynHandler;
use hermes_runtime::{
    Concurrency, HandlerFuture, Registry, RuntimeToolSpec, ToolContext, ToolEffects,
};
use serde_json::{json, Value};

fn handler() -> DynHandler {
    Arc::new(|_ctx: ToolContext, _args: Value| {
        Box::pin(async { "{}".to_string() }) as HandlerFuture
    })
}

#[test]
fn the_built_in_tools_say_what_they_do() {
    let registry = hermes_tools::registry();
    let effects = |name: &str| registry.tool(name).unwrap().effects().clone();

    let read = effects("read_file");
    assert!(read.read_only && read.idempotent && !read.destructive && !read.open_world);
    assert_eq!(read.path_scope(), Some("path"));

    let write = effects("write_file");
    assert!(!write.read_only && write.destructive);
    assert_eq!(write.path_scope(), Some("path"));

    let search = effects("search_files");
    assert!(search.read_only);
    assert_eq!(search.concurrency, Concurrency::Safe);

    // Barriers: the shell, and the question to the user.
    assert_eq!(effects("terminal").concurrency, Concurrency::Exclusive);
    assert!(effects("terminal").destructive && effects("terminal").open_world);
    assert_eq!(effects("clarify").concurrency, Concurrency::Exclusive);

    let web = effects("web_search");
    assert!(web.read_only && web.open_world && web.parallel_safe());

    assert_eq!(registry.tool("read_file").unwrap().title(), "Read file");
}

#[test]
fn a_struct_result_has_an_output_schema() {
    let registry = hermes_tools::registry();
    let write = registry.tool("write_file").unwrap();
    let schema = write.output_schema().unwrap();
    assert_eq!(schema["type"], "object");
    assert!(
        schema["properties"].get("bytes_written").is_some(),
        "{schema}"
    );
    // `_warning` is left out when empty: not required.
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    assert!(!required.contains(&json!("_warning")), "{schema}");
    // read_file answers a page or a note (an enum without a schema): none.
    assert!(registry
        .tool("read_file")
        .unwrap()
        .output_schema()
        .is_none());
}

#[test]
fn no_tool_contradicts_itself() {
    for registry in [hermes_tools::registry(), hermes_tests::registry()] {
        for tool in registry.tools() {
            let e = tool.effects();
            assert!(!(e.read_only && e.destructive), "{}: {e:?}", tool.name());
            assert!(
                e.read_only || e.concurrency != Concurrency::Safe,
                "{} writes and is concurrency-safe",
                tool.name()
            );
        }
    }
}

#[test]
fn a_run_time_tool_that_declares_nothing_writes_and_runs_alone() {
    // A registry of its own: the shared one is left as it is.
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    let spec = RuntimeToolSpec::new(
        "effects_probe_plugin",
        "effects-probe",
        "A plugin tool that states nothing.",
        json!({"type": "object", "properties": {}}),
        handler(),
    );
    registry.register_tool(spec).unwrap();
    let tool = registry.tool("effects_probe_plugin").unwrap();
    assert_eq!(tool.effects(), &ToolEffects::UNDECLARED);
    assert!(!tool.effects().parallel_safe());
    assert_eq!(tool.title(), "Effects probe plugin");

    let mut declared = RuntimeToolSpec::new(
        "effects_probe_reader",
        "effects-probe",
        "A plugin tool that only reads.",
        json!({"type": "object", "properties": {}}),
        handler(),
    );
    declared.effects = ToolEffects {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        concurrency: Concurrency::Safe,
    };
    declared.title = Some("Reader".into());
    registry.register_tool(declared).unwrap();
    let tool = registry.tool("effects_probe_reader").unwrap();
    assert!(tool.effects().read_only && tool.effects().parallel_safe());
    assert_eq!(tool.title(), "Reader");
}
