//! A server's requests back to the client — `sampling/createMessage`,
//! `elicitation/create`, `roots/list` — from a real server of the official
//! Python SDK (`tests/support/asking_server.py`), through the registry as
//! an agent calls its tools; the model is the scripted chat-completions
//! server of `hermes-model`'s tests. The callbacks are process-wide, so
//! the tests take turns.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../cli/tests/mcp_client_support/mod.rs"]
mod mcp_support;
#[path = "../../model/tests/support/mod.rs"]
mod model_support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_mcp_client::callbacks::{
    file_uri, ElicitationAnswer, ElicitationCallback, ElicitationRequest, SamplingCallback,
};
use hermes_mcp_client::{McpClients, State};
use hermes_model::{Endpoint, ModelClient};
use mcp_support::{python, Fixture};
use serde_json::{json, Value};

const CONNECT: Duration = Duration::from_secs(40);

/// One test at a time: the callbacks are the process's.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn entry(name: &str, extra: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/asking_server.py");
    format!(
        "  {name}:\n    command: {:?}\n    args: [{:?}]\n    timeout: 60\n{extra}",
        python().display().to_string(),
        script.display().to_string()
    )
}

fn start(f: &Fixture) -> McpClients {
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    clients.wait_ready(CONNECT);
    for s in clients.status() {
        assert_eq!(s.state, State::Connected, "{s:?}");
    }
    clients
}

