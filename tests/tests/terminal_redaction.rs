//! Secrets in what `terminal` and `process` return are redacted with the
//! file tools' patterns (`hermes_procs::redact`, one home), through the
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

/// Starts `command` in the background and polls it (for at most 10 s)
/// until `done` holds of the poll: its id and the last poll.
async fn background_until(
    ctx: &ToolContext,
    command: &str,
    done: impl Fn(&Value) -> bool,
) -> (String, Value) {
    let v = call(
        ctx,
        "terminal",
        json!({"command": command, "background": true}),
    )
    .await;
    let id = v["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut polled = Value::Null;
    while Instant::now() < deadline {
        polled = call(ctx, "process", json!({"action": "poll", "session_id": id})).await;
        if done(&polled) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (id, polled)
}

#[tokio::test]
async fn process_output_and_command_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("redact-bg");
    let (id, polled) = background_until(&ctx, &format!("echo {KEY}; sleep 30"), |p| {
        p["output_preview"].as_str().unwrap_or("").contains("sk-")
    })
    .await;
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

/// A custom secret whose name and shape no pattern knows.
const CUSTOM: &str = "abcd1234secret";
/// One the shell has to quote when it prints it.
const QUOTED: &str = "pa ss'w\"ord$9x";

#[tokio::test]
async fn the_profiles_secrets_never_come_back_through_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let profile = profile(dir.path(), "");
    std::fs::write(
        profile.home().join(".env"),
        format!(
            "MY_THING={CUSTOM}\nODD='{}'\nSHORT=abc\n",
            QUOTED.replace('\'', "'\\''")
        ),
    )
    .unwrap();
    assert_eq!(
        profile.secret("ODD").as_deref(),
        Some(QUOTED),
        "the .env parses"
    );
    let ctx = ToolContext::new(profile, dir.path()).with_task_id("redact-env");
    for command in [
        "env",
        "(env)",
        "/usr/bin/env",
        "printenv",
        "printenv MY_THING",
        "cat /proc/self/environ",
        "cat /proc/self/environ | tr '\\0' '\\n'",
        "echo $MY_THING",
        "echo \"x${MY_THING}y\"",
        "set",
        "declare -p",
        "declare -p MY_THING ODD",
        "export -p",
        "echo \"$ODD\"",
        "printf '%s' \"$MY_THING\" | rev | rev",
        "x=$MY_THING; echo ${x}",
    ] {
        let v = call(&ctx, "terminal", json!({ "command": command })).await;
        let text = v.to_string();
        let out = v["output"]
            .as_str()
            .unwrap_or_else(|| panic!("{command}: {v}"));
        assert!(!text.contains(CUSTOM), "{command}: {v}");
        assert!(!out.contains(QUOTED), "{command}: {v}");
        assert!(!out.contains("ss'\\''w"), "{command}: {v}");
        assert!(!out.contains("ss'w\\\"ord\\$9x"), "{command}: {v}");
        if command.contains("MY_THING") || command.contains("env") {
            assert!(out.contains("«redacted:MY_THING»"), "{command}: {v}");
        }
    }
    // Short values are not secrets: left as they are.
    let v = call(&ctx, "terminal", json!({"command": "echo $SHORT"})).await;
    assert_eq!(v["output"].as_str().unwrap().trim(), "abc", "{v}");
    // A background command's output too.
    let (id, polled) = background_until(&ctx, "echo $MY_THING; sleep 30", |p| {
        p.to_string().contains("redacted:MY_THING")
    })
    .await;
    assert!(
        polled.to_string().contains("«redacted:MY_THING»"),
        "{polled}"
    );
    assert!(!polled.to_string().contains(CUSTOM), "{polled}");
    call(&ctx, "process", json!({"action": "kill", "session_id": id})).await;
}
