//! `dispatch`: the reference's `handle_function_call`, for agent loops that
//! call tools concurrently. Every call is answered with a JSON string.
//!
//! Pipeline: look the tool up (unknown → error with "did you mean") →
//! coerce the arguments with the tool's plan → non-object arguments become
//! `{}` → request middleware (may rewrite; hooks keep the original) →
//! agent-loop tools (`todo`, `memory`, `session_search`, `delegate_task`)
//! answered by the agent's inline executor, else an error → pre-call hooks
//! (any may block: `{"error": MESSAGE}` and a post-call event `blocked`;
//! one that needs approval is asked through `approval::request`, and a
//! refusal blocks the same way) →
//! the handler through execution middleware, under a timeout, timed on a
//! monotonic clock, panics contained → the per-tool result cap (lowered by
//! the profile's `tool_output.max_result_chars`) → post-call hooks (`ok` / `error` derived from the result) → result transforms.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::blocking::BlockingWork;
use crate::cap::cap_or_store;
use crate::catch::{panic_message, CatchUnwind};
use crate::content::{self, is_content_result, text_only, ToolContent};
use crate::disclosure::{BRIDGE_TOOLS, TOOL_CALL};
use crate::entry::HandlerFuture;
use crate::hooks::{
    guarded, CallInfo, CallStatus, HookSet, Next, PostCallEvent, PreCallDecision, NO_HOOKS,
};
use crate::registry::{AGENT_LOOP_TOOLS, DEFAULT_MAX_RESULT_CHARS, DEFAULT_TIMEOUT};
use crate::sanitize::sanitize_tool_error;
use crate::tool::{HandlerStart, ToolRef};
use crate::{error_json, is_error_result, Registry, ToolContext};

impl Registry {
    /// Calls the tool `name` with the raw JSON text the model sent.
    /// Malformed JSON is an error result, like every other failure. A
    /// result with media is answered as text with a note naming the media
    /// ([`ToolContent::to_text`]); [`Registry::dispatch_json_content`]
    /// answers the media too.
    pub async fn dispatch_json(&self, name: &str, raw_args: &str, ctx: &ToolContext) -> String {
        // `dispatch_json_any` written out: one future less on the direct
        // path, whose whole glue costs less than another layer of `async`.
        if let Some(call) = self.start_direct(name, raw_args, ctx) {
            return text_only(call.await);
        }
        let raw = raw_args.trim();
        text_only(Box::pin(self.dispatch_raw(name, raw, ctx)).await)
    }

    /// [`Registry::dispatch_json`] answering the whole result: text and
    /// media (images, audio; see [`crate::content`]).
    pub async fn dispatch_json_content(
        &self,
        name: &str,
        raw_args: &str,
        ctx: &ToolContext,
    ) -> ToolContent {
        ToolContent::from_result(self.dispatch_json_any(name, raw_args, ctx).await)
    }

