//! The agent loop: send the conversation and the tool definitions, run
//! each turn's tool calls through `Registry::dispatch_batch` (together
//! where the tools allow it, results in call order), send the results
//! back, until the model answers without a tool call or the turn limit.

use hermes_runtime::{BatchCall, Registry, ToolContext};
use serde_json::{json, Value};

use crate::{ModelClient, ModelError};

/// How a conversation's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The model's final answer.
    Answer(String),
    /// `max_turns` requests and still tool calls.
    TurnLimit,
}

/// Runs the conversation in `messages` (the caller's, grown by every
/// message of the run) for at most `max_turns` requests. `tools` are the
/// definitions sent each turn, in the endpoint's dialect
/// ([`ModelClient::tools_for`]); `on_tool` is told each call and its result.
pub async fn run(
    client: &ModelClient,
    registry: &Registry,
    ctx: &ToolContext,
    tools: &[Value],
    messages: &mut Vec<Value>,
    max_turns: usize,
    mut on_tool: impl FnMut(&str, &str),
) -> Result<Outcome, ModelError> {
    for _ in 0..max_turns {
        let message = client.chat(messages, tools).await?;
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let answer = message["content"].as_str().unwrap_or_default().to_string();
        messages.push(message);
        if calls.is_empty() {
            return Ok(Outcome::Answer(answer));
        }
        let batch: Vec<BatchCall> = calls
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
        let results = registry.dispatch_batch(&batch, ctx).await;
        for (call, result) in batch.iter().zip(results) {
            on_tool(&call.name, &result);
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": result}));
        }
    }
    Ok(Outcome::TurnLimit)
}
