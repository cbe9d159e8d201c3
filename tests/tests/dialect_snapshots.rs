//! Golden snapshots of the built-in tools' definitions in every provider
//! dialect, each also checked against that dialect's rules and the JSON
//! Schema meta-schema. Snapshots are insta's, refreshed the one way every
//! snapshot of the workspace is (ARCHITECTURE.md, `tests`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::dialect::{check, rewrite, Dialect};
use hermes_runtime::Profile;
use serde_json::Value;

#[test]
fn built_in_tools_in_every_dialect() {
    let registry = hermes_tools::registry();
    // Every built-in tool is offered: web_search has a key, clarify a
    // callback, delegate_task an executor.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".env"), "WEB_SEARCH_API_KEY=k\n").unwrap();
    let profile = Profile::new(home.path());
    hermes_tools::tools::clarify::set_clarify_callback(
        registry,
        std::sync::Arc::new(|_| Box::pin(async { Ok(String::new()) })),
    );
    // delegate_task: an executor is installed (as `hermes_model::delegation` marks it).
    hermes_tools::tools::delegate_task::mark_installed(registry);
    let defs = registry.get_tool_definitions(None, &[], &profile);
    let mut every_tool: Vec<&str> = registry.builtin_entries().iter().map(|e| e.name).collect();
    every_tool.sort_unstable();
    let mut offered = defs.names();
    offered.sort_unstable();
    assert_eq!(offered, every_tool);
    assert!(!defs.tools.is_empty());
    for dialect in Dialect::ALL {
        let rewritten: Vec<Value> = defs
            .tools
            .iter()
            .map(|t| {
                rewrite(&t["function"], dialect)
                    .unwrap_or_else(|issues| panic!("{dialect}: {issues:?}"))
            })
            .collect();
        for tool in &rewritten {
            assert!(check(tool, dialect).is_empty(), "{dialect}: {tool}");
            let params = tool
                .get("function")
                .map(|f| &f["parameters"])
                .or_else(|| tool.get("inputSchema"))
                .or_else(|| tool.get("parameters"));
            if let Some(params) = params {
                assert!(
                    jsonschema::draft7::meta::validate(params).is_ok(),
                    "{dialect}: {params}"
                );
            }
        }
        insta::assert_snapshot!(
            format!("builtin_tools_{}", dialect.name()),
            serde_json::to_string_pretty(&rewritten).unwrap()
        );
    }
}
