//! The `todo` tool: the session's task list. An agent-loop tool: dispatch
//! answers it only through the executor `install_agent_loop_executors`
//! registers, which runs this very function.
//!
//! Lists live in memory, one per session (the call's session id, else its
//! task id, else one shared default), at most [`MAX_SESSIONS`] of them (the
//! least recently used is forgotten first). Semantics follow the reference:
//! writing replaces the list unless `merge`; merging updates items by id
//! (only the fields given) and appends new ones; duplicate ids keep the last
//! occurrence; an unknown status becomes `pending`; content is capped at
//! [`MAX_CONTENT_CHARS`] and a list at [`MAX_ITEMS`].

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// Characters of one item's content kept.
pub const MAX_CONTENT_CHARS: usize = 4000;
/// Items kept in one list (the first ones: order is priority).
pub const MAX_ITEMS: usize = 256;
/// Session lists kept in memory.
pub const MAX_SESSIONS: usize = 1024;
const CUT_MARKER: &str = "… [truncated]";
const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];

// Decoding is lenient as the reference is (a missing field is empty, a
// numeric id is taken as text, an unknown status becomes pending); the
// schema still asks for all three fields.
/// A task item.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(transform = crate::schema_util::require_all_fields)]
pub struct TodoInput {
    /// Unique item identifier.
    #[serde(default, deserialize_with = "string_or_number")]
    #[schemars(with = "String")]
    pub id: String,
    /// Task description.
    #[serde(default)]
    pub content: String,
    /// Current status.
    #[serde(default)]
    #[schemars(extend("enum" = ["pending", "in_progress", "completed", "cancelled"]))]
    pub status: String,
}

/// One item of a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TodoItem {
    pub id: String,
    pub content: String,
    pub status: String,
}

/// What `todo` answers: the whole list and its counts.
#[derive(Debug, Serialize)]
pub struct TodoOutput {
    pub todos: Vec<TodoItem>,
    pub summary: Summary,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    pub total: usize,
    pub pending: usize,
    pub in_progress: usize,
    pub completed: usize,
    pub cancelled: usize,
}

/// Manage your task list for the current session; call it with no arguments
/// to read the list.
///
/// Use it for work with three or more steps, or when the user asks for
/// several things. Writing: `todos` with merge=false (default) replaces the
/// whole list with a fresh plan; merge=true updates items by id and adds new
/// ones. Each item: {id, content, status: pending|in_progress|completed|cancelled}.
/// List order is priority; keep one item in_progress at a time, mark items
/// completed as soon as they are done, and cancel a failed item and add a
/// revised one. Every call returns the full current list.
#[hermes_tool(
    toolset = "todo",
    emoji = "📋",
    destructive,
    idempotent,
    open_world = false,
    concurrency = "exclusive"
)]
pub fn todo(
    ctx: &ToolContext,
    /// Task items to write; omit to read the current list.
    todos: Option<Vec<TodoInput>>,
    /// true: update existing items by id and add new ones; false (default):
    /// replace the entire list.
    merge: Option<bool>,
) -> TodoOutput {
    let key = session_key(ctx);
    let mut sessions = LISTS.lock().unwrap_or_else(|e| e.into_inner());
    let list = sessions.touch(&key);
    if let Some(todos) = todos {
        write(list, todos, merge.unwrap_or(false));
    }
    output(list.clone())
}

/// The list a call belongs to.
fn session_key(ctx: &ToolContext) -> String {
    ctx.session_id()
        .or(ctx.task_id())
        .unwrap_or("default")
        .to_string()
}

fn write(list: &mut Vec<TodoItem>, todos: Vec<TodoInput>, merge: bool) {
    let todos = dedupe_by_id(todos);
    if merge {
        for t in todos {
            let id = t.id.trim();
            if id.is_empty() {
                continue;
            }
            match list.iter_mut().find(|i| i.id == id) {
                Some(item) => {
                    let content = t.content.trim();
                    if !content.is_empty() {
                        item.content = cap(content);
                    }
                    if let Some(status) = status(&t.status) {
                        item.status = status.to_string();
                    }
                }
                None => list.push(validate(t)),
            }
        }
    } else {
        *list = todos.into_iter().map(validate).collect();
    }
    list.truncate(MAX_ITEMS);
}

/// Collapses duplicate ids: the last occurrence wins, in its position.
fn dedupe_by_id(todos: Vec<TodoInput>) -> Vec<TodoInput> {
    let mut last: HashMap<String, usize> = HashMap::new();
    for (i, t) in todos.iter().enumerate() {
        last.insert(normal_id(&t.id), i);
    }
    todos
        .into_iter()
        .enumerate()
        .filter(|(i, t)| last.get(&normal_id(&t.id)) == Some(i))
        .map(|(_, t)| t)
        .collect()
}

fn normal_id(id: &str) -> String {
    match id.trim() {
        "" => "?".to_string(),
        id => id.to_string(),
    }
}

fn validate(t: TodoInput) -> TodoItem {
    let content = t.content.trim();
    TodoItem {
        id: normal_id(&t.id),
        content: if content.is_empty() {
            "(no description)".to_string()
        } else {
            cap(content)
        },
        status: status(&t.status).unwrap_or("pending").to_string(),
    }
}

fn status(raw: &str) -> Option<&'static str> {
    let raw = raw.trim().to_lowercase();
    STATUSES.into_iter().find(|s| *s == raw)
}

fn cap(content: &str) -> String {
    if content.chars().count() <= MAX_CONTENT_CHARS {
        return content.to_string();
    }
    let keep = MAX_CONTENT_CHARS - CUT_MARKER.chars().count();
    content.chars().take(keep).collect::<String>() + CUT_MARKER
}

fn output(todos: Vec<TodoItem>) -> TodoOutput {
    let count = |s: &str| todos.iter().filter(|i| i.status == s).count();
    let summary = Summary {
        total: todos.len(),
        pending: count("pending"),
        in_progress: count("in_progress"),
        completed: count("completed"),
        cancelled: count("cancelled"),
    };
    TodoOutput { todos, summary }
}

/// The lists of every session, least recently used forgotten first.
#[derive(Default)]
struct Sessions {
    lists: HashMap<String, (u64, Vec<TodoItem>)>,
    tick: u64,
}

impl Sessions {
    fn touch(&mut self, key: &str) -> &mut Vec<TodoItem> {
        self.tick += 1;
        if !self.lists.contains_key(key) && self.lists.len() >= MAX_SESSIONS {
            let oldest = self
                .lists
                .iter()
                .min_by_key(|(_, (t, _))| *t)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                self.lists.remove(&oldest);
            }
        }
        let entry = self.lists.entry(key.to_string()).or_default();
        entry.0 = self.tick;
        &mut entry.1
    }
}

static LISTS: LazyLock<Mutex<Sessions>> = LazyLock::new(Mutex::default);

/// Forgets a session's list (for an agent ending a session).
pub fn forget_session(session_id: &str) {
    LISTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .lists
        .remove(session_id);
}

/// Models sometimes number their items: `1` is taken as `"1"`.
fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        S(String),
        N(serde_json::Number),
    }
    Ok(match Id::deserialize(d)? {
        Id::S(s) => s,
        Id::N(n) => n.to_string(),
    })
}
