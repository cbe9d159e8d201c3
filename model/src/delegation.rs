//! `delegate_task`'s executor: each task a child agent with a session of
//! its own ([`Session::child_of`]: the parent's interrupt reaches it), the
//! parent's tools narrowed by its role, this crate's loop against the
//! parent's endpoint, torn down when it ends.
//!
//! Rules, each from the profile's `delegation:` section (read per call):
//! at most `max_concurrent_children` tasks a call, all run together;
//! agents `max_spawn_depth` levels below the top one cannot delegate (a
//! call from one is refused, whatever its tools); a `leaf` child loses
//! [`LEAF_BLOCKED_TOOLS`], an `orchestrator` child (only with
//! `orchestrator_enabled`, and only when it may still spawn) keeps
//! `delegate_task`; a child's tools are never more than its parent's; a
//! child makes at most `max_iterations` requests and runs at most
//! `child_timeout_seconds` (0: no limit).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_runtime::config::Delegation as Limits;
use hermes_runtime::{error_json, AgentLoopExecutor, Cancellation, Registry, ToolContext};
use hermes_tools::tools::delegate_task::{
    mark_installed, plan_tasks, Role, TaskSpec, LEAF_BLOCKED_TOOLS,
};
use hermes_tools::Session;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::completions::push_completion;
pub use crate::completions::{completions, queued, Completion, MAX_QUEUED_COMPLETIONS};
use crate::{run, ModelClient, Outcome};

/// The tool's name.
const TOOL: &str = "delegate_task";

/// A call's arguments, as the tool declares them.
#[derive(Deserialize)]
struct Args {
    goal: Option<String>,
    context: Option<String>,
    tasks: Option<Vec<TaskSpec>>,
    role: Option<Role>,
    output_schema: Option<String>,
    background: Option<bool>,
}

/// Cancels its signal when dropped.
struct CancelOnDrop(Cancellation);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct Delegator {
    registry: &'static Registry,
    client: ModelClient,
    /// The toolsets the top-level agent offers: every child's tools come
    /// from these, narrowed.
    toolsets: Vec<String>,
    /// The depth of each live child session (the top level: absent, 0).
    depths: Mutex<HashMap<String, usize>>,
}

/// Installs the executor on `registry` (a registry that lives as long as
/// the process, as an agent's does): children talk to `client`'s endpoint
/// and start from the tools of `toolsets`. `delegate_task` becomes
/// available from now on.
pub fn install(registry: &'static Registry, client: ModelClient, toolsets: Vec<String>) {
    let delegator = Arc::new(Delegator {
        registry,
        client,
        toolsets,
        depths: Mutex::new(HashMap::new()),
    });
    let executor: AgentLoopExecutor = Arc::new(move |ctx, args| {
        let d = Arc::clone(&delegator);
        Box::pin(async move { d.delegate(ctx, args).await })
    });
    registry.set_agent_loop_executor(TOOL, executor);
    mark_installed(registry);
}

impl Delegator {
    fn depth_of(&self, ctx: &ToolContext) -> usize {
        let depths = self.depths.lock().unwrap_or_else(|e| e.into_inner());
        ctx.session_id()
            .and_then(|id| depths.get(id).copied())
            .unwrap_or(0)
    }

