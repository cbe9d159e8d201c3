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

/// Sessions with a queue, at most: a session that ended without draining
/// leaves its queue behind, so past this the queue pushed to least
/// recently is dropped.
pub const MAX_QUEUES: usize = 256;

/// Per session: when it was last pushed to (a counter), and its queue.
type Queues = HashMap<String, (u64, VecDeque<Completion>)>;

fn queues() -> &'static Mutex<Queues> {
    static QUEUES: OnceLock<Mutex<Queues>> = OnceLock::new();
    QUEUES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whose queue a call's completions go to: its session, else its task.
pub(crate) fn queue_key(ctx: &ToolContext) -> &str {
    ctx.session_id().or(ctx.task_id()).unwrap_or_default()
}

pub(crate) fn push_completion(key: &str, completion: Completion) {
    static PUSHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let stamp = PUSHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut queues = queues().lock().unwrap_or_else(|e| e.into_inner());
    if !queues.contains_key(key) && queues.len() >= MAX_QUEUES {
        let stalest = queues
            .iter()
            .min_by_key(|(_, (pushed, _))| *pushed)
            .map(|(k, _)| k.clone());
        if let Some(stalest) = stalest {
            queues.remove(&stalest);
        }
    }
    let (pushed, queue) = queues.entry(key.to_string()).or_default();
    *pushed = stamp;
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
        .map(|(_, queue)| Vec::from(queue))
        .unwrap_or_default()
}

/// How many finished background delegations of `ctx`'s session wait.
pub fn queued(ctx: &ToolContext) -> usize {
    let queues = queues().lock().unwrap_or_else(|e| e.into_inner());
    queues
        .get(queue_key(ctx))
        .map_or(0, |(_, queue)| queue.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_that_never_drain_do_not_grow_the_table() {
        let done = |n: usize| Completion {
            delegation_id: format!("d{n}"),
            result: json!({}),
        };
        let ctx_of = |key: &str| {
            ToolContext::new(hermes_runtime::Profile::new("/nonexistent"), "/")
                .with_session_id(key.to_string())
        };
        push_completion("bound-first", done(0));
        for n in 0..MAX_QUEUES {
            push_completion(&format!("bound-{n}"), done(n));
        }
        assert!(queues().lock().unwrap_or_else(|e| e.into_inner()).len() <= MAX_QUEUES);
        assert_eq!(queued(&ctx_of("bound-first")), 0);
        assert_eq!(
            completions(&ctx_of(&format!("bound-{}", MAX_QUEUES - 1))).len(),
            1
        );
    }
}