    /// [`Registry::dispatch`] answering the whole result: text and media.
    pub async fn dispatch_content(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> ToolContent {
        ToolContent::from_result(self.dispatch_any(name, args, ctx).await)
    }

    /// Calls the tool `name`. Always returns a JSON string for the model;
    /// a result with media as text with a note naming the media
    /// ([`ToolContent::to_text`]; [`Registry::dispatch_content`] answers
    /// the media too).
    pub async fn dispatch(&self, name: &str, args: Value, ctx: &ToolContext) -> String {
        text_only(self.dispatch_any(name, args, ctx).await)
    }

    /// `dispatch_json`, a content result left as its envelope.
    pub(crate) async fn dispatch_json_any(
        &self,
        name: &str,
        raw_args: &str,
        ctx: &ToolContext,
    ) -> String {
        // The direct path needs no trimming: it takes text that starts
        // with `{`, and the decode allows trailing white space.
        if let Some(call) = self.start_direct(name, raw_args, ctx) {
            return call.await;
        }
        let raw = raw_args.trim();
        // Boxed: the full pipeline's state would otherwise make this
        // future ~1 KB, copied on every call, direct ones included.
        Box::pin(self.dispatch_raw(name, raw, ctx)).await
    }

    /// `dispatch_json` through the full pipeline: parse, then [`Registry::dispatch`].
    async fn dispatch_raw(&self, name: &str, raw: &str, ctx: &ToolContext) -> String {
        let args = if raw.is_empty() {
            Value::Object(Default::default())
        } else {
            match serde_json::from_str::<Value>(raw) {
                Ok(v) => v,
                Err(e) => {
                    if self.tool(name).is_none() && !AGENT_LOOP_TOOLS.contains(&name) {
                        return self.unknown_tool(name, ctx);
                    }
                    return error_json(format!("Invalid JSON in arguments for tool '{name}': {e}"));
                }
            }
        };
        self.dispatch_any(name, args, ctx).await
    }

    /// `dispatch`, a content result left as its envelope.
    async fn dispatch_any(&self, name: &str, args: Value, ctx: &ToolContext) -> String {
        let tool = self.tool(name);
        let agent_loop = AGENT_LOOP_TOOLS.contains(&name);
        if tool.is_none() && !agent_loop {
            if BRIDGE_TOOLS.contains(&name) {
                return self.dispatch_bridge(name, args, ctx).await;
            }
            return self.unknown_tool(name, ctx);
        }
        let args = match (args, &tool) {
            (args @ Value::Object(_), Some(tool)) => tool.coerce(self.plans_for(name), args),
            (args @ Value::Object(_), None) => args,
            _ => Value::Object(Default::default()),
        };
        if self.has_no_hooks() && !agent_loop {
            // The common case: no hook, no middleware (one atomic load).
            if let Some(tool) = &tool {
                return self.run_tool(tool, ctx, args, &NO_HOOKS).await.0;
            }
        }
        let hooks = self.dispatch_state().hooks();
        self.dispatch_hooked(name, tool, args, ctx, &hooks).await
    }

    /// The direct path (see `direct.rs`): a built-in `async fn` tool, no
    /// hook, middleware or run-time tool registered (one atomic load says
    /// so), and arguments that decode into the parameter types as they
    /// are. Then there is nothing to coerce and nothing to show a hook, so
    /// the call skips the `Value`. `None`: take the full pipeline.
    fn start_direct(&self, name: &str, raw: &str, ctx: &ToolContext) -> Option<DirectCall> {
        if !raw.starts_with('{') || AGENT_LOOP_TOOLS.contains(&name) {
            return None;
        }
        if !self.is_plain() {
            return None;
        }
        let entry = self.builtin(name)?;
        let direct = entry.direct?;
        // A parameter type's `Deserialize` may panic: then the full
        // pipeline meets the same panic inside the handler's guard and
        // answers it. (An async fn's body only runs when polled.)
        let fut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| direct(ctx, raw)))
            .ok()
            .flatten()?;
        let limits = self.limits(entry.name, entry.max_result_chars, None);
        Some(DirectCall {
            fut: CatchUnwind::new(fut),
            name: entry.name,
            cap: limits.cap,
            own_cap: limits.own_cap,
            ctx: ctx.clone(),
            deadline: Deadline::new(limits.timeout),
        })
    }

    /// The timeout and the result cap of one call.
    fn limits(&self, name: &str, cap: Option<usize>, timeout: Option<Duration>) -> Limits {
        if self.default_config() {
            return Limits {
                timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
                cap: cap.unwrap_or(DEFAULT_MAX_RESULT_CHARS),
                own_cap: cap.is_some(),
            };
        }
        let config = self.dispatch_state().config();
        let configured = if config.tool_timeouts.is_empty() {
            None
        } else {
            config.tool_timeouts.get(name).copied()
        };
        Limits {
            timeout: configured.or(timeout).unwrap_or(config.default_timeout),
            cap: cap.unwrap_or(config.default_max_result_chars),
            own_cap: cap.is_some(),
        }
    }

    /// `tool_search` / `tool_describe` answer from the session's catalog;
    /// `tool_call` is dispatched as the real tool (hooks see its name).
    async fn dispatch_bridge(&self, name: &str, args: Value, ctx: &ToolContext) -> String {
        let args = if args.is_object() {
            args
        } else {
            Value::Object(Default::default())
        };
        if name != TOOL_CALL {
            return self.bridge_answer(name, &args, ctx);
        }
        match self.bridge_target(&args, ctx) {
            Ok((real, arguments)) => Box::pin(self.dispatch_any(&real, arguments, ctx)).await,
            Err(error) => error,
        }
    }

    async fn dispatch_hooked(
        &self,
        name: &str,
        tool: Option<ToolRef>,
        original: Value,
        ctx: &ToolContext,
        hooks: &Arc<HookSet>,
    ) -> String {
        let info = CallInfo {
            tool: name,
            args: &original,
            ctx,
        };
        let mut args = original.clone();
        for m in &hooks.request {
            let before = args.clone();
            args = guarded("request middleware", name, || m.rewrite(&info, args)).unwrap_or(before);
        }

        if AGENT_LOOP_TOOLS.contains(&name) {
            let executor = self.dispatch_state().agent_loop_executor(name);
            let result = match executor {
                Some(exec) => {
                    match guarded("agent-loop executor", name, || exec(ctx.clone(), args)) {
                        Some(fut) => finish(CatchUnwind::new(fut).await),
                        None => error_json(format!("{name} failed in the agent loop's executor")),
                    }
                }
                None => error_json(format!("{name} must be handled by the agent loop")),
            };
            return result;
        }
        let Some(tool) = tool else {
            return self.unknown_tool(name, ctx);
        };

        for hook in &hooks.pre {
            let refusal = match guarded("pre-call hook", name, || hook.pre_call(&info)) {
                Some(PreCallDecision::Block(message)) => Some(message),
                Some(PreCallDecision::NeedsApproval(need)) => {
                    crate::approval::request(ctx, name, need).await.err()
                }
                _ => None,
            };
            if let Some(message) = refusal {
                let result = error_json(message);
                self.post_call(hooks, &info, &result, 0, CallStatus::Blocked);
                return result;
            }
        }

        let (mut result, duration_ms) = self.run_tool(&tool, ctx, args, hooks).await;
        let status = status_of(&result);
        self.post_call(hooks, &info, &result, duration_ms, status);
        for t in &hooks.transform {
            if let Some(Some(new)) =
                guarded("result transform", name, || t.transform(&info, &result))
            {
                result = new;
                break;
            }
        }
        result
    }

    fn post_call(
        &self,
        hooks: &HookSet,
        info: &CallInfo<'_>,
        result: &str,
        duration_ms: u64,
        status: CallStatus,
    ) {
        if hooks.post.is_empty() || info.ctx.hooks_suppressed() {
            return;
        }
        let event = PostCallEvent {
            tool: info.tool,
            args: info.args,
            result,
            ctx: info.ctx,
            task_id: info.ctx.task_id(),
            session_id: info.ctx.session_id(),
            tool_call_id: info.ctx.tool_call_id(),
            duration_ms,
            status,
        };
        for hook in &hooks.post {
            guarded("post-call hook", info.tool, || hook.post_call(&event));
        }
    }

    /// Runs the handler (through execution middleware) under the timeout,
    /// contains panics, applies the result cap. Returns the result and the
    /// handler's duration in milliseconds.
    async fn run_tool(
        &self,
        tool: &ToolRef,
        ctx: &ToolContext,
        args: Value,
        hooks: &HookSet,
    ) -> (String, u64) {
        let name = tool.name();
        let limits = self.limits(name, tool.max_result_chars(), tool.timeout());
        let timeout = limits.timeout;

        // Timing is for post-call hooks: without them, skip the clock reads.
        let started = (!hooks.post.is_empty()).then(Instant::now);
        let outcome = if hooks.execution.is_empty() {
            let handler = run_handler(tool.clone(), ctx.clone(), args, self.blocking_work());
            with_timeout(timeout, handler).await
        } else {
            let next: Next = {
                let (tool, ctx) = (tool.clone(), ctx.clone());
                let blocking = self.blocking_work().clone();
                Arc::new(move || {
                    let (tool, ctx, args) = (tool.clone(), ctx.clone(), args.clone());
                    let blocking = blocking.clone();
                    Box::pin(async move { finish(run_handler(tool, ctx, args, &blocking).await) })
                        as HandlerFuture
                })
            };
            let mut chain = next.clone();
            for m in hooks.execution.iter().rev() {
                let inner = chain.clone();
                let m = m.clone();
                let ctx = ctx.clone();
                let name = name.to_string();
                chain = Arc::new(move || {
                    let info = CallInfo {
                        tool: &name,
                        args: &Value::Null,
                        ctx: &ctx,
                    };
                    match guarded("execution middleware", &name, || {
                        m.wrap(&info, inner.clone())
                    }) {
                        Some(fut) => fut,
                        None => inner(),
                    }
                });
            }
            with_timeout(timeout, CatchUnwind::new(chain())).await
        };
        let duration_ms = started.map_or(0, |t| {
            u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
        });
        (settle(outcome, name, &limits, ctx), duration_ms)
    }

    /// The answer to a call of a tool that is not there:
    /// `{"error": "Unknown tool: NAME"}`, with "did you mean" suggestions
    /// drawn from `ctx.enabled_tools()` (else every tool). For front ends
    /// that expose a subset of the registry (the MCP server).
    pub fn unknown_tool(&self, name: &str, ctx: &ToolContext) -> String {
        let scope: Vec<String> = match ctx.enabled_tools() {
            Some(tools) => tools.to_vec(),
            None => self.tool_names(),
        };
        let suggestions = nearest(name, &scope, 3);
        if suggestions.is_empty() {
            error_json(format!("Unknown tool: {name}"))
        } else {
            error_json(format!(
                "Unknown tool: {name}. Did you mean: {}?",
                suggestions.join(", ")
            ))
        }
    }
}

