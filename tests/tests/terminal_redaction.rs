//! Secrets in what `terminal` and `process` return are redacted with the
//! file tools' patterns (`hermes_tools::redact`, one home), through the
//! real registry's dispatch and real shells: key-shaped secrets always,
//! `NAME=value` assignments only when the command dumps the environment
//! (as the reference does), and not at all in a profile whose config.yaml
//! says `security.redact_secrets: false`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

/// Looks like an OpenAI key; never a real one.
const KEY: &str = "sk-proj0123456789abcdefghijklmnop";
const TOKEN: &str = "zq8Lr2Vw9Xy4Tb7Nc1Md5Fg3Hj6Kp0Qs";

fn profile(dir: &std::path::Path, config: &str) -> Profile {
    let home = dir.join(".hermes");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.yaml"), config).unwrap();
    Profile::new(home)
}

async fn call(ctx: &ToolContext, tool: &str, args: Value) -> Value {
    let out = hermes_tools::registry().dispatch(tool, args, ctx).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[tokio::test]
async fn terminal_output_is_redacted_as_the_command_calls_for() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("redact-fg");

    let v = call(
        &ctx,
        "terminal",
        json!({"command": format!("printf '%s\\n' {KEY} MY_SECRET_TOKEN={TOKEN}")}),
    )
    .await;
    let out = v["output"].as_str().unwrap();
    assert!(!out.contains(KEY), "{v}");
    assert!(
        out.contains("sk-pro"),
        "the key's head stays as a hint: {v}"
    );
    // Not an environment dump: an assignment may be source code, kept.
    assert!(out.contains(TOKEN), "{v}");

    let v = call(
        &ctx,
        "terminal",
        json!({"command": format!("export MY_SECRET_TOKEN={TOKEN}; env | grep MY_SECRET_TOKEN")}),
    )
    .await;
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("MY_SECRET_TOKEN="), "{v}");
    assert!(!out.contains(TOKEN), "an environment dump is redacted: {v}");
}

#[tokio::test]
async fn process_output_and_command_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("redact-bg");
    let v = call(
        &ctx,
        "terminal",
        json!({"command": format!("echo {KEY}; sleep 30"), "background": true}),
    )
    .await;
    let id = v["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut polled = Value::Null;
    while Instant::now() < deadline {
        polled = call(&ctx, "process", json!({"action": "poll", "session_id": id})).await;
        if polled["output_preview"]
            .as_str()
            .unwrap_or("")
            .contains("sk-")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let text = polled.to_string();
    assert!(text.contains("sk-pro"), "the output arrived: {polled}");
    assert!(
        !text.contains(KEY),
        "poll shows no key, in output or command: {polled}"
    );
    let listed = call(&ctx, "process", json!({"action": "list"})).await;
    assert!(!listed.to_string().contains(KEY), "{listed}");
    let log = call(&ctx, "process", json!({"action": "log", "session_id": id})).await;
    assert!(!log.to_string().contains(KEY), "{log}");
    call(&ctx, "process", json!({"action": "kill", "session_id": id})).await;
}

#[tokio::test]
async fn a_profile_can_turn_redaction_off() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(
        profile(dir.path(), "security:\n  redact_secrets: false\n"),
        dir.path(),
    )
    .with_task_id("redact-off");
    let v = call(&ctx, "terminal", json!({"command": format!("echo {KEY}")})).await;
    assert!(v["output"].as_str().unwrap().contains(KEY), "{v}");

    // Read once per profile: turning it on later in the file changes
    // nothing for this process, as a command turning it off could not.
    std::fs::write(
        dir.path().join(".hermes/config.yaml"),
        "security:\n  redact_secrets: true\n",
    )
    .unwrap();
    let v = call(&ctx, "terminal", json!({"command": format!("echo {KEY}")})).await;
    assert!(v["output"].as_str().unwrap().contains(KEY), "{v}");
}