    async fn delegate(self: Arc<Self>, ctx: ToolContext, args: Value) -> String {
        let limits = ctx.profile().config().delegation.clone();
        let args: Args = match serde_json::from_value(args) {
            Ok(a) => a,
            Err(e) => return error_json(format!("delegate_task: {e}")),
        };
        let depth = self.depth_of(&ctx);
        if depth >= limits.max_spawn_depth.value {
            return error_json(format!(
                "Delegation depth limit reached: this agent is {depth} level(s) below the top \
                 one and delegation.max_spawn_depth is {}. Do the work here, or raise \
                 delegation.max_spawn_depth in config.yaml.",
                limits.max_spawn_depth.value
            ));
        }
        let tasks = match plan_tasks(
            args.goal,
            args.context,
            args.output_schema,
            args.tasks,
            args.role,
            limits.max_concurrent_children.value,
        ) {
            Ok(t) => t,
            Err(e) => return error_json(e),
        };
        // A schema that cannot be used is the caller's to fix, before any
        // child starts.
        for (i, task) in tasks.iter().enumerate() {
            if let Some(text) = &task.output_schema {
                if let Err(e) = compile(text) {
                    return error_json(format!("Task {i}'s output_schema cannot be used: {e}"));
                }
            }
        }
        if args.background == Some(true) {
            let id = format!("delegation-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
            let key = crate::completions::queue_key(&ctx).to_string();
            let count = tasks.len();
            let (d, delegation_id) = (Arc::clone(&self), id.clone());
            // Not stopped when the call ends: the parent's interrupt (its
            // session's cancellation) still reaches every child.
            tokio::spawn(async move {
                let result = d.run_children(tasks, depth, &ctx, &limits).await;
                push_completion(
                    &key,
                    Completion {
                        delegation_id,
                        result,
                    },
                );
            });
            return json!({
                "status": "dispatched",
                "delegation_id": id,
                "tasks": count,
                "note": "The children run in the background; their results arrive as a message \
                         when every one of them has finished.",
            })
            .to_string();
        }
        // The children end with the call: a call that times out or is
        // dropped stops them.
        let stop = ctx.cancellation().child();
        let _stop_on_drop = CancelOnDrop(stop.clone());
        let ctx = ctx.with_cancellation(stop);
        self.run_children(tasks, depth, &ctx, &limits)
            .await
            .to_string()
    }

    /// Runs `tasks` as children of `ctx`'s agent (at `depth`), together,
    /// and answers their results in task order.
    async fn run_children(
        self: &Arc<Self>,
        tasks: Vec<TaskSpec>,
        depth: usize,
        ctx: &ToolContext,
        limits: &Limits,
    ) -> Value {
        let started = Instant::now();
        let children: Vec<_> = tasks
            .into_iter()
            .enumerate()
            .map(|(i, task)| {
                let d = Arc::clone(self);
                let (ctx, limits) = (ctx.clone(), limits.clone());
                tokio::spawn(async move { d.child(i, task, depth + 1, &ctx, &limits).await })
            })
            .collect();
        let mut results = Vec::with_capacity(children.len());
        for (i, child) in children.into_iter().enumerate() {
            results.push(child.await.unwrap_or_else(|e| {
                json!({"task_index": i, "status": "error", "summary": null,
                       "error": format!("the child's task failed: {e}")})
            }));
        }
        json!({
            "results": results,
            "total_duration_seconds": round2(started.elapsed()),
        })
    }

    /// The tools a child of `parent` gets.
    fn tools_of(&self, parent: &ToolContext, role: Role) -> Vec<Value> {
        let enabled: Vec<&str> = self.toolsets.iter().map(String::as_str).collect();
        let definitions = self
            .registry
            .get_tool_definitions(Some(&enabled), &[], parent.profile())
            .to_vec();
        definitions
            .into_iter()
            .filter(|t| {
                let name = t
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let blocked = LEAF_BLOCKED_TOOLS.contains(&name)
                    && !(role == Role::Orchestrator && name == TOOL);
                // Never more than the parent has.
                let parents = parent
                    .enabled_tools()
                    .is_none_or(|tools| tools.iter().any(|t| t == name));
                !blocked && parents
            })
            .collect()
    }

    async fn child(
        &self,
        index: usize,
        task: TaskSpec,
        depth: usize,
        parent: &ToolContext,
        limits: &Limits,
    ) -> Value {
        let started = Instant::now();
        // An orchestrator only where it may still spawn; else a leaf.
        let role = match task.role.unwrap_or_default() {
            Role::Orchestrator
                if limits.orchestrator_enabled.value && depth < limits.max_spawn_depth.value =>
            {
                Role::Orchestrator
            }
            _ => Role::Leaf,
        };
        let definitions = self.tools_of(parent, role);
        let names: Vec<String> = definitions
            .iter()
            .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        let session = Session::child_of(&parent.clone().with_enabled_tools(names.clone()));
        let ctx = session.context();
        self.depths
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session.id().to_string(), depth);
        let (tools, _) = self.client.tools_for(&definitions);
        let mut messages = vec![
            json!({"role": "system", "content": system_prompt(&task, role, depth, limits)}),
            json!({"role": "user", "content": task.goal}),
        ];
        let mut trace = Vec::new();
        let schema = task.output_schema.as_deref().and_then(|t| compile(t).ok());
        // With an output_schema: an answer that misses it is asked for once more.
        let conversation = async {
            let outcome = run(
                &self.client,
                self.registry,
                &ctx,
                &tools,
                &mut messages,
                limits.max_iterations.value,
                |tool, result| trace.push(trace_entry(tool, result)),
            )
            .await;
            let (Some(validator), Ok(Outcome::Answer(text))) = (&schema, &outcome) else {
                return (outcome, None);
            };
            let errors = mismatches(validator, text);
            if errors.is_empty() {
                return (outcome, Some(errors));
            }
            messages.push(json!({"role": "user", "content": format!(
                "Your answer must be only a JSON document matching the output schema you were \
                 given. It did not: {}. Answer again with the JSON document alone.",
                errors.join("; "))}));
            let again = run(
                &self.client,
                self.registry,
                &ctx,
                &tools,
                &mut messages,
                1,
                |tool, result| trace.push(trace_entry(tool, result)),
            )
            .await;
            match again {
                Ok(Outcome::Answer(text)) => {
                    let errors = mismatches(validator, &text);
                    (Ok(Outcome::Answer(text)), Some(errors))
                }
                // No second answer: the first one stands, with its misses.
                _ => (outcome, Some(errors)),
            }
        };
        let (outcome, schema_errors) = match limits.child_timeout_seconds.value {
            0 => {
                let (o, e) = conversation.await;
                (Some(o), e)
            }
            secs => match tokio::time::timeout(Duration::from_secs(secs), conversation).await {
                Ok((o, e)) => (Some(o), e),
                Err(_) => (None, None),
            },
        };
        // Whatever ran for the child ends with it.
        ctx.cancellation().cancel();
        let session_id = session.id().to_string();
        let ended = tokio::task::spawn_blocking(move || session.end())
            .await
            .unwrap_or_default();
        self.depths
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&session_id);
        let api_calls = messages.iter().filter(|m| m["role"] == "assistant").count();
        let (status, exit_reason, summary, error) = match outcome {
            Some(Ok(Outcome::Answer(text))) => ("completed", "completed", Some(text), None),
            Some(Ok(Outcome::TurnLimit)) => (
                "incomplete",
                "max_iterations",
                None,
                Some(format!(
                    "the child made delegation.max_iterations ({}) requests without finishing",
                    limits.max_iterations.value
                )),
            ),
            Some(Ok(Outcome::Interrupted)) => ("interrupted", "interrupted", None, None),
            Some(Err(e)) => ("error", "error", None, Some(e.to_string())),
            None => (
                "timeout",
                "timeout",
                None,
                Some(format!(
                    "the child ran past delegation.child_timeout_seconds ({} s) and was stopped",
                    limits.child_timeout_seconds.value
                )),
            ),
        };
        let mut entry = json!({
            "task_index": index,
            "status": status,
            "exit_reason": exit_reason,
            "summary": summary,
            "role": role,
            "api_calls": api_calls,
            "duration_seconds": round2(started.elapsed()),
            "tool_trace": trace,
        });
        if let Some(error) = error {
            entry["error"] = Value::String(error);
        }
        // What the child left: processes killed with it (orphaned) and
        // ones that ended without the child ever reading their output.
        let listed = |keep: &dyn Fn(&hermes_tools::Ended) -> bool| -> Vec<Value> {
            ended
                .iter()
                .filter(|e| keep(e))
                .map(
                    |e| json!({"session_id": e.id, "command": e.command, "exit_code": e.exit_code}),
                )
                .collect()
        };
        let orphaned = listed(&|e| e.was_running);
        let unread = listed(&|e| !e.was_running && !e.was_read);
        if !orphaned.is_empty() {
            entry["orphaned_processes"] = Value::Array(orphaned);
        }
        if !unread.is_empty() {
            entry["unread_processes"] = Value::Array(unread);
        }
        if let Some(errors) = schema_errors {
            entry["schema_valid"] = Value::Bool(errors.is_empty());
            if errors.is_empty() {
                if let Some(text) = entry["summary"].as_str() {
                    entry["output"] = parse_answer(text).unwrap_or(Value::Null);
                }
            } else {
                entry["schema_errors"] = json!(errors);
            }
        }
        entry
    }
}

