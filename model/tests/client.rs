//! The client against a scripted chat-completions server on 127.0.0.1:
//! the endpoint a profile configures, retries of 429 / 5xx / refused
//! connections, answers that end at once, a timeout, and a conversation
//! whose tool calls run through a real registry.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::time::Duration;

use hermes_model::{run, Endpoint, EndpointError, ModelClient, ModelError, Outcome};
use hermes_runtime::{Profile, Registry, ToolContext};
use serde_json::json;
use support::{ok, runtime, scripted, Reply, Seen};

mod support;

fn profile(config: &str, env: &str) -> (tempfile::TempDir, Profile) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yaml"), config).unwrap();
    std::fs::write(dir.path().join(".env"), env).unwrap();
    let p = Profile::new(dir.path());
    (dir, p)
}

fn fast(url: &str) -> Endpoint {
    let mut e = Endpoint::new(url, "test-model");
    e.backoff = Duration::from_millis(20);
    e
}

#[test]
fn a_profile_names_its_endpoint() {
    // A name alone: the default provider, its key from `.env`.
    let (_d, p) = profile("model: some/model\n", "OPENROUTER_API_KEY=sk-or-test\n");
    let e = Endpoint::from_profile(&p).unwrap();
    assert_eq!(e.model, "some/model");
    assert_eq!(e.base_url, hermes_model::PROVIDERS[0].base_url);
    assert_eq!(e.api_key.as_deref(), Some("sk-or-test"));
    // The key never shows in a debug print.
    assert!(!format!("{e:?}").contains("sk-or-test"));

    // The mapping: a custom endpoint, `model.model` read as `default`.
    let (_d, p) = profile(
        "model:\n  model: local\n  base_url: http://127.0.0.1:9/v1\n  timeout: 7\n  max_retries: 0\n  tool_dialect: llamacpp\n",
        "OPENAI_API_KEY=sk-custom\n",
    );
    let e = Endpoint::from_profile(&p).unwrap();
    assert_eq!(
        (e.model.as_str(), e.base_url.as_str()),
        ("local", "http://127.0.0.1:9/v1")
    );
    assert_eq!(e.api_key.as_deref(), Some("sk-custom"));
    assert_eq!((e.timeout, e.max_retries), (Duration::from_secs(7), 0));
    assert_eq!(e.dialect, hermes_runtime::dialect::Dialect::LlamaCpp);

    // A provider of the table: its endpoint and key.
    let (_d, p) = profile(
        "model:\n  default: gpt-x\n  provider: openai\n  api_key: sk-inline\n",
        "OPENAI_API_KEY=sk-env\n",
    );
    let e = Endpoint::from_profile(&p).unwrap();
    assert_eq!(e.base_url, "https://api.openai.com/v1");
    assert_eq!(e.api_key.as_deref(), Some("sk-inline"));

    // What cannot be resolved says what to set, and where.
    let (_d, p) = profile("model:\n  provider: acme\n  default: m\n", "");
    let err = Endpoint::from_profile(&p).unwrap_err();
    assert!(matches!(err, EndpointError::NoBaseUrl { .. }), "{err}");
    assert!(err.to_string().contains("model.base_url"), "{err}");
    let (_d, p) = profile("toolsets: [file]\n", "");
    let err = Endpoint::from_profile(&p).unwrap_err();
    assert!(err.to_string().contains("config.yaml"), "{err}");
    let (_d, p) = profile("model:\n  default: m\n  tool_dialect: gemini\n", "");
    assert!(matches!(
        Endpoint::from_profile(&p),
        Err(EndpointError::Dialect { .. })
    ));
}

#[test]
fn a_bad_model_key_is_reported_where_it_is() {
    let (_d, p) = profile("model:\n  default: m\n  timeout: 0\n  max_retrys: 2\n", "");
    let config = p.config();
    let shown: Vec<String> = config
        .diagnostics
        .iter()
        .map(|d| d.render(&config.path))
        .collect();
    assert!(
        shown
            .iter()
            .any(|d| d.contains("model.timeout") && d.contains(":3:")),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|d| d.contains("max_retries")),
        "a did-you-mean: {shown:?}"
    );
    // The bad value keeps its default.
    assert_eq!(config.model.timeout.value, 120);
}

#[test]
fn busy_and_failing_answers_are_tried_again() {
    let (url, seen) = scripted(vec![
        Reply::Http(429, "Retry-After: 0\r\n", "slow down".into()),
        Reply::Http(503, "", "unavailable".into()),
        ok(json!({"role": "assistant", "content": "hello"})),
    ]);
    let mut e = fast(&url);
    e.api_key = Some("sk-test".into());
    let client = ModelClient::new(e);
    let message = runtime()
        .block_on(client.chat(&[json!({"role": "user", "content": "hi"})], &[]))
        .unwrap();
    assert_eq!(message["content"], "hello");
    let seen: Vec<Seen> = seen.try_iter().collect();
    assert_eq!(seen.len(), 3, "{seen:?}");
    for s in &seen {
        assert_eq!(s.path, "/v1/chat/completions");
        assert_eq!(s.authorization.as_deref(), Some("Bearer sk-test"));
        assert_eq!(s.body["model"], "test-model");
        assert_eq!(s.body["messages"][0]["content"], "hi");
    }
}

