//! `hermes-tools call --elicit`: how a run with no user to ask answers an
//! MCP server's `elicitation/create`, against a real server of the
//! official Python SDK (`mcp-client/tests/support/asking_server.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client_support;

use std::path::Path;
use std::process::Command;

use mcp_client_support::python;
use serde_json::{json, Value};

/// Runs `call mcp__form__ask_user ARGS` (plus `extra`) in a profile whose
/// one server is the asking server; the tool's own JSON answer.
fn ask(args: Value, extra: &[&str]) -> Value {
    let home = tempfile::tempdir().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/support/asking_server.py");
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "mcp_servers:\n  form:\n    command: {:?}\n    args: [{:?}]\n    timeout: 60\n",
            python().display().to_string(),
            script.display().to_string()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hermes-tools"))
        .arg("--profile")
        .arg(home.path())
        .args(["call", "mcp__form__ask_user", &args.to_string()])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
    let text = result["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn elicit_defaults_accepts_the_form_s_defaults_or_declines() {
    let r = ask(
        json!({"question": "Who?", "name_default": "Bob"}),
        &["--elicit", "defaults"],
    );
    assert_eq!(r["action"], "accept", "{r}");
    assert_eq!(r["content"], json!({"name": "Bob", "age": 30}), "{r}");
    // The required name has no default: nothing to accept.
    let r = ask(json!({"question": "Who?"}), &["--elicit", "defaults"]);
    assert_eq!(r["action"], "decline", "{r}");
    let r = ask(
        json!({"question": "Who?", "name_default": "Bob"}),
        &["--elicit", "decline"],
    );
    assert_eq!(r["action"], "decline", "{r}");
    // Without the flag the server is told why, and the call ends.
    let r = ask(json!({"question": "Who?"}), &[]);
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(error.contains("no elicitation callback"), "{r}");
}
