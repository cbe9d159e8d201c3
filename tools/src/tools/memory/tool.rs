//! The `memory` tool: durable notes kept under the profile's home
//! (`memories/MEMORY.md`, `memories/USER.md`), resolved at call time. An
//! agent-loop tool: dispatch answers it only through the executor
//! `install_agent_loop_executors` registers, which runs this very function.
//! The stores themselves are in `store.rs`.

mod store;

use hermes_macros::hermes_tool;
use hermes_runtime::{Profile, ToolContext};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use store::{Op, Store};
pub use store::{ENTRY_DELIMITER, MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT};

/// What one change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryAction {
    Add,
    Replace,
    Remove,
}

/// Which store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryTarget {
    Memory,
    User,
}

/// One change of a batch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(transform = crate::schema_util::drop_defaults)]
pub struct MemoryOperation {
    /// add, replace or remove.
    pub action: MemoryAction,
    /// The entry text, for add and replace.
    #[serde(default)]
    pub content: String,
    /// A short unique part of the entry to change, for replace and remove.
    #[serde(default)]
    pub old_text: String,
}

/// Save durable facts that should survive across sessions: they are shown
/// to you at the start of every future session, so keep entries short and
/// high-signal.
///
/// Make all changes in one call with `operations` (a list of {action,
/// content, old_text}): the batch applies all or nothing and the size budget
/// is checked on the final result, so one call can remove or shorten stale
/// entries and add new ones. Use the single action/content/old_text fields
/// for one lone change. Save when the user states a preference, a correction
/// or a personal detail, or when you learn a stable fact about their
/// environment or conventions. Skip trivial or easily rediscovered facts,
/// raw data and task progress. Targets: `user` is who the user is (name,
/// role, preferences, style); `memory` is your own notes (environment,
/// conventions, tool quirks, lessons). When a store is full the change is
/// refused with the current entries shown: consolidate in one batch.
#[hermes_tool(
    toolset = "memory",
    emoji = "🧠",
    destructive,
    idempotent = false,
    open_world = false,
    concurrency = "exclusive"
)]
pub fn memory(
    ctx: &ToolContext,
    /// The store: `memory` for your notes (default), `user` for the user's profile.
    target: Option<MemoryTarget>,
    /// A single change: add, replace or remove. Omit when using `operations`.
    action: Option<MemoryAction>,
    /// The entry text, for a single add or replace.
    content: Option<String>,
    /// For a single replace or remove: a short unique part of the entry to change.
    old_text: Option<String>,
    /// A batch of changes applied all or nothing against the final budget;
    /// preferred for several changes or to make room.
    operations: Option<Vec<MemoryOperation>>,
) -> Result<Value, String> {
    let store = match target.unwrap_or(MemoryTarget::Memory) {
        MemoryTarget::Memory => Store::Memory,
        MemoryTarget::User => Store::User,
    };
    let home = ctx.profile().home();
    let (ops, single) = match operations.filter(|o| !o.is_empty()) {
        Some(batch) => (
            batch
                .into_iter()
                .map(|o| op(o.action, o.content, o.old_text))
                .collect::<Vec<_>>(),
            false,
        ),
        None => {
            let Some(action) = action else {
                return Err(
                    "give action (add, replace or remove) with content/old_text, or operations"
                        .into(),
                );
            };
            let content = content.unwrap_or_default();
            if matches!(action, MemoryAction::Add | MemoryAction::Replace)
                && content.trim().is_empty()
            {
                return Err(format!(
                    "content is required for {}",
                    match action {
                        MemoryAction::Add => "add",
                        _ => "replace",
                    }
                ));
            }
            (
                vec![op(action, content, old_text.unwrap_or_default())],
                true,
            )
        }
    };
    store::apply(home, store, &ops, single).map_err(|e| {
        format!(
            "could not update the {} store under the profile's home: {e}",
            store.name()
        )
    })
}

fn op(action: MemoryAction, content: String, old_text: String) -> Op {
    match action {
        MemoryAction::Add => Op::Add(content),
        MemoryAction::Replace => Op::Replace { old_text, content },
        MemoryAction::Remove => Op::Remove { old_text },
    }
}

/// Both memory stores of `profile` rendered for a system prompt (empty
/// when nothing is saved): what an agent shows the model at session start.
pub fn snapshot(profile: &Profile) -> String {
    store::snapshot(profile.home())
}