/// A tool's answer: the JSON text the server's tool returned.
fn answer(f: &Fixture, tool: &str, args: Value) -> Value {
    let r = f.call(tool, args);
    let text = r["result"].as_str().unwrap_or_else(|| panic!("{r}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A sampling callback over `hermes_model::sampling` and `url`'s model.
fn model_callback(url: &str) -> SamplingCallback {
    let client = ModelClient::new(Endpoint::new(url, "agent-model"));
    Arc::new(move |req| {
        let client = client.clone();
        Box::pin(async move {
            hermes_model::sampling::create_message(
                &client,
                &req.params,
                req.model.as_deref(),
                req.max_tokens,
            )
            .await
        })
    })
}

#[test]
fn sampling_reaches_the_agent_s_model_within_the_entry_s_limits() {
    let _turn = turn();
    let (url, seen) = model_support::serve(|body| {
        if body.get("tools").is_some() {
            model_support::call("c1", "lookup", json!({"word": "mcp"}))
        } else {
            let asked = body["messages"][1]["content"].as_str().unwrap_or("?");
            if asked == "secret" {
                return model_support::answer("the key is sk-abc123 and Bearer t0ken");
            }
            model_support::answer(&format!("model answer to {asked}"))
        }
    });
    hermes_mcp_client::set_sampling_callback(model_callback(&url));
    let f = Fixture::new(
        &format!(
            "{}{}",
            entry(
                "asker",
                "    sampling:\n      max_rpm: 2\n      max_tokens_cap: 50\n      model: chosen-model\n      max_tool_rounds: 1\n"
            ),
            entry(
                "picky",
                "    sampling:\n      allowed_models: [ok-model]\n"
            )
        ),
        "",
    );
    let _clients = start(&f);

    let caps = answer(&f, "mcp__asker__capabilities", json!({}));
    assert!(caps["sampling"].is_object(), "{caps}");

    let r = answer(&f, "mcp__asker__ask_model", json!({"prompt": "hello"}));
    assert_eq!(r["content"]["text"], "model answer to hello", "{r}");
    assert_eq!(r["role"], "assistant", "{r}");
    assert_eq!(r["stopReason"], "endTurn", "{r}");
    let body = seen.recv_timeout(Duration::from_secs(5)).unwrap().body;
    // The entry's model and token cap, the server's system prompt first.
    assert_eq!(body["model"], "chosen-model", "{body}");
    assert_eq!(body["max_tokens"], 50, "{body}");
    assert_eq!(body["messages"][0]["role"], "system", "{body}");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hello"})
    );

    // Tool use: one round allowed, the next in a row refused.
    let r = answer(
        &f,
        "mcp__asker__ask_model",
        json!({"prompt": "look", "with_tools": true}),
    );
    assert_eq!(r["stopReason"], "toolUse", "{r}");
    assert_eq!(r["content"][0]["name"], "lookup", "{r}");
    assert_eq!(r["content"][0]["input"], json!({"word": "mcp"}), "{r}");
    let body = seen.recv_timeout(Duration::from_secs(5)).unwrap().body;
    assert_eq!(body["tools"][0]["function"]["name"], "lookup", "{body}");

    // The model's answer reaches the server with credentials stripped.
    // (max_rpm is 2: this is the third request, so another server asks.)
    let r = answer(&f, "mcp__picky__ask_model", json!({"prompt": "secret"}));
    let text = r["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        !text.contains("sk-abc123") && !text.contains("t0ken"),
        "{r}"
    );
    assert!(text.contains("[REDACTED]"), "{r}");
    seen.recv_timeout(Duration::from_secs(5)).unwrap();

    // max_rpm: 2 — a third request within the minute is refused, and the
    // model is not asked.
    let r = answer(&f, "mcp__asker__ask_model", json!({"prompt": "again"}));
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(
        error.contains("rate limit") && error.contains("asker"),
        "{r}"
    );

    // A model the entry does not allow.
    let r = answer(
        &f,
        "mcp__picky__ask_model",
        json!({"prompt": "x", "hint": "other-model"}),
    );
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(
        error.contains("other-model") && error.contains("allowed_models"),
        "{r}"
    );
    // Neither refused request reached the model.
    assert!(seen.try_recv().is_err());
    hermes_mcp_client::clear_sampling_callback();
}

#[test]
fn tool_rounds_in_a_row_are_bounded() {
    let _turn = turn();
    let (url, _seen) =
        model_support::serve(|_| model_support::call("c1", "lookup", json!({"word": "w"})));
    hermes_mcp_client::set_sampling_callback(model_callback(&url));
    let f = Fixture::new(
        &entry("looper", "    sampling:\n      max_tool_rounds: 1\n"),
        "",
    );
    let _clients = start(&f);
    let args = json!({"prompt": "p", "with_tools": true});
    let first = answer(&f, "mcp__looper__ask_model", args.clone());
    assert_eq!(first["stopReason"], "toolUse", "{first}");
    let second = answer(&f, "mcp__looper__ask_model", args);
    let error = second["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{second}"));
    assert!(error.contains("max_tool_rounds"), "{second}");
    hermes_mcp_client::clear_sampling_callback();
}

#[test]
fn sampling_disabled_or_without_a_callback_is_refused_with_the_reason() {
    let _turn = turn();
    let (url, seen) = model_support::serve(|_| model_support::answer("unused"));
    hermes_mcp_client::set_sampling_callback(model_callback(&url));
    let f = Fixture::new(
        &format!(
            "{}{}",
            entry("off", "    sampling:\n      enabled: false\n"),
            entry("on", "")
        ),
        "",
    );
    let _clients = start(&f);
    // Advertised where it is on and a callback is installed.
    let caps = answer(&f, "mcp__off__capabilities", json!({}));
    assert!(caps.get("sampling").is_none(), "{caps}");
    assert!(caps["roots"].is_object(), "{caps}");
    let caps = answer(&f, "mcp__on__capabilities", json!({}));
    assert!(caps["sampling"].is_object(), "{caps}");
    let r = answer(&f, "mcp__off__ask_model", json!({"prompt": "x"}));
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(error.contains("disabled") && error.contains("'off'"), "{r}");

    // The callback removed: refused at once, with why.
    hermes_mcp_client::clear_sampling_callback();
    let r = answer(&f, "mcp__on__ask_model", json!({"prompt": "x"}));
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(error.contains("no sampling callback"), "{r}");
    assert!(seen.try_recv().is_err(), "the model was asked");
    // A server connected without a callback is not told the client samples.
    let g = Fixture::new(&entry("later", ""), "");
    let _later = start(&g);
    let caps = answer(&g, "mcp__later__capabilities", json!({}));
    assert!(caps.get("sampling").is_none(), "{caps}");
}

#[test]
fn elicitation_gets_the_user_s_answer_with_the_schema_s_defaults() {
    let _turn = turn();
    let asked: Arc<Mutex<Vec<ElicitationRequest>>> = Arc::default();
    let record = Arc::clone(&asked);
    let callback: ElicitationCallback = Arc::new(move |req| {
        record.lock().unwrap().push(req);
        let mut content = serde_json::Map::new();
        content.insert("name".into(), json!("Ada"));
        Box::pin(async move { ElicitationAnswer::Accept(content) })
    });
    hermes_mcp_client::set_elicitation_callback(callback);
    let f = Fixture::new(&entry("form", ""), "");
    let clients = start(&f);
    let caps = answer(&f, "mcp__form__capabilities", json!({}));
    assert!(caps["elicitation"].is_object(), "{caps}");

    let r = answer(
        &f,
        "mcp__form__ask_user",
        json!({"question": "Who are you?"}),
    );
    assert_eq!(r["action"], "accept", "{r}");
    // The user gave the name; the age is the schema's default.
    assert_eq!(r["content"], json!({"name": "Ada", "age": 30}), "{r}");
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].server, "form");
        assert_eq!(asked[0].message, "Who are you?");
        assert_eq!(asked[0].schema["required"], json!(["name"]));
        // The call's own context: its working directory.
        let ctx = asked[0].ctx.as_ref().expect("the call in flight");
        assert_eq!(ctx.cwd(), f.dir.path());
    }

    // Removed: the server is told why, and the call still ends.
    hermes_mcp_client::clear_elicitation_callback();
    let r = answer(&f, "mcp__form__ask_user", json!({"question": "Again?"}));
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(error.contains("no elicitation callback"), "{r}");
    drop(clients);
}