fn round2(d: Duration) -> f64 {
    (d.as_secs_f64() * 100.0).round() / 100.0
}

/// What a child is told before its task.
fn system_prompt(task: &TaskSpec, role: Role, depth: usize, limits: &Limits) -> String {
    let mut prompt = String::from(
        "You are a subagent working on one delegated task. You know nothing of the \
         conversation that delegated it beyond what follows. Use your tools to do the \
         task, then answer with a concise summary of what you did and found: that \
         summary is all your parent sees.\n",
    );
    if let Some(context) = task.context.as_deref().filter(|c| !c.trim().is_empty()) {
        prompt.push_str("\nContext from your parent:\n");
        prompt.push_str(context);
        prompt.push('\n');
    }
    if role == Role::Orchestrator {
        prompt.push_str(&format!(
            "\nYou may hand parts of the task to subagents of your own with delegate_task \
             (you are {depth} level(s) below the top agent; delegation stops at {}).\n",
            limits.max_spawn_depth.value
        ));
    }
    prompt
}

/// One line of a child's `tool_trace`.
fn trace_entry(tool: &str, result: &str) -> Value {
    let ok = !result.trim_start().starts_with("{\"error\"");
    json!({"tool": tool, "status": if ok { "ok" } else { "error" }})
}

/// An `output_schema` (JSON text) compiled.
fn compile(text: &str) -> Result<jsonschema::Validator, String> {
    let schema: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
    jsonschema::validator_for(&schema).map_err(|e| e.to_string())
}

/// A child's answer as JSON: the text itself, or the one fenced block
/// models like to wrap it in.
fn parse_answer(text: &str) -> Option<Value> {
    let t = text.trim();
    let inner = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(t);
    serde_json::from_str(inner.trim()).ok()
}

/// The most mismatches reported.
const MAX_SCHEMA_ERRORS: usize = 5;

/// What in `text` does not match `validator` (empty: it matches).
fn mismatches(validator: &jsonschema::Validator, text: &str) -> Vec<String> {
    let Some(value) = parse_answer(text) else {
        return vec!["the answer is not a JSON document".into()];
    };
    validator
        .iter_errors(&value)
        .take(MAX_SCHEMA_ERRORS)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() { "/" } else { &path };
            format!("at {at}: {e}")
        })
        .collect()
}
