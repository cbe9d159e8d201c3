//! Background delegations that finished, queued per parent session until
//! the parent's loop takes them (`run` adds each as a message at
//! the start of a turn) or the embedding agent drains them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};

use hermes_runtime::ToolContext;
use serde_json::{json, Value};

/// A background delegation that finished: what a call without
/// `background` would have answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The id the call answered at once.
    pub delegation_id: String,
    /// `{"results": [...], "total_duration_seconds": ...}`.
    pub result: Value,
}

impl Completion {
    /// The message that brings it into the parent's conversation.
    pub fn message(&self) -> Value {
        json!({"role": "user", "content": format!(
            "[Background delegation {} finished] {}", self.delegation_id, self.result)})
    }
}

/// Completions kept per parent session until drained (the oldest dropped past it).
pub const MAX_QUEUED_COMPLETIONS: usize = 64;

type Queues = HashMap<String, VecDeque<Completion>>;

fn queues() -> &'static Mutex<Queues> {
    static QUEUES: OnceLock<Mutex<Queues>> = OnceLock::new();
    QUEUES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whose queue a call's completions go to: its session, else its task.
pub(crate) fn queue_key(ctx: &ToolContext) -> &str {
    ctx.session_id().or(ctx.task_id()).unwrap_or_default()
}

pub(crate) fn push_completion(key: &str, completion: Completion) {
    let mut queues = queues().lock().unwrap_or_else(|e| e.into_inner());
    let queue = queues.entry(key.to_string()).or_default();
    if queue.len() >= MAX_QUEUED_COMPLETIONS {
        queue.pop_front();
    }
    queue.push_back(completion);
}

/// The background delegations of `ctx`'s session that finished since the
/// last drain, oldest first. [`crate::run`] drains them at the start of
/// every turn and adds each as a message.
pub fn completions(ctx: &ToolContext) -> Vec<Completion> {
    let mut queues = queues().lock().unwrap_or_else(|e| e.into_inner());
    queues
        .remove(queue_key(ctx))
        .map(Vec::from)
        .unwrap_or_default()
}

/// How many finished background delegations of `ctx`'s session wait.
pub fn queued(ctx: &ToolContext) -> usize {
    let queues = queues().lock().unwrap_or_else(|e| e.into_inner());
    queues.get(queue_key(ctx)).map_or(0, VecDeque::len)
}