#[test]
fn retries_end_with_the_last_answer() {
    let (url, seen) = scripted(
        (0..3)
            .map(|_| Reply::Http(500, "", "boom".into()))
            .collect(),
    );
    let mut e = fast(&url);
    e.max_retries = 2;
    let err = runtime()
        .block_on(ModelClient::new(e).chat(&[], &[]))
        .unwrap_err();
    assert!(
        matches!(err, ModelError::Status { status: 500, .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("after 3 attempts") && text.contains("boom"),
        "{text}"
    );
    assert_eq!(seen.try_iter().count(), 3);
}

#[test]
fn a_request_the_endpoint_refuses_is_not_sent_again() {
    let (url, seen) = scripted(vec![
        Reply::Http(401, "", r#"{"error": "bad key"}"#.into()),
        ok(json!({"role": "assistant", "content": "never"})),
    ]);
    let err = runtime()
        .block_on(ModelClient::new(fast(&url)).chat(&[], &[]))
        .unwrap_err();
    assert!(
        matches!(err, ModelError::Status { status: 401, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("bad key"), "{err}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(seen.try_iter().count(), 1);
}

#[test]
fn answers_that_are_no_completion_say_so() {
    let (url, _seen) = scripted(vec![Reply::Http(200, "", "<html>gateway</html>".into())]);
    let err = runtime()
        .block_on(ModelClient::new(fast(&url)).chat(&[], &[]))
        .unwrap_err();
    assert!(matches!(err, ModelError::BadAnswer { .. }), "{err}");
    assert!(err.to_string().contains("gateway"), "{err}");
}

#[test]
fn no_server_and_no_answer_end_in_errors() {
    // Nothing listens: every attempt is refused, then the error.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut e = fast(&format!("http://127.0.0.1:{port}/v1"));
    e.max_retries = 1;
    let err = runtime()
        .block_on(ModelClient::new(e).chat(&[], &[]))
        .unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err}");
    assert!(err.to_string().contains("after 2 attempts"), "{err}");

    // A server that never answers: the timeout, and no second request.
    let (url, seen) = scripted(vec![Reply::Silent, Reply::Silent]);
    let mut e = fast(&url);
    e.timeout = Duration::from_secs(1);
    let err = runtime()
        .block_on(ModelClient::new(e).chat(&[], &[]))
        .unwrap_err();
    assert!(matches!(err, ModelError::Transport { .. }), "{err}");
    assert_eq!(seen.try_iter().count(), 1);
}

#[test]
fn a_conversation_runs_its_tool_calls_through_the_registry() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "the answer is 42\n").unwrap();
    let call = json!({"id": "c1", "type": "function",
        "function": {"name": "read_file", "arguments": "{\"path\": \"notes.txt\"}"}});
    let (url, seen) = scripted(vec![
        ok(json!({"role": "assistant", "content": null, "tool_calls": [call]})),
        ok(json!({"role": "assistant", "content": "It says 42."})),
    ]);
    let client = ModelClient::new(fast(&url));
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    let home = tempfile::tempdir().unwrap();
    let profile = Profile::new(home.path());
    let ctx = ToolContext::new(profile.clone(), work.path());
    let definitions = registry.get_tool_definitions(Some(&["file"]), &[], &profile);
    let (tools, left_out) = client.tools_for(&definitions.to_vec());
    assert!(left_out.is_empty(), "{left_out:?}");
    let mut messages = vec![json!({"role": "user", "content": "What do the notes say?"})];
    let mut calls = Vec::new();
    let outcome = runtime()
        .block_on(run(
            &client,
            &registry,
            &ctx,
            &tools,
            &mut messages,
            4,
            |name, _| calls.push(name.to_string()),
        ))
        .unwrap();
    assert_eq!(outcome, Outcome::Answer("It says 42.".into()));
    assert_eq!(calls, ["read_file"]);
    let seen: Vec<Seen> = seen.try_iter().collect();
    // The second request carries the tool's real result.
    let result = &seen[1].body["messages"][2];
    assert_eq!(result["tool_call_id"], "c1");
    assert!(result["content"]
        .as_str()
        .unwrap()
        .contains("the answer is 42"));
    assert!(seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == "read_file"));
    // The caller keeps the whole conversation.
    assert_eq!(messages.len(), 4);
}
