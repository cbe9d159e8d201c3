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

/// A tool's result with an image (the test tool `show_image` on a 1x1 PNG),
/// as each provider takes a tool result: OpenAI's content parts, Anthropic's
/// `tool_result` blocks, and the text with a note for dialects without
/// images in tool results.
#[tokio::test]
async fn an_image_result_in_every_form() {
    use hermes_runtime::{ResultForm, ToolContext};
    let home = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(home.path()), home.path());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pixel.png");
    let args = serde_json::json!({ "path": path });
    let content = hermes_tests::registry()
        .dispatch_content("show_image", args, &ctx)
        .await;
    assert_eq!(content.media.len(), 1, "{content:?}");
    for (name, form) in [
        ("openai", ResultForm::OpenAi),
        ("anthropic", ResultForm::Anthropic),
        ("text", ResultForm::Text),
    ] {
        let message = content.to_message_content(form);
        insta::assert_snapshot!(
            format!("image_result_{name}"),
            serde_json::to_string_pretty(&message).unwrap()
        );
    }
    for dialect in Dialect::ALL {
        let expected = match dialect {
            Dialect::OpenAi | Dialect::OpenAiStrict => ResultForm::OpenAi,
            _ => ResultForm::Text,
        };
        assert_eq!(ResultForm::of(dialect), expected, "{dialect}");
    }
}
