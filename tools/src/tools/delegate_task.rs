//! The `delegate_task` tool: hand work to child agents, each in a session
//! of its own. An agent-loop tool: this crate declares what the model sees
//! and checks what it asked ([`plan_tasks`]); the children are run by the
//! executor an agent installs (`hermes_model::delegation::install`), which
//! owns a model client. Without one the tool is unavailable (its check
//! fails, so definitions leave it out) and a call that reaches it anyway
//! is refused.

use std::sync::atomic::{AtomicBool, Ordering};

use hermes_macros::hermes_tool;
use hermes_runtime::{Profile, Registry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Tools a `leaf` child never gets: no delegating further, no asking the
/// user, no writing the shared memory, no side effects in the parent's
/// name. An orchestrator child keeps `delegate_task` (within
/// `delegation.max_spawn_depth`) and loses the rest.
pub const LEAF_BLOCKED_TOOLS: &[&str] = &[
    "delegate_task",
    "clarify",
    "memory",
    "send_message",
    "execute_code",
    "cronjob",
];

/// What a child may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Works on its task with the parent's tools, and never delegates
    /// further or asks the user.
    #[default]
    Leaf,
    /// May delegate further, within `delegation.max_spawn_depth`.
    Orchestrator,
}

/// One task of a batch.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct TaskSpec {
    /// What this child should accomplish, self-contained.
    pub goal: String,
    /// What this child needs to know: paths, errors, constraints.
    #[serde(default)]
    pub context: Option<String>,
    /// This task's role (else the call's `role`, else `leaf`).
    #[serde(default)]
    #[schemars(with = "Role")]
    pub role: Option<Role>,
    /// A JSON Schema, written as JSON text, that the child's final answer
    /// (a JSON document) must match.
    #[serde(default)]
    #[schemars(with = "String")]
    pub output_schema: Option<String>,
}

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Marks the executor installed (process-wide) and drops `registry`'s
/// cached answers so definitions include `delegate_task` from now on.
/// Called by the installing agent's side, not by tools.
pub fn mark_installed(registry: &Registry) {
    INSTALLED.store(true, Ordering::Release);
    registry.availability().invalidate();
    registry.invalidate_definitions();
}

/// The availability check: an executor runs children.
pub fn delegation_installed(_profile: &Profile) -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// The tasks a call asks for, checked: a batch (`tasks`) or one task
/// (`goal`, with `context` and `output_schema`), each with a goal, at most
/// `max_children` of them; each task's role is its own, else the call's.
/// `Err` says what to change.
pub fn plan_tasks(
    goal: Option<String>,
    context: Option<String>,
    output_schema: Option<String>,
    tasks: Option<Vec<TaskSpec>>,
    role: Option<Role>,
    max_children: usize,
) -> Result<Vec<TaskSpec>, String> {
    let list = match (tasks, goal) {
        (Some(tasks), _) if !tasks.is_empty() => tasks,
        (_, Some(goal)) if !goal.trim().is_empty() => vec![TaskSpec {
            goal,
            context,
            role: None,
            output_schema,
        }],
        (Some(_), _) => return Err("`tasks` is empty: give at least one task.".into()),
        _ => return Err("Give either `goal` (one task) or `tasks` (a batch).".into()),
    };
    if list.len() > max_children {
        return Err(format!(
            "Too many tasks: {} given, and delegation.max_concurrent_children is {max_children}. \
             Give fewer, split them over several delegate_task calls, or raise \
             delegation.max_concurrent_children in config.yaml.",
            list.len()
        ));
    }
    if let Some(i) = list.iter().position(|t| t.goal.trim().is_empty()) {
        return Err(format!("Task {i} has no `goal`."));
    }
    Ok(list
        .into_iter()
        .map(|t| TaskSpec {
            role: t.role.or(role),
            ..t
        })
        .collect())
}

/// Spawns one or more child agents, each in its own session with the
/// parent's tools (narrowed by its role), and answers each one's summary.
/// Give `goal` for one task or `tasks` for several run together; a child
/// knows nothing of this conversation, so say everything it needs.
#[hermes_tool(
    toolset = "delegation",
    emoji = "🔀",
    check = delegation_installed,
    open_world,
    concurrency = "exclusive"
)]
pub fn delegate_task(
    /// What the child should accomplish. Be specific and self-contained:
    /// the child knows nothing about this conversation.
    goal: Option<String>,
    /// What the child needs to know: file paths, error messages, project
    /// layout, constraints.
    context: Option<String>,
    /// Several tasks, run together (at most delegation.max_concurrent_children);
    /// each result comes back in this order.
    tasks: Option<Vec<TaskSpec>>,
    /// `leaf` (default): the child cannot delegate further; `orchestrator`:
    /// it may, within delegation.max_spawn_depth.
    role: Option<Role>,
    /// For `goal`: a JSON Schema, written as JSON text, that the child's
    /// final answer (a JSON document) must match; a child that misses it is
    /// asked once more, then its text is kept with `schema_valid: false`
    /// and what did not match.
    output_schema: Option<String>,
    /// true: answer at once with a delegation id and keep working; the
    /// results arrive as a message when every child has finished.
    /// Default: wait for them.
    background: Option<bool>,
) -> Result<String, String> {
    let _ = (goal, context, tasks, role, output_schema, background);
    Err(
        "delegate_task runs only in an agent that installs a delegation executor \
         (hermes_model::delegation::install)."
            .into(),
    )
}
