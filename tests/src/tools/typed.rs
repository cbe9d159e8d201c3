//! Async tools with parameters of every common kind: the direct decode
//! (raw JSON straight into the parameter types) must answer exactly as
//! the `Value` path (coercion, then a per-parameter decode) does.

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;
use serde::{Deserialize, Serialize};

use super::edges::RangeArgs;

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
pub struct Window {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels; square when absent.
    pub height: Option<u32>,
}

/// Returns its typed arguments and the working directory of its context.
#[hermes_tool(
    toolset = "edges",
    allow(
        dialect_incompatible = "`payload` takes any JSON value on purpose: a test tool, offered to no provider"
    )
)]
#[allow(clippy::too_many_arguments)]
pub async fn typed_echo(
    ctx: &ToolContext,
    /// A count.
    count: u32,
    /// A ratio.
    ratio: f64,
    /// A flag.
    flag: bool,
    /// Labels.
    tags: Vec<String>,
    /// Any JSON value but null.
    payload: serde_json::Value,
    /// A window size.
    window: Option<Window>,
    /// A signed offset.
    offset: Option<i64>,
    /// A note, as kept in {HERMES_HOME}/notes.
    note: Option<String>,
) -> serde_json::Value {
    serde_json::json!({
        "count": count,
        "ratio": ratio,
        "flag": flag,
        "tags": tags,
        "payload": payload,
        "window": window,
        "offset": offset,
        "note": note,
        "cwd": ctx.cwd(),
    })
}

/// Lists the integers of a range, as an async tool taking an args struct.
#[hermes_tool(toolset = "edges")]
pub async fn range_async(args: RangeArgs) -> Vec<i64> {
    (args.start..args.end).take(100).collect()
}
