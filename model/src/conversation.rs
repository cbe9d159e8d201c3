//! The agent loop: send the conversation and the tool definitions, run
//! each turn's tool calls through `Registry::dispatch_batch` (together
//! where the tools allow it, results in call order), send the results
//! back, until the model answers without a tool call, the turn limit, or
//! an interrupt of the context. Each turn starts with the background
//! delegations of the context's session that finished, as messages.
//!
//! A call of a registered tool that was not offered this conversation is
//! answered an error without running: the model can call only what it was
//! given (a child agent cannot reach a tool its role took away). A name
//! the registry does not know goes to dispatch, which answers it with
//! suggestions.

use std::collections::HashSet;

use hermes_runtime::content::{ResultForm, ToolContent};
use hermes_runtime::{error_json, BatchCall, Registry, ToolContext};
use serde_json::{json, Value};

use crate::{ModelClient, ModelError};

/// How a conversation's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The model's final answer.
    Answer(String),
    /// `max_turns` requests and still tool calls.
    TurnLimit,
    /// The context's cancellation was triggered (before a request, or
    /// while one or a turn's calls ran).
    Interrupted,
}

/// The name a definition gives its tool (OpenAI envelope, or bare).
fn offered_name(tool: &Value) -> Option<&str> {
    tool.pointer("/function/name")
        .or_else(|| tool.get("name"))
        .and_then(Value::as_str)
}

/// Runs the conversation in `messages` (the caller's, grown by every
/// message of the run) for at most `max_turns` requests. `tools` are the
/// definitions sent each turn, in the endpoint's dialect
/// ([`ModelClient::tools_for`]); `on_tool` is told each call and its
/// result as text. A result with images goes back as the endpoint's
/// dialect takes them (`ResultForm::of`: content parts for OpenAI's), else
/// as text with a note naming them.
pub async fn run(
    client: &ModelClient,
    registry: &Registry,
    ctx: &ToolContext,
    tools: &[Value],
    messages: &mut Vec<Value>,
    max_turns: usize,
    mut on_tool: impl FnMut(&str, &str),
) -> Result<Outcome, ModelError> {
    let offered: HashSet<&str> = tools.iter().filter_map(offered_name).collect();
    let form = ResultForm::of(client.endpoint().dialect);
    let cancel = ctx.cancellation();
    for _ in 0..max_turns {
        if cancel.is_cancelled() {
            return Ok(Outcome::Interrupted);
        }
        // Background delegations that finished come back as messages.
        messages.extend(
            crate::completions::completions(ctx)
                .iter()
                .map(crate::completions::Completion::message),
        );
        let message = tokio::select! {
            m = client.chat(messages, tools) => m?,
            () = cancel.cancelled() => return Ok(Outcome::Interrupted),
        };
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let answer = message["content"].as_str().unwrap_or_default().to_string();
        messages.push(message);
        if calls.is_empty() {
            return Ok(Outcome::Answer(answer));
        }
        let calls: Vec<BatchCall> = calls
            .iter()
            .map(|call| {
                // Arguments are a JSON text; a model may send an object instead.
                let arguments = match &call["function"]["arguments"] {
                    Value::String(s) => s.clone(),
                    Value::Null => "{}".to_string(),
                    other => other.to_string(),
                };
                BatchCall::new(
                    call["id"].as_str().unwrap_or_default(),
                    call["function"]["name"].as_str().unwrap_or_default(),
                    arguments,
                )
            })
            .collect();
        let withheld =
            |c: &BatchCall| !offered.contains(c.name.as_str()) && registry.tool(&c.name).is_some();
        let runnable: Vec<BatchCall> = calls.iter().filter(|c| !withheld(c)).cloned().collect();
        let mut ran = registry
            .dispatch_batch_content(&runnable, ctx)
            .await
            .into_iter();
        for call in &calls {
            let result = if withheld(call) {
                ToolContent::text(error_json(format!(
                    "Tool '{}' is not available to this agent: call only the tools it was given.",
                    call.name
                )))
            } else {
                ran.next().unwrap_or_else(|| ToolContent::text(""))
            };
            on_tool(&call.name, &result.to_text());
            // Images as the endpoint's dialect takes them, else named in a note.
            let content = result.to_message_content(form);
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": content}));
        }
        if cancel.is_cancelled() {
            return Ok(Outcome::Interrupted);
        }
    }
    Ok(Outcome::TurnLimit)
}
