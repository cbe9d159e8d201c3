//! `hermes-runtime`: the static tool runtime.
//!
//! A [`Registry`] wraps the generated, phf-indexed table of built-in tools
//! (`hermes_tools::generated::TOOLS`) and answers the model's tool calls with
//! [`Registry::dispatch`], which always returns a JSON string. Schemas are
//! derived by `#[hermes_tool]`; this crate never parses Rust.

pub mod availability;
pub mod blocking;
pub mod coerce;
pub mod context;
pub mod definitions;
pub mod dialect;
pub mod disclosure;
mod dispatch;
pub mod entry;
pub mod hooks;
pub mod registry;
pub mod sanitize;
pub mod tool;
pub mod toolsets;

mod cap;
mod catch;
mod direct;
mod schema;

#[doc(hidden)]
pub mod __private;

pub use blocking::{BlockingWork, DEFAULT_MAX_ABANDONED};
pub use cap::{CUT_KEY, CUT_MARKER};
pub use context::{Profile, ToolContext};
pub use entry::{Handler, HandlerFuture, ParamInfo, ToolEntry};
pub use registry::{
    AgentLoopExecutor, DispatchConfig, Registry, StaticPlans, StaticTables, StaticTools,
    AGENT_LOOP_TOOLS,
};
pub use tool::{RegisterError, RuntimeToolSpec, ToolRef, ToolSource};

/// Builds the `{"error": MESSAGE}` JSON string every failure is reported as.
pub fn error_json(message: impl Into<String>) -> String {
    serde_json::json!({ "error": message.into() }).to_string()
}
