//! The registry of built-in tools and `dispatch`, which answers every tool
//! call with a JSON string — unknown names, bad arguments and panicking
//! handlers included.

use serde_json::Value;

use crate::catch::{panic_message, CatchUnwind};
use std::sync::Mutex;

use crate::availability::Availability;
use crate::coerce::CoercionPlan;
use crate::definitions::DefinitionsState;
use crate::entry::{Handler, ToolEntry};
use crate::sanitize::sanitize_tool_error;
use crate::toolsets::Toolsets;
use crate::{error_json, ToolContext};

/// The generated, phf-indexed table: tool name → entry.
pub type StaticTools = phf::Map<&'static str, &'static ToolEntry>;

/// The generated coercion plans: tool name → plan.
pub type StaticPlans = phf::Map<&'static str, &'static CoercionPlan>;

/// Everything `cargo xtask gen` emits for one tools crate
/// (`hermes_tools::generated::TABLES`).
#[derive(Debug)]
pub struct StaticTables {
    pub tools: &'static StaticTools,
    /// Tool name → the toolset it registers into.
    pub tool_toolsets: &'static phf::Map<&'static str, &'static str>,
    pub plans: &'static StaticPlans,
    /// The toolset table of `toolsets.toml`.
    pub toolsets: &'static crate::toolsets::StaticTable,
}

/// The tools an agent can call, their toolsets and availability answers.
/// Build one per process (`hermes_tools::registry()`) and share it.
pub struct Registry {
    statics: &'static StaticTools,
    plans: &'static StaticPlans,
    toolsets: Toolsets,
    availability: Availability,
    definitions: Mutex<DefinitionsState>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("static_tools", &self.statics.len())
            .finish()
    }
}

impl Registry {
    /// A registry over the generated tables (`hermes_tools::generated::TABLES`).
    pub fn new(tables: &'static StaticTables) -> Self {
        Registry::with_availability(tables, Availability::default())
    }

    /// The same, with availability answered on a given clock (tests).
    pub fn with_availability(tables: &'static StaticTables, availability: Availability) -> Self {
        Registry {
            statics: tables.tools,
            plans: tables.plans,
            toolsets: Toolsets::new(*tables.toolsets),
            availability,
            definitions: Mutex::new(DefinitionsState::default()),
        }
    }

    pub(crate) fn definitions_state(&self) -> &Mutex<DefinitionsState> {
        &self.definitions
    }

    /// The toolsets: the static table plus run-time additions.
    pub fn toolsets(&self) -> &Toolsets {
        &self.toolsets
    }

    /// The process-wide availability answers.
    pub fn availability(&self) -> &Availability {
        &self.availability
    }

    pub fn get(&self, name: &str) -> Option<&'static ToolEntry> {
        self.statics.get(name).copied()
    }

    /// Every tool, sorted by name.
    pub fn entries(&self) -> Vec<&'static ToolEntry> {
        let mut entries: Vec<_> = self.statics.values().copied().collect();
        entries.sort_unstable_by_key(|e| e.name);
        entries
    }

    /// `{name: parameters}` for every tool: what the build step compiles
    /// coercion plans from.
    pub fn parameters_by_name(&self) -> Value {
        Value::Object(
            self.entries()
                .into_iter()
                .map(|e| (e.name.to_string(), e.parameters().clone()))
                .collect(),
        )
    }

    /// Calls the tool `name` with the raw JSON text the model sent.
    /// Malformed JSON is an error result, like every other failure.
    pub async fn dispatch_json(&self, name: &str, raw_args: &str, ctx: &ToolContext) -> String {
        if self.get(name).is_none() {
            return unknown_tool(name);
        }
        let raw = raw_args.trim();
        let args = if raw.is_empty() {
            Value::Object(Default::default())
        } else {
            match serde_json::from_str::<Value>(raw) {
                Ok(v) => v,
                Err(e) => {
                    return error_json(format!("Invalid JSON in arguments for tool '{name}': {e}"))
                }
            }
        };
        self.dispatch(name, args, ctx).await
    }

    /// Calls the tool `name`. Always returns a JSON string for the model.
    pub async fn dispatch(&self, name: &str, args: Value, ctx: &ToolContext) -> String {
        let Some(entry) = self.get(name) else {
            return unknown_tool(name);
        };
        let args = match args {
            Value::Object(_) => entry.coercion_plan(self.plans).apply(args),
            _ => Value::Object(Default::default()),
        };
        let outcome = match entry.handler {
            Handler::Async(handler) => {
                let ctx = ctx.clone();
                match std::panic::catch_unwind(move || handler(ctx, args)) {
                    Ok(future) => CatchUnwind::new(future).await,
                    Err(payload) => Err(panic_message(payload.as_ref())),
                }
            }
            Handler::Blocking(handler) => run_blocking(handler, ctx.clone(), args).await,
        };
        match outcome {
            Ok(result) => result,
            Err(panic) => error_json(sanitize_tool_error(&format!(
                "Tool execution failed: panic: {panic}"
            ))),
        }
    }
}

fn unknown_tool(name: &str) -> String {
    error_json(format!("Unknown tool: {name}"))
}

/// Runs a blocking handler on tokio's blocking pool when a runtime is
/// present (so it never stalls async tasks), inline otherwise.
async fn run_blocking(
    handler: fn(ToolContext, Value) -> String,
    ctx: ToolContext,
    args: Value,
) -> Result<String, String> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(move || handler(ctx, args)).await {
            Ok(result) => Ok(result),
            Err(e) if e.is_panic() => Err(panic_message(e.into_panic().as_ref())),
            Err(e) => Err(format!("the blocking task did not finish: {e}")),
        },
        Err(_) => std::panic::catch_unwind(move || handler(ctx, args))
            .map_err(|payload| panic_message(payload.as_ref())),
    }
}