struct Limits {
    timeout: Duration,
    cap: usize,
    /// Whether `cap` is the tool's own (the profile may lower it, not raise it).
    own_cap: bool,
}

impl Limits {
    /// The cap for a result of `len` bytes: the profile's
    /// `tool_output.max_result_chars` when it sets one. A result no longer
    /// than the smallest cap the profile may set needs no look.
    #[inline]
    fn cap_for(&self, len: usize, ctx: &ToolContext) -> usize {
        if len <= crate::config::MIN_RESULT_CHARS {
            return self.cap;
        }
        match ctx.profile().config().tool_output.max_result_chars.value {
            Some(chars) if self.own_cap => chars.min(self.cap),
            Some(chars) => chars,
            None => self.cap,
        }
    }
}

/// The answer of a finished (or timed-out) handler. Inlined: a result
/// within its cap, the common case, is then passed on without a call.
#[inline]
fn settle(
    outcome: Result<Result<String, String>, ()>,
    name: &str,
    limits: &Limits,
    ctx: &ToolContext,
) -> String {
    match outcome {
        // The cap is for what the tool produced, not the runtime's own
        // errors; what it cuts is kept under the profile's home.
        Ok(Ok(result)) => {
            if is_content_result(&result) {
                return content::settle(result, |text| {
                    let cap = limits.cap_for(text.len(), ctx);
                    cap_or_store(text, cap, name, ctx)
                });
            }
            let cap = limits.cap_for(result.len(), ctx);
            cap_or_store(result, cap, name, ctx)
        }
        Ok(Err(panic)) => panic_error(&panic),
        Err(()) => timeout_error(name, limits.timeout),
    }
}

