//! Hooks and middleware around every tool call: typed trait objects
//! registered on the [`Registry`](crate::Registry).
//!
//! Order in dispatch: request middleware (may rewrite the arguments; hooks
//! still see the original) → pre-call hooks (any may block, or ask for
//! the user's approval) → the handler,
//! wrapped by execution middleware → post-call hooks → result transforms
//! (the first that returns a string replaces the result). A hook or
//! middleware that panics is logged (a `tracing` warning) and skipped: it never breaks
//! the call. With none registered, dispatch pays one atomic load.

use std::sync::Arc;

use serde_json::Value;

use crate::approval::ApprovalNeed;
use crate::entry::HandlerFuture;
use crate::ToolContext;

/// What a hook is told about the call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CallInfo<'a> {
    pub tool: &'a str,
    /// The arguments as the model sent them, after coercion and before
    /// request middleware.
    pub args: &'a Value,
    pub ctx: &'a ToolContext,
}

/// A pre-call hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PreCallDecision {
    Continue,
    /// Stop the call: the model gets `{"error": MESSAGE}`.
    Block(String),
    /// Run the call only once approved: dispatch asks
    /// ([`crate::approval::request`]); a refusal blocks the call with
    /// the refusal's message.
    NeedsApproval(ApprovalNeed),
}

/// How a call ended, as post-call hooks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallStatus {
    Ok,
    /// The result is a JSON object with an `error` key.
    Error,
    /// A pre-call hook blocked the call.
    Blocked,
}

/// Everything known after a call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct PostCallEvent<'a> {
    pub tool: &'a str,
    pub args: &'a Value,
    pub result: &'a str,
    pub ctx: &'a ToolContext,
    pub task_id: Option<&'a str>,
    pub session_id: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    /// Handler time on a monotonic clock (0 for a blocked call).
    pub duration_ms: u64,
    pub status: CallStatus,
}

pub trait PreCallHook: Send + Sync {
    fn pre_call(&self, call: &CallInfo<'_>) -> PreCallDecision;
}

pub trait PostCallHook: Send + Sync {
    fn post_call(&self, event: &PostCallEvent<'_>);
}

pub trait ResultTransformHook: Send + Sync {
    /// `Some(new)` replaces the result (the first hook that answers wins).
    fn transform(&self, call: &CallInfo<'_>, result: &str) -> Option<String>;
}

pub trait RequestMiddleware: Send + Sync {
    /// Returns the arguments the handler gets.
    fn rewrite(&self, call: &CallInfo<'_>, args: Value) -> Value;
}

/// Starts the rest of the chain (the next middleware, finally the handler).
/// It can be called more than once (a retry runs the handler again).
pub type Next = Arc<dyn Fn() -> HandlerFuture + Send + Sync>;

pub trait ExecutionMiddleware: Send + Sync {
    /// Returns the future that produces the result, usually `next()` wrapped.
    fn wrap(&self, call: &CallInfo<'_>, next: Next) -> HandlerFuture;
}

/// The registered hooks. Replaced as a whole on registration (copy on
/// write), so dispatch reads a snapshot without locking.
#[derive(Default, Clone)]
pub(crate) struct HookSet {
    pub pre: Vec<Arc<dyn PreCallHook>>,
    pub post: Vec<Arc<dyn PostCallHook>>,
    pub transform: Vec<Arc<dyn ResultTransformHook>>,
    pub request: Vec<Arc<dyn RequestMiddleware>>,
    pub execution: Vec<Arc<dyn ExecutionMiddleware>>,
}

/// The hooks of a registry that has none: what dispatch passes on without
/// loading the registry's set.
pub(crate) static NO_HOOKS: HookSet = HookSet {
    pre: Vec::new(),
    post: Vec::new(),
    transform: Vec::new(),
    request: Vec::new(),
    execution: Vec::new(),
};

impl HookSet {
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty()
            && self.post.is_empty()
            && self.transform.is_empty()
            && self.request.is_empty()
            && self.execution.is_empty()
    }
}

/// Runs `f`, logging and swallowing a panic (a hook must never break a call).
pub(crate) fn guarded<T>(what: &str, tool: &str, f: impl FnOnce() -> T) -> Option<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let msg = crate::catch::panic_message(payload.as_ref());
            tracing::warn!(hook = what, tool, "a hook panicked and was skipped: {msg}");
            None
        }
    }
}
