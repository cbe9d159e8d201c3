//! A tool's image reaches the model through the agent loop
//! (`hermes_model::run`, `Registry::dispatch_batch_content`): as content
//! parts for an OpenAI-dialect endpoint, as text with a note naming it for
//! one that takes text only. The model is scripted on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use hermes_model::{run, Endpoint, ModelClient, Outcome};
use hermes_runtime::dialect::Dialect;
use hermes_runtime::{Profile, Registry, ToolContext};
use serde_json::{json, Value};

#[path = "../../model/tests/support/mod.rs"]
mod support;

use support::{answer, call, runtime, serve, Seen};

const PIXEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pixel.png");

/// The tool message a conversation sent back after one `show_image` call.
fn tool_message(dialect: Dialect) -> Value {
    let (url, seen) = serve(|body| {
        let messages = body["messages"].as_array().unwrap();
        if messages.iter().any(|m| m["role"] == "tool") {
            answer("a pixel")
        } else {
            call("i1", "show_image", json!({"path": PIXEL}))
        }
    });
    let registry = Registry::new(&hermes_tests::generated::TABLES);
    let home = tempfile::tempdir().unwrap();
    let profile = Profile::new(home.path());
    let ctx = ToolContext::new(profile.clone(), home.path());
    let mut endpoint = Endpoint::new(&url, "m");
    endpoint.dialect = dialect;
    endpoint.backoff = Duration::from_millis(10);
    let client = ModelClient::new(endpoint);
    let definitions = registry
        .get_tool_definitions(Some(&["edges"]), &[], &profile)
        .to_vec();
    let (tools, _) = client.tools_for(&definitions);
    let mut messages = vec![json!({"role": "user", "content": "show me"})];
    let outcome = runtime()
        .block_on(run(
            &client,
            &registry,
            &ctx,
            &tools,
            &mut messages,
            3,
            |_, _| {},
        ))
        .unwrap();
    assert_eq!(outcome, Outcome::Answer("a pixel".into()));
    let seen: Vec<Seen> = seen.try_iter().collect();
    let second = seen
        .iter()
        .find(|s| s.body["messages"].as_array().unwrap().len() == 3)
        .unwrap();
    second.body["messages"][2].clone()
}

#[test]
fn an_openai_endpoint_gets_the_image_as_a_content_part() {
    let m = tool_message(Dialect::OpenAi);
    assert_eq!(m["tool_call_id"], "i1");
    let parts = m["content"].as_array().unwrap();
    assert_eq!(
        parts[0],
        json!({"type": "text", "text": "the image pixel.png"})
    );
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{url}");
}

#[test]
fn a_text_only_endpoint_gets_a_note_naming_the_image() {
    let m = tool_message(Dialect::LlamaCpp);
    let text = m["content"].as_str().unwrap();
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["result"], "the image pixel.png");
    assert!(
        v["media_note"].as_str().unwrap().contains("image/png"),
        "{v}"
    );
}
