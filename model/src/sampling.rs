//! An MCP server's `sampling/createMessage` answered by the agent's model:
//! [`create_message`] turns the request's parameters (MCP JSON) into one
//! chat-completions request and the answer into MCP's `CreateMessageResult`.
//! The MCP client's sampling callback calls it (`docs/mcp-client.md`);
//! this crate does not depend on the MCP client, so both sides speak the
//! protocol's JSON.

use serde_json::{json, Map, Value};

use crate::ModelClient;

/// Answers `params` (a `sampling/createMessage` request's `params`:
/// `messages`, `systemPrompt`, `maxTokens`, `temperature`,
/// `stopSequences`, `tools`, `toolChoice`) with `client`'s endpoint, asking
/// `model` when given (else the endpoint's) for at most `max_tokens`.
/// The answer is a `CreateMessageResult`: `role`, `content` (a text block,
/// or `tool_use` blocks when the model calls the server's tools), `model`,
/// `stopReason`. An error names what was wrong (a message that cannot be
/// carried, the endpoint's failure).
pub async fn create_message(
    client: &ModelClient,
    params: &Value,
    model: Option<&str>,
    max_tokens: u32,
) -> Result<Value, String> {
    let mut messages = Vec::new();
    if let Some(system) = params
        .get("systemPrompt")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        messages.push(json!({"role": "system", "content": system}));
    }
    let Some(given) = params.get("messages").and_then(Value::as_array) else {
        return Err("sampling/createMessage: `messages` is missing".into());
    };
    for m in given {
        convert_message(m, &mut messages)?;
    }
    let mut body = json!({"messages": messages, "max_tokens": max_tokens});
    if let Some(model) = model.filter(|m| !m.is_empty()) {
        body["model"] = json!(model);
    }
    if let Some(t) = params.get("temperature").filter(|t| t.is_number()) {
        body["temperature"] = t.clone();
    }
    if let Some(stop) = params
        .get("stopSequences")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    {
        body["stop"] = Value::Array(stop.clone());
    }
    if let Some(tools) = params
        .get("tools")
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
    {
        let definitions: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.get("name").cloned().unwrap_or_default(),
                    "description": t.get("description").cloned().unwrap_or(json!("")),
                    "parameters": t.get("inputSchema").cloned()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                }})
            })
            .collect();
        let (kept, left_out) = client.tools_for(&definitions);
        if !left_out.is_empty() {
            return Err(format!(
                "sampling/createMessage: tools the endpoint cannot carry: {}",
                left_out.join("; ")
            ));
        }
        body["tools"] = Value::Array(kept);
        if let Some(mode) = params.pointer("/toolChoice/mode").and_then(Value::as_str) {
            if matches!(mode, "auto" | "required" | "none") {
                body["tool_choice"] = json!(mode);
            }
        }
    }
    let answer = client
        .complete(body)
        .await
        .map_err(|e| format!("the model failed: {e}"))?;
    let message = &answer["choices"][0]["message"];
    let finish = answer["choices"][0]["finish_reason"].as_str().unwrap_or("");
    let used = answer
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .or(model)
        .unwrap_or(&client.endpoint().model)
        .to_string();
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    if let Some(calls) = calls {
        let content: Vec<Value> = calls
            .iter()
            .map(|c| {
                let f = &c["function"];
                let input = match &f["arguments"] {
                    Value::String(s) => serde_json::from_str::<Value>(s)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({"_raw": s})),
                    v @ Value::Object(_) => v.clone(),
                    _ => json!({}),
                };
                json!({"type": "tool_use", "id": c["id"], "name": f["name"], "input": input})
            })
            .collect();
        return Ok(json!({
            "role": "assistant", "content": content, "model": used, "stopReason": "toolUse",
        }));
    }
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let stop = match finish {
        "length" => "maxTokens",
        "tool_calls" => "toolUse",
        _ => "endTurn",
    };
    Ok(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": used,
        "stopReason": stop,
    }))
}

/// One MCP sampling message as chat-completions messages: its text and
/// images as one message of its role, its `tool_use` blocks as the
/// assistant's tool calls, its `tool_result` blocks as `tool` messages.
fn convert_message(m: &Value, out: &mut Vec<Value>) -> Result<(), String> {
    let role = match m.get("role").and_then(Value::as_str) {
        Some(r @ ("user" | "assistant")) => r,
        other => {
            return Err(format!(
                "sampling/createMessage: a message's role is {other:?}, not user or assistant"
            ))
        }
    };
    let blocks: Vec<&Value> = match m.get("content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(block @ Value::Object(_)) => vec![block],
        _ => return Err("sampling/createMessage: a message has no content".into()),
    };
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(json!({"type": "text", "text": block["text"]})),
            Some("image") => {
                let mime = block["mimeType"].as_str().unwrap_or("image/png");
                let data = block["data"].as_str().unwrap_or_default();
                parts.push(json!({"type": "image_url",
                    "image_url": {"url": format!("data:{mime};base64,{data}")}}));
            }
            Some("tool_use") => calls.push(json!({
                "id": block["id"], "type": "function",
                "function": {"name": block["name"], "arguments": block["input"].to_string()},
            })),
            Some("tool_result") => {
                let text: Vec<&str> = match &block["content"] {
                    Value::Array(items) => {
                        items.iter().filter_map(|i| i["text"].as_str()).collect()
                    }
                    c => c["text"].as_str().into_iter().collect(),
                };
                out.push(json!({"role": "tool", "tool_call_id": block["toolUseId"],
                    "content": text.join("\n")}));
            }
            other => {
                return Err(format!(
                    "sampling/createMessage: content of type {other:?} cannot be sent to the model"
                ))
            }
        }
    }
    if !calls.is_empty() {
        let mut msg = Map::new();
        msg.insert("role".into(), json!(role));
        msg.insert("tool_calls".into(), Value::Array(calls));
        let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
        if !text.is_empty() {
            msg.insert("content".into(), json!(text.join("\n")));
        }
        out.push(Value::Object(msg));
    } else if let [only] = parts.as_slice() {
        if let Some(text) = only.get("text").and_then(Value::as_str) {
            out.push(json!({"role": role, "content": text}));
        } else {
            out.push(json!({"role": role, "content": parts}));
        }
    } else if !parts.is_empty() {
        out.push(json!({"role": role, "content": parts}));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_chat_messages() {
        let mut out = Vec::new();
        convert_message(
            &json!({"role": "user", "content": {"type": "text", "text": "hi"}}),
            &mut out,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        convert_message(
            &json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}]}),
            &mut out,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        convert_message(
            &json!({"role": "user", "content": [{"type": "tool_result", "toolUseId": "c1",
                "content": [{"type": "text", "text": "r"}]}]}),
            &mut out,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out[0], json!({"role": "user", "content": "hi"}));
        assert_eq!(
            out[1]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(
            out[2],
            json!({"role": "tool", "tool_call_id": "c1", "content": "r"})
        );
        let bad = convert_message(
            &json!({"role": "system", "content": {"type": "text", "text": "x"}}),
            &mut out,
        );
        assert!(bad.is_err_and(|e| e.contains("role")));
    }
}
