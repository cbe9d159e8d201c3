//! Tools that misbehave on purpose, and tools with every return shape.

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;
use serde::{Deserialize, Serialize};

/// Panics while being polled.
#[hermes_tool(toolset = "edges")]
pub async fn panic_async(
    /// What to panic with.
    message: String,
) -> String {
    tokio::task::yield_now().await;
    panic!("{message}")
}

/// Panics on the blocking pool.
#[hermes_tool(toolset = "edges")]
pub fn panic_sync(
    /// What to panic with.
    message: String,
) -> String {
    panic!("{message}")
}

/// Returns its arguments.
#[hermes_tool(toolset = "edges", emoji = "🔁")]
pub async fn echo(
    /// Any text.
    text: String,
    /// Any count.
    count: Option<u32>,
) -> EchoOutput {
    EchoOutput { text, count }
}

#[derive(Serialize)]
pub struct EchoOutput {
    text: String,
    count: Option<u32>,
}

/// Returns a string; a JSON document passes through unchanged.
#[hermes_tool(toolset = "edges")]
pub fn raw_string(
    /// Returned as is.
    text: String,
) -> String {
    text
}

/// Fails with the given message when told to.
#[hermes_tool(toolset = "edges")]
pub fn maybe_fail(
    /// Whether to fail.
    fail: bool,
) -> Result<&'static str, String> {
    if fail {
        Err("it failed as asked".into())
    } else {
        Ok("fine")
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct RangeArgs {
    /// Start, inclusive.
    pub start: i64,
    /// End, exclusive.
    pub end: i64,
}

/// Lists the integers of a range.
#[hermes_tool(toolset = "edges")]
pub fn range(args: RangeArgs) -> Vec<i64> {
    (args.start..args.end).take(100).collect()
}

/// Reports the call context it was given.
#[hermes_tool(toolset = "edges")]
pub fn whoami(ctx: &ToolContext) -> serde_json::Value {
    serde_json::json!({
        "task_id": ctx.task_id(),
        "session_id": ctx.session_id(),
        "home": ctx.profile().home(),
    })
}

/// Sleeps, then answers.
#[hermes_tool(toolset = "edges", max_result_chars = 10)]
pub async fn sleepy(
    /// How long to sleep, in milliseconds.
    ms: u64,
) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

/// Blocks its thread, then answers.
#[hermes_tool(toolset = "edges")]
pub fn block_thread(
    /// How long to block, in milliseconds.
    ms: u64,
) -> String {
    std::thread::sleep(std::time::Duration::from_millis(ms));
    format!("blocked {ms} ms")
}
