//! Progressive disclosure: when the schemas of a session's deferrable
//! (non-core) tools would take more than a share of the context window,
//! definitions offer three bridge tools instead — `tool_search` (query the
//! session's catalog), `tool_describe` (one tool's schema) and `tool_call`
//! (call a tool by name; it must be in the session's scope, and hooks see
//! the real tool's name). Core tools are never deferred.

mod defer;

use serde_json::{json, Value};

use crate::config::{ToolSearch, ToolSearchMode};
use crate::{error_json, Registry, ToolContext};

/// The bridge tools' names (shared with the build step's lints).
pub use hermes_tool_facts::{BRIDGE_TOOLS, TOOL_CALL, TOOL_DESCRIBE, TOOL_SEARCH};

pub use defer::DisclosureConfig;

/// The disclosure of a session of `profile`: its `tools.tool_search` over
/// the program's setting. `off` never defers; `on` defers whenever there is
/// a deferrable tool; `auto` defers as the program set (not at all when it
/// did not), at the profile's `threshold_pct` when the file sets one.
pub(crate) fn for_profile(
    program: Option<DisclosureConfig>,
    search: &ToolSearch,
) -> Option<DisclosureConfig> {
    match search.enabled.value {
        ToolSearchMode::Off => None,
        ToolSearchMode::On => Some(program.unwrap_or_default().with_max_share(0.0)),
        ToolSearchMode::Auto if search.threshold_pct.is_set() => {
            program.map(|c| c.with_max_share(f64::from(search.threshold_pct.value) / 100.0))
        }
        ToolSearchMode::Auto => program,
    }
}

/// A rough token estimate of a JSON value: its serialized length / 4.
pub fn estimate_tokens(value: &Value) -> usize {
    value.to_string().len().div_ceil(4)
}

/// The three bridge tools, in the `{"type": "function", …}` form.
pub fn bridge_definitions() -> Vec<Value> {
    let wrap = |name: &str, description: &str, parameters: Value| {
        json!({"type": "function", "function": {
            "name": name, "description": description, "parameters": parameters,
        }})
    };
    vec![
        wrap(
            TOOL_CALL,
            "Call one of the session's additional tools by name. Use tool_search to find it and tool_describe to learn its arguments first.",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "The tool's name."},
                "arguments": {"type": "object", "properties": {}, "description": "The tool's arguments, as its schema describes them."}
            }, "required": ["name"]}),
        ),
        wrap(
            TOOL_DESCRIBE,
            "Show the full schema (description and parameters) of one of the session's additional tools.",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "The tool's name."}
            }, "required": ["name"]}),
        ),
        wrap(
            TOOL_SEARCH,
            "Search the session's additional tools by words in their names and descriptions; returns names and one-line descriptions.",
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "Words to look for; empty lists every tool."},
                "limit": {"type": "integer", "minimum": 1, "description": "Most results to return (default 5, at most 20, unless the profile configures other limits)."}
            }, "required": []}),
        ),
    ]
}

impl Registry {
    /// The tools a bridge call may reach: the session's enabled tools when
    /// the agent said, else every tool.
    fn bridge_scope(&self, ctx: &ToolContext) -> Vec<String> {
        match ctx.enabled_tools() {
            Some(tools) => tools.to_vec(),
            None => self.tool_names(),
        }
    }

    /// Answers `tool_search` and `tool_describe`; `None` for `tool_call`
    /// (dispatch unwraps it to the real tool).
    pub(crate) fn bridge_answer(&self, name: &str, args: &Value, ctx: &ToolContext) -> String {
        let scope = self.bridge_scope(ctx);
        match name {
            TOOL_SEARCH => {
                let query = args["query"].as_str().unwrap_or("").to_lowercase();
                let words: Vec<&str> = query.split_whitespace().collect();
                let search = &ctx.profile().config().tool_search;
                let (default, max) = (
                    search.search_default_limit.value,
                    search.max_search_limit.value,
                );
                let limit = args["limit"]
                    .as_u64()
                    .map_or(default, |l| usize::try_from(l).unwrap_or(max))
                    .clamp(1, max);
                let mut hits: Vec<(usize, Value)> = scope
                    .iter()
                    .filter_map(|n| self.tool(n))
                    .filter_map(|t| {
                        let description = t.schema()["description"].as_str().unwrap_or("");
                        let haystack = format!("{} {}", t.name(), description).to_lowercase();
                        let score = words.iter().filter(|w| haystack.contains(*w)).count();
                        (words.is_empty() || score > 0).then(|| {
                            let first = description.lines().next().unwrap_or("");
                            (score, json!({"name": t.name(), "description": first}))
                        })
                    })
                    .collect();
                hits.sort_by_key(|h| std::cmp::Reverse(h.0));
                let tools: Vec<Value> = hits.into_iter().take(limit).map(|(_, v)| v).collect();
                json!({ "tools": tools }).to_string()
            }
            TOOL_DESCRIBE => {
                let wanted = args["name"].as_str().unwrap_or("");
                match self
                    .tool(wanted)
                    .filter(|_| scope.iter().any(|s| s == wanted))
                {
                    Some(t) => t.schema().to_string(),
                    None => error_json(format!(
                        "Unknown tool: {wanted} (not among this session's tools; use tool_search)"
                    )),
                }
            }
            _ => error_json(format!("Unknown tool: {name}")),
        }
    }

    /// For `tool_call`: the real tool's name and arguments, if it is in scope.
    pub(crate) fn bridge_target(
        &self,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<(String, Value), String> {
        let Some(target) = args["name"].as_str() else {
            return Err(error_json("tool_call needs `name`: the tool to call"));
        };
        if BRIDGE_TOOLS.contains(&target) {
            return Err(error_json("tool_call cannot call a bridge tool"));
        }
        if !self.bridge_scope(ctx).iter().any(|s| s == target) {
            return Err(error_json(format!(
                "Unknown tool: {target} (not among this session's tools; use tool_search)"
            )));
        }
        let arguments = match &args["arguments"] {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
            other => other.clone(),
        };
        Ok((target.to_string(), arguments))
    }
}