#[test]
fn roots_are_the_session_s_working_directory() {
    let _turn = turn();
    let f = Fixture::new(&entry("rooted", ""), "");
    let _clients = start(&f);
    let roots = answer(&f, "mcp__rooted__roots", json!({}));
    let dir = std::path::absolute(f.dir.path()).unwrap();
    assert_eq!(roots.as_array().map(Vec::len), Some(1), "{roots}");
    assert_eq!(roots[0]["uri"], file_uri(&dir), "{roots}");
    assert!(roots[0]["uri"].as_str().unwrap().starts_with("file:///"));
}

#[test]
fn a_slow_model_or_user_is_cut_off_at_the_entry_s_timeout() {
    let _turn = turn();
    // The model answers after 5 s; the entry gives it 1.
    let (url, _seen) = model_support::serve(|_| {
        model_support::Reply::After(
            Duration::from_secs(5),
            Box::new(model_support::answer("late")),
        )
    });
    hermes_mcp_client::set_sampling_callback(model_callback(&url));
    // A user who never answers.
    hermes_mcp_client::set_elicitation_callback(Arc::new(|_| {
        Box::pin(std::future::pending::<ElicitationAnswer>())
    }));
    let f = Fixture::new(
        &entry(
            "slow",
            "    sampling:\n      timeout: 1\n    elicitation:\n      timeout: 1\n",
        ),
        "",
    );
    let _clients = start(&f);
    let r = answer(&f, "mcp__slow__ask_model", json!({"prompt": "p"}));
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(
        error.contains("timed out") && error.contains("sampling.timeout"),
        "{r}"
    );
    let r = answer(&f, "mcp__slow__ask_user", json!({"question": "q"}));
    assert_eq!(r["action"], "cancel", "{r}");
    hermes_mcp_client::clear_sampling_callback();
    hermes_mcp_client::clear_elicitation_callback();
}
