//! The agent loop: send the conversation and the tool definitions to a
//! chat-completions endpoint, run each turn's tool calls through
//! `Registry::dispatch_batch` (together where the tools allow it, results
//! in call order), send the results back, until the model answers without
//! a tool call or the turn limit is reached.

use hermes_runtime::{BatchCall, Registry, ToolContext};
use serde_json::{json, Value};

/// Where the model is and how the loop runs.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`, ...
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set.
    pub api_key: Option<String>,
    /// Model turns at most (each a request).
    pub max_turns: usize,
}

/// How the loop ended.
#[derive(Debug)]
pub enum Outcome {
    /// The model's final answer.
    Answer(String),
    /// `max_turns` requests and still tool calls.
    TurnLimit,
}

/// Runs the conversation from `prompt`. `tools` are the definitions sent
/// each turn; `on_tool` is told each call and its result.
pub async fn run(
    config: &ChatConfig,
    registry: &Registry,
    ctx: &ToolContext,
    tools: Vec<Value>,
    prompt: &str,
    mut on_tool: impl FnMut(&str, &str),
) -> Result<Outcome, String> {
    let mut messages = vec![json!({"role": "user", "content": prompt})];
    for _ in 0..config.max_turns {
        let mut body = json!({"model": config.model, "messages": messages});
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.clone());
        }
        let reply = post(config, body).await?;
        let message = reply["choices"][0]["message"].clone();
        if !message.is_object() {
            return Err(format!("the endpoint answered no message: {reply}"));
        }
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        messages.push(message.clone());
        if calls.is_empty() {
            return Ok(Outcome::Answer(
                message["content"].as_str().unwrap_or_default().to_string(),
            ));
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

/// One chat-completions request (ureq is blocking: on the blocking pool).
async fn post(config: &ChatConfig, body: Value) -> Result<Value, String> {
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    let key = config.api_key.clone();
    let task = tokio::task::spawn_blocking(move || {
        let mut request = ureq::post(&url).header("Content-Type", "application/json");
        if let Some(key) = key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.to_string())
            .map_err(|e| format!("POST {url}: {e}"))?;
        let text = response
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_to_string()
            .map_err(|e| format!("reading the answer of {url}: {e}"))?;
        serde_json::from_str::<Value>(&text).map_err(|e| {
            format!(
                "{url} answered no JSON ({e}): {}",
                text.chars().take(200).collect::<String>()
            )
        })
    });
    task.await
        .map_err(|e| format!("the request task failed: {e}"))?
}
