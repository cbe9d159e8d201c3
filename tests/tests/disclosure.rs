//! Progressive disclosure: bridge tools replace deferrable schemas past a
//! share of the context window; `tool_call` reaches only the session's tools
//! and hooks see the real tool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use hermes_runtime::disclosure::DisclosureConfig;
use hermes_runtime::hooks::{PostCallEvent, PostCallHook};
use hermes_runtime::{Profile, Registry, ToolContext};
use serde_json::{json, Value};

fn registry() -> Registry {
    Registry::new(&hermes_tests::generated::TABLES)
}

fn ctx() -> ToolContext {
    ToolContext::new(Profile::new("/tmp/hermes-disclosure"), "/tmp")
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[test]
fn deferrable_schemas_over_the_budget_become_bridge_tools() {
    let reg = registry();
    let profile = Profile::new("/tmp/p-disclosure");
    reg.set_progressive_disclosure(Some(
        DisclosureConfig::default()
            .with_context_window_tokens(1_000)
            .with_max_share(0.1),
    ));
    let defs = reg.get_tool_definitions(None, &[], &profile);
    // Core tools stay; the rest is reachable through the bridge.
    assert_eq!(
        defs.names(),
        [
            "echo",
            "notes_read",
            "tool_call",
            "tool_describe",
            "tool_search"
        ]
    );
    assert!(defs.deferred.contains(&"notes_write".to_string()));
    assert!(
        !defs.deferred.contains(&"echo".to_string()),
        "core is never deferred"
    );

    reg.set_progressive_disclosure(Some(
        DisclosureConfig::default()
            .with_context_window_tokens(1_000_000)
            .with_max_share(0.5),
    ));
    let defs = reg.get_tool_definitions(None, &[], &profile);
    assert!(defs.deferred.is_empty());
    assert!(defs.names().contains(&"notes_write"));
}

#[tokio::test]
async fn search_and_describe_read_the_session_catalog() {
    let reg = registry();
    let out = parse(
        &reg.dispatch("tool_search", json!({"query": "note"}), &ctx())
            .await,
    );
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"notes_write") && names.contains(&"notes_read"),
        "{out}"
    );

    let out = parse(
        &reg.dispatch("tool_describe", json!({"name": "notes_write"}), &ctx())
            .await,
    );
    assert_eq!(out["name"], "notes_write");
    assert!(out["parameters"]["properties"]["text"].is_object());

    let scoped = ctx().with_enabled_tools(vec!["echo".into()]);
    let out = parse(
        &reg.dispatch("tool_describe", json!({"name": "notes_write"}), &scoped)
            .await,
    );
    assert!(out["error"]
        .as_str()
        .unwrap()
        .contains("not among this session's tools"));
    let out = parse(
        &reg.dispatch("tool_search", json!({"query": "note"}), &scoped)
            .await,
    );
    assert_eq!(out["tools"], json!([]));
}

#[derive(Default)]
struct Names(Mutex<Vec<String>>);
impl PostCallHook for Names {
    fn post_call(&self, e: &PostCallEvent<'_>) {
        self.0.lock().unwrap().push(e.tool.to_string());
    }
}

#[tokio::test]
async fn tool_call_unwraps_to_the_real_tool_in_scope() {
    let reg = registry();
    let names = Arc::new(Names::default());
    reg.add_post_call_hook(names.clone());
    let out = reg
        .dispatch(
            "tool_call",
            json!({"name": "echo", "arguments": {"text": "via bridge", "count": "4"}}),
            &ctx(),
        )
        .await;
    assert_eq!(parse(&out), json!({"text": "via bridge", "count": 4}));
    assert_eq!(
        *names.0.lock().unwrap(),
        ["echo"],
        "hooks see the real tool"
    );

    // Arguments sent as a JSON string are accepted too.
    let out = reg
        .dispatch(
            "tool_call",
            json!({"name": "echo", "arguments": "{\"text\": \"s\"}"}),
            &ctx(),
        )
        .await;
    assert_eq!(parse(&out)["text"], "s");

    let scoped = ctx().with_enabled_tools(vec!["echo".into()]);
    let out = reg
        .dispatch(
            "tool_call",
            json!({"name": "notes_write", "arguments": {"text": "x"}}),
            &scoped,
        )
        .await;
    assert!(parse(&out)["error"]
        .as_str()
        .unwrap()
        .contains("not among this session's tools"));
    let out = reg
        .dispatch("tool_call", json!({"name": "tool_call"}), &ctx())
        .await;
    assert!(parse(&out)["error"].as_str().unwrap().contains("bridge"));
    let out = reg.dispatch("tool_call", json!({}), &ctx()).await;
    assert!(parse(&out)["error"]
        .as_str()
        .unwrap()
        .contains("needs `name`"));
}
