//! Hostile-input cases: MCP servers. A server written with the official
//! Python SDK answers 20 MiB (over the client's message limit), floods
//! stdout with a 100 MiB line that never ends, answers garbage, and dies
//! mid-call; each costs that call an `{"error": ...}` from `hermes-tools
//! call`, under the harness's memory limit.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness;

#[path = "../mcp_client_support/mod.rs"]
mod support;

/// A profile whose `config.yaml` runs the test server as `h`, with a
/// 10-second call timeout.
fn profile(dir: &Path) {
    let entry = support::stdio_entry("h", "    timeout: 10\n    connect_timeout: 60\n");
    std::fs::write(dir.join("config.yaml"), format!("mcp_servers:\n{entry}")).expect("config");
}

fn error_of(name: &str, args: &Value) -> String {
    let (cwd, home) = harness::dirs();
    profile(home.path());
    let out = harness::call(
        name,
        args,
        cwd.path(),
        home.path(),
        &[],
        Duration::from_secs(120),
    );
    out.error().to_string()
}

#[test]
fn mcp_answer_over_the_message_limit() {
    let e = error_of("mcp__h__big", &json!({"megabytes": 20}));
    assert!(e.contains("longer than"), "{e}");
}

#[test]
fn mcp_endless_line_on_stdout() {
    let e = error_of("mcp__h__flood", &json!({"megabytes": 100}));
    assert!(e.contains("did not answer within 10s"), "{e}");
}

#[test]
fn mcp_garbage_answer() {
    let e = error_of("mcp__h__garbage", &json!({}));
    assert!(e.starts_with("MCP call failed"), "{e}");
}

#[test]
fn mcp_server_dies_mid_call() {
    let e = error_of("mcp__h__die", &json!({}));
    assert!(e.starts_with("MCP call failed"), "{e}");
}

/// One `tools/list` page of 100,000 tools (about 13 MB, under the message
/// limit) from a bare server: `mcp list` offers the first `max_tools` and
/// says the rest were cut, and the tools past the cap are never built
/// (the page is cut before it is parsed into tools).
#[test]
fn mcp_listing_of_100000_tools() {
    let (cwd, home) = harness::dirs();
    let raw = support::server_script().with_file_name("raw_server.py");
    let entry = format!(
        "  raw:\n    command: {:?}\n    args: [{:?}, \"100000\"]\n    connect_timeout: 60\n",
        support::python().display().to_string(),
        raw.display().to_string()
    );
    std::fs::write(
        home.path().join("config.yaml"),
        format!("mcp_servers:\n{entry}"),
    )
    .expect("config");
    let run = harness::run(
        &["mcp", "list"],
        cwd.path(),
        home.path(),
        &[],
        Duration::from_secs(120),
    );
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("max_tools"), "{}", run.stdout);
    assert!(run.stdout.contains("connected"), "{}", run.stdout);
}