#[cold]
fn timeout_error(name: &str, timeout: Duration) -> String {
    error_json(format!(
        "Tool '{name}' timed out after {} and was cancelled",
        human(timeout)
    ))
}

/// Starts a handler and awaits it, containing panics (sync or async). A
/// blocking handler runs through `blocking`, which accounts for it when
/// its call is over before it is (see `blocking.rs`).
async fn run_handler(
    tool: ToolRef,
    ctx: ToolContext,
    args: Value,
    blocking: &BlockingWork,
) -> Result<String, String> {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    match catch_unwind(AssertUnwindSafe(|| tool.start(ctx, args))) {
        Err(payload) => Err(panic_message(payload.as_ref())),
        Ok(HandlerStart::Future(fut)) => CatchUnwind::new(fut).await,
        Ok(HandlerStart::Blocking(handler, ctx, args)) => {
            let name = tool.name();
            // The call's own signal, cancelled with the context's or when
            // the call is abandoned (`cancel.rs`).
            let signal = ctx.cancellation().child();
            let ctx = ctx.with_cancellation(signal.clone());
            match catch_unwind(AssertUnwindSafe(|| {
                blocking.run_with(name, signal, move || handler(ctx, args))
            })) {
                Err(payload) => Err(panic_message(payload.as_ref())),
                Ok(call) => CatchUnwind::new(call).await,
            }
        }
    }
}

