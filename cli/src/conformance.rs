//! `hermes-tools mcp conformance NAME` (hidden): the client side of the MCP
//! conformance suite (`@modelcontextprotocol/conformance`, run by
//! `.ci/conformance`). The suite starts a scenario's server and this
//! command with `MCP_CONFORMANCE_SCENARIO` set; the wrapper has written a
//! profile whose `mcp_servers.NAME` is that server. The server is connected
//! as every other command connects it ([`McpClients::start_only`]), and
//! each scenario's steps are what an agent would do: see the tools (as the
//! model is sent them), call one.
//!
//! The `auth/*` scenarios' servers need an OAuth login:
//! `.ci/conformance-client` configures `auth: oauth` and runs `mcp login
//! NAME` first. When the server still refuses (no usable token, or a call
//! answered 403 for more scope), this exits [`NEEDS_LOGIN`]: the
//! wrapper logs in again (the refusal's challenge kept for it) and runs
//! this again, as a user would.

use std::process::ExitCode;

use hermes_mcp_client::{auth, naming, McpClients, State};
use hermes_runtime::dialect::{rewrite, Dialect};
use hermes_runtime::{Profile, Registry, ToolContext};
use serde_json::{json, Value};

use crate::exit::NEEDS_LOGIN;

/// The environment variable the suite names the scenario in.
const SCENARIO_VAR: &str = "MCP_CONFORMANCE_SCENARIO";

/// The environment variable holding the scenario's context (JSON), such as
/// the calls to make (`toolCalls`: `[{"name", "arguments"}]`).
const CONTEXT_VAR: &str = "MCP_CONFORMANCE_CONTEXT";

/// One step after the connection (which lists the tools).
enum Step {
    /// Call the server's tool `tool` with `args`.
    Call { tool: &'static str, args: Value },
    /// Call `echo` with `{"schema": <the parameters of `tool` as the model
    /// is sent them>}`: what reaches the model, shown to the server.
    EchoSchema {
        tool: &'static str,
        echo: &'static str,
    },
    /// Call every tool the server lists, with the arguments its schema
    /// requires (a placeholder of each required property's type).
    CallEach,
}

/// The steps of a scenario, after connecting and listing; unknown
/// scenarios (and those whose checks are the handshake and the listing)
/// only connect.
fn steps(scenario: &str) -> Vec<Step> {
    match scenario {
        "tools_call" => vec![Step::Call {
            tool: "add_numbers",
            args: json!({"a": 5, "b": 3}),
        }],
        "json-schema-2020-12-preservation" => vec![Step::EchoSchema {
            tool: "json_schema_2020_12_tool",
            echo: "json_schema_echo",
        }],
        "request-metadata"
        | "sep-2322-client-request-state"
        | "http-standard-headers"
        | "http-custom-headers"
        | "http-invalid-tool-headers"
        | "elicitation-sep1034-client-defaults" => vec![Step::CallEach],
        // The OAuth scenarios' servers list one tool to call once logged in.
        s if s.starts_with("auth/") => vec![Step::CallEach],
        _ => Vec::new(),
    }
}

/// A placeholder value of a property's schema type (the first one named).
fn placeholder(schema: &Value) -> Value {
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types.first().and_then(Value::as_str).unwrap_or(""),
        _ => "",
    };
    match kind {
        "number" | "integer" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => json!({}),
        "null" => Value::Null,
        _ => json!("conformance"),
    }
}

/// Arguments with every required property of `parameters` set.
fn required_arguments(parameters: &Value) -> Value {
    let mut args = serde_json::Map::new();
    let properties = parameters.get("properties");
    for name in parameters
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let schema = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        args.insert(name.to_string(), placeholder(schema));
    }
    Value::Object(args)
}

pub fn run(registry: &'static Registry, profile: &Profile, name: &str) -> (String, ExitCode) {
    let scenario = std::env::var(SCENARIO_VAR).unwrap_or_default();
    // No user to ask: an elicitation is answered with the form's defaults,
    // as `call --elicit defaults` answers it.
    hermes_mcp_client::set_elicitation_callback(hermes_mcp_client::callbacks::accept_defaults());
    let clients = match McpClients::start_only(registry, profile, |n| n == name) {
        Ok(c) => c,
        Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
    };
    clients.wait_ready(clients.longest_connect());
    let Some(status) = clients.status().into_iter().next() else {
        return (
            format!("error: no MCP server `{name}`\n"),
            ExitCode::FAILURE,
        );
    };
    if status.state != State::Connected {
        let error = status.error.unwrap_or_default();
        let code = if status.state == State::NeedsLogin {
            ExitCode::from(NEEDS_LOGIN)
        } else {
            ExitCode::FAILURE
        };
        return (format!("error: `{name}` did not connect: {error}\n"), code);
    }
    // The definitions as the model is sent them (the default dialect).
    let toolset = naming::toolset(name);
    let defs = registry.get_tool_definitions(Some(&[toolset.as_str()]), &[], profile);
    let mut parameters = std::collections::HashMap::new();
    for tool in defs.tools.iter() {
        if let Ok(v) = rewrite(&tool["function"], Dialect::OpenAi) {
            let function = &v["function"];
            if let Some(n) = function["name"].as_str() {
                parameters.insert(n.to_string(), function["parameters"].clone());
            }
        }
    }
    let mut calls: Vec<(String, Value)> = Vec::new();
    for step in steps(&scenario) {
        match step {
            Step::Call { tool, args } => calls.push((naming::tool_name(name, tool), args)),
            Step::EchoSchema { tool, echo } => {
                let Some(schema) = parameters.get(&naming::tool_name(name, tool)) else {
                    return (
                        format!("error: `{name}` lists no tool `{tool}`\n"),
                        ExitCode::FAILURE,
                    );
                };
                calls.push((naming::tool_name(name, echo), json!({ "schema": schema })));
            }
            Step::CallEach => {
                // The calls the scenario names, with its arguments; else
                // every tool with placeholders for what it requires.
                let context: Value = std::env::var(CONTEXT_VAR)
                    .ok()
                    .and_then(|c| serde_json::from_str(&c).ok())
                    .unwrap_or(Value::Null);
                if let Some(named) = context["toolCalls"].as_array() {
                    for call in named {
                        if let Some(tool) = call["name"].as_str() {
                            let args = call.get("arguments").cloned().unwrap_or(json!({}));
                            calls.push((naming::tool_name(name, tool), args));
                        }
                    }
                    continue;
                }
                for t in &status.tools {
                    let args = parameters
                        .get(t)
                        .map_or_else(|| json!({}), required_arguments);
                    calls.push((t.clone(), args));
                }
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
    };
    let ctx = ToolContext::new(profile.clone(), std::env::temp_dir());
    let mut text = format!("scenario {scenario}: {} tools\n", status.tools.len());
    for (tool, args) in calls {
        let result = runtime.block_on(registry.dispatch_json(&tool, &args.to_string(), &ctx));
        text += &format!("{tool} {args} -> {result}\n");
        // Refused for want of a login (a step-up): the calls after it
        // would be refused too.
        if auth::says_needs_login(&result, name) {
            return (text, ExitCode::from(NEEDS_LOGIN));
        }
    }
    (text, ExitCode::SUCCESS)
}
