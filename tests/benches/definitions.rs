//! Tool definitions for the full default toolset of 60 tools (the 12 test
//! tools plus 48 run-time tools registered into toolsets), cached (a repeat
//! of the same request) and uncached (the memo cleared before each call).
//!
//! Run: `cargo bench -p hermes-tests --bench definitions`.

use std::sync::Arc;

use divan::{black_box, Bencher};
use hermes_runtime::{HandlerFuture, Profile, Registry, RuntimeToolSpec, ToolContext};
use serde_json::{json, Value};

fn main() {
    divan::main();
}

/// A profile whose `.env` holds the key the gated test tools check for, so
/// all 60 tools are exposed.
fn profile() -> Profile {
    let home = std::env::temp_dir().join("hermes-bench-profile");
    if std::fs::create_dir_all(&home)
        .and_then(|()| std::fs::write(home.join(".env"), "SEARCH_API_KEY=bench\n"))
        .is_err()
    {
        panic!("cannot write the bench profile");
    }
    Profile::new(home)
}

fn registry_with_60_tools() -> Registry {
    let registry = Registry::new(&hermes_tests::generated::TABLES);
    let static_count = registry.tools().len();
    for i in 0..(60 - static_count) {
        let spec = RuntimeToolSpec::new(
            format!("plugin_tool_{i:02}"),
            format!("plugin-set-{}", i % 6),
            format!("Plugin tool number {i}: does one small thing with a path and a limit."),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A path."},
                    "limit": {"type": "integer", "minimum": 0, "description": "How many."},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags."}
                },
                "required": ["path"]
            }),
            Arc::new(|_: ToolContext, _: Value| {
                Box::pin(async { "{}".to_string() }) as HandlerFuture
            }),
        );
        if let Err(e) = registry.register_tool(spec) {
            panic!("{e}");
        }
    }
    assert_eq!(registry.tools().len(), 60);
    registry
}

#[divan::bench]
fn definitions_cached(b: Bencher) {
    let registry = registry_with_60_tools();
    let profile = profile();
    let defs = registry.get_tool_definitions(None, &[], &profile);
    assert_eq!(defs.tools.len(), 60);
    b.bench(|| registry.get_tool_definitions(black_box(None), &[], &profile));
}

#[divan::bench]
fn definitions_uncached(b: Bencher) {
    let registry = registry_with_60_tools();
    let profile = profile();
    b.bench(|| {
        registry.invalidate_definitions();
        registry.get_tool_definitions(black_box(None), &[], &profile)
    });
}

/// Steps 1–2 alone (toolset resolution), the part of an uncached build that
/// does not depend on the number of schemas.
#[divan::bench]
fn selection_only(b: Bencher) {
    let registry = registry_with_60_tools();
    b.bench(|| registry.selected_tools(black_box(None), &[]));
}
