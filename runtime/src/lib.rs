//! `hermes-runtime`: the static tool runtime.
//!
//! A [`Registry`] wraps the generated, phf-indexed table of built-in tools
//! (`hermes_tools::generated::TOOLS`) and answers the model's tool calls with
//! [`Registry::dispatch`], which always returns a JSON string. Schemas are
//! derived by `#[hermes_tool]`; this crate never parses Rust.

pub mod approval;
pub mod availability;
pub mod batch;
pub mod blocking;
pub mod cancel;
pub mod config;
pub mod content;
pub mod context;
pub mod definitions;
pub mod dialect;
pub mod disclosure;
mod dispatch;
pub mod effects;
pub mod entry;
pub mod hooks;
pub mod paths;
pub mod registry;
pub mod sanitize;
pub mod tool;

mod args;
mod cap;
mod catch;
mod coerce;
mod constraints;
mod direct;
mod param;
mod schema;
mod statics;
mod tables;
mod toolsets;

#[doc(hidden)]
pub mod __private;

pub use blocking::{BlockingWork, DEFAULT_MAX_ABANDONED};
pub use cancel::Cancellation;
pub use cap::{CUT_KEY, CUT_MARKER};
// Argument repair: `coerce_args` (its docs list the rules) and the
// compiled form `CoercionPlan`, which dispatch applies before each call.
pub use batch::{BatchCall, BatchResults, BatchResultsIter};
pub use coerce::{coerce_args, CoercionPlan};
pub use content::{Media, MediaKind, ResultForm, ToolContent};
pub use context::{Profile, ToolContext};
pub use effects::{Concurrency, ToolEffects};
pub use entry::{Handler, HandlerFuture, ParamInfo, ToolEntry};
pub use registry::{AgentLoopExecutor, ComposeError, DispatchConfig, Registry, AGENT_LOOP_TOOLS};
pub use tool::{RegisterError, RuntimeToolSpec, ToolRef, ToolSource};
// The toolsets a registry knows (`Registry::toolsets`): resolution,
// custom toolsets, aliases, plugin tools and platforms.
pub use toolsets::{ToolsetInfo, Toolsets};

/// Builds the `{"error": MESSAGE}` JSON string every failure is reported as.
pub fn error_json(message: impl Into<String>) -> String {
    serde_json::json!({ "error": message.into() }).to_string()
}

/// Whether a result is a failure: a JSON object with an `error` key (the
/// `error` status of post-call hooks, MCP's `isError`).
pub fn is_error_result(result: &str) -> bool {
    let text = result.trim_start();
    // Parsed only when it can be one: an object whose text names the key,
    // or could through a `\u` escape.
    text.starts_with('{')
        && (text.contains("\"error\"") || text.contains("\\u"))
        && matches!(
            serde_json::from_str::<serde_json::Value>(text),
            Ok(serde_json::Value::Object(map)) if map.contains_key("error")
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_results() {
        for error in [
            r#"{"error": "x"}"#,
            " \n{\"ok\": 1, \"error\": null}",
            r#"{"\u0065rror": "escaped key"}"#,
            &error_json("built"),
        ] {
            assert!(is_error_result(error), "{error}");
        }
        for ok in [
            r#"{"result": "error"}"#,
            r#"{"result": {"error": 1}}"#,
            r#"["error"]"#,
            r#""{\"error\": 1}""#,
            r#"{"error": 1"#,
            "error",
            "",
        ] {
            assert!(!is_error_result(ok), "{ok}");
        }
    }
}
