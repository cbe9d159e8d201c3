//! The `clarify` tool: ask the user a question through a callback the
//! embedding agent registers ([`set_clarify_callback`]). Without one the
//! tool is unavailable (its check fails, so definitions leave it out) and a
//! call that reaches it anyway is refused.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use hermes_macros::hermes_tool;
use hermes_runtime::{Profile, Registry, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// Predefined choices offered at most (the user can always type another answer).
pub const MAX_CHOICES: usize = 4;

/// What the callback is asked.
#[derive(Debug, Clone)]
pub struct ClarifyRequest {
    /// The question, trimmed.
    pub question: String,
    /// Up to [`MAX_CHOICES`] answers to offer; `None` for an open question.
    pub choices: Option<Vec<String>>,
    /// The call's context: session, task and profile, to reach the right user.
    pub ctx: ToolContext,
}

/// The user's answer, or why none could be had.
pub type ClarifyFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// How the agent asks its user.
pub type ClarifyCallback = Arc<dyn Fn(ClarifyRequest) -> ClarifyFuture + Send + Sync>;

static CALLBACK: RwLock<Option<ClarifyCallback>> = RwLock::new(None);

fn current() -> Option<ClarifyCallback> {
    CALLBACK.read().unwrap_or_else(|e| e.into_inner()).clone()
}

fn store(callback: Option<ClarifyCallback>, registry: &Registry) {
    *CALLBACK.write().unwrap_or_else(|e| e.into_inner()) = callback;
    // Availability answers and definitions are cached: make the change
    // visible at once.
    registry.availability().invalidate();
    registry.invalidate_definitions();
}

/// Registers how `clarify` reaches the user (process-wide; the request
/// carries the call's context). `registry`'s cached availability answers
/// are dropped so definitions include `clarify` from now on.
pub fn set_clarify_callback(registry: &Registry, callback: ClarifyCallback) {
    store(Some(callback), registry);
}

/// Removes the callback: `clarify` is unavailable again.
pub fn clear_clarify_callback(registry: &Registry) {
    store(None, registry);
}

/// The availability check: a callback is registered.
pub fn clarify_callback_registered(_profile: &Profile) -> bool {
    current().is_some()
}

/// A choice as models send it: a string, or an object whose `label`,
/// `description`, `text` or `title` holds the text.
#[derive(Debug, Clone)]
pub struct Choice(String);

impl<'de> Deserialize<'de> for Choice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        let text = match &value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Object(map) => ["label", "description", "text", "title"]
                .iter()
                .find_map(|k| map.get(*k).and_then(|v| v.as_str()))
                .unwrap_or_default()
                .to_string(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        Ok(Choice(text.trim().to_string()))
    }
}

impl JsonSchema for Choice {
    fn schema_name() -> Cow<'static, str> {
        "Choice".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// What `clarify` answers.
#[derive(Debug, Serialize)]
pub struct ClarifyOutput {
    pub question: String,
    pub choices_offered: Option<Vec<String>>,
    pub user_response: String,
}

/// Ask the user a question when you need a decision, a clarification or
/// feedback before going on.
///
/// Two modes: multiple choice (give up to 4 `choices`; the user picks one or
/// types their own answer) and open-ended (omit `choices`). Put each option
/// in `choices`, never listed inside the question text. Use it when the task
/// is ambiguous, when a decision has trade-offs the user should weigh, or to
/// ask how a finished task worked out; for low-stakes decisions, choose a
/// sensible default yourself.
// Read-only, yet a barrier: the question waits for the user, and the
// calls around it should see the answer.
#[hermes_tool(
    toolset = "clarify",
    emoji = "❓",
    check = clarify_callback_registered,
    read_only,
    idempotent = false,
    open_world = false,
    concurrency = "exclusive"
)]
pub async fn clarify(
    ctx: &ToolContext,
    /// The question itself, and only the question (e.g. "Which deployment
    /// target?"); options go in `choices`.
    question: String,
    /// The answers to offer, one option per element, at most 4. Omit for an
    /// open-ended question.
    choices: Option<Vec<Choice>>,
) -> Result<ClarifyOutput, String> {
    let question = question.trim().to_string();
    if question.is_empty() {
        return Err("Question text is required.".into());
    }
    let choices = choices
        .map(|c| {
            c.into_iter()
                .map(|c| c.0)
                .filter(|c| !c.is_empty())
                .take(MAX_CHOICES)
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty());
    let Some(callback) = current() else {
        return Err("clarify is not available here: no way to ask the user is registered".into());
    };
    let request = ClarifyRequest {
        question: question.clone(),
        choices: choices.clone(),
        ctx: ctx.clone(),
    };
    let answer = callback(request)
        .await
        .map_err(|e| format!("Failed to get user input: {e}"))?;
    Ok(ClarifyOutput {
        question,
        choices_offered: choices,
        user_response: answer.trim().to_string(),
    })
}