/// `Err(())` when the future did not finish in time; see [`Deadline`].
async fn with_timeout<F, T>(limit: Duration, fut: F) -> Result<T, ()>
where
    F: Future<Output = T>,
{
    let mut fut = std::pin::pin!(fut);
    let mut deadline = Deadline::new(limit);
    std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        Poll::Ready(v) => Poll::Ready(Ok(v)),
        Poll::Pending if deadline.expired(cx) => Poll::Ready(Err(())),
        Poll::Pending => Poll::Pending,
    })
    .await
}

/// The time limit of one call. The timer is only armed once a poll of the
/// call did not finish it, so quick tools pay nothing for it. Outside a
/// tokio runtime, or in one built without timers, it never expires.
struct Deadline {
    limit: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    armed: bool,
}

impl Deadline {
    fn new(limit: Duration) -> Self {
        Deadline {
            limit,
            sleep: None,
            armed: false,
        }
    }

    /// Whether the limit has passed; otherwise `cx` is woken when it does.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.armed {
            self.armed = true;
            if tokio::runtime::Handle::try_current().is_ok() {
                // `sleep` panics when the runtime has no timer: then no timeout.
                let limit = self.limit;
                self.sleep = std::panic::catch_unwind(|| Box::pin(tokio::time::sleep(limit))).ok();
            }
        }
        self.sleep
            .as_mut()
            .is_some_and(|s| s.as_mut().poll(cx).is_ready())
    }
}

/// A directly started call (see [`Registry::start_direct`]) as one
/// future: the same panic containment, timeout and result cap as
/// [`Registry::run_tool`], without the layers of `async` wrappers that
/// cost a direct call more than the rest of its glue.
struct DirectCall {
    fut: CatchUnwind<HandlerFuture>,
    name: &'static str,
    /// The result cap (the timeout is the deadline's).
    cap: usize,
    own_cap: bool,
    /// For the profile's result cap, and whose home keeps a result over it.
    ctx: ToolContext,
    deadline: Deadline,
}

impl Future for DirectCall {
    type Output = String;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        let this = &mut *self;
        let outcome = match Pin::new(&mut this.fut).poll(cx) {
            Poll::Ready(result) => Ok(result),
            Poll::Pending if this.deadline.expired(cx) => Err(()),
            Poll::Pending => return Poll::Pending,
        };
        let limits = Limits {
            timeout: this.deadline.limit,
            cap: this.cap,
            own_cap: this.own_cap,
        };
        Poll::Ready(settle(outcome, this.name, &limits, &this.ctx))
    }
}

fn panic_error(panic: &str) -> String {
    error_json(sanitize_tool_error(&format!(
        "Tool execution failed: panic: {panic}"
    )))
}

/// A contained panic becomes the sanitized error result.
fn finish(outcome: Result<String, String>) -> String {
    match outcome {
        Ok(result) => result,
        Err(panic) => panic_error(&panic),
    }
}

/// `error` when the result is a JSON object with an `error` key.
fn status_of(result: &str) -> CallStatus {
    if is_error_result(result) {
        CallStatus::Error
    } else {
        CallStatus::Ok
    }
}

/// Up to `n` names from `scope` close to `name`, closest first
/// ([`hermes_tool_facts::suggestions`], the one policy).
fn nearest(name: &str, scope: &[String], n: usize) -> Vec<String> {
    hermes_tool_facts::suggestions(name, scope.iter().map(String::as_str), n)
        .into_iter()
        .map(str::to_string)
        .collect()
}

fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
