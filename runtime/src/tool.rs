//! Run-time tools (plugins, MCP servers) and [`ToolRef`], the one view
//! dispatch and definitions take of a static or a run-time tool.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::availability::CheckFn;
use crate::coerce::CoercionPlan;
use crate::effects::{title_from_name, ToolEffects};
use crate::entry::{Handler, HandlerFuture, ToolEntry};
use crate::tables::StaticPlans;
use crate::ToolContext;

/// A run-time tool's handler.
pub type DynHandler = Arc<dyn Fn(ToolContext, Value) -> HandlerFuture + Send + Sync>;

/// Who registers a run-time tool; it decides the shadowing rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSource {
    /// A plugin. Overriding a built-in tool needs `override` **and** the
    /// operator's opt-in ([`Registry::allow_plugin_overrides`](crate::Registry::allow_plugin_overrides)).
    Plugin,
    /// An MCP server's tool (toolset `mcp-<server>`).
    Mcp,
}

/// What a plugin or MCP client registers.
#[derive(Clone)]
pub struct RuntimeToolSpec {
    pub name: String,
    pub toolset: String,
    pub description: String,
    /// The JSON Schema `parameters` object.
    pub parameters: Value,
    pub handler: DynHandler,
    pub source: ToolSource,
    pub check: Option<CheckFn>,
    pub requires_env: Vec<String>,
    pub emoji: String,
    pub max_result_chars: Option<usize>,
    pub timeout: Option<Duration>,
    /// May replace a tool of the same name from another toolset.
    pub override_existing: bool,
    /// What it does; [`ToolEffects::UNDECLARED`] (writing, exclusive) unless set.
    pub effects: ToolEffects,
    /// A title for people (an MCP server's `title`); derived from the name
    /// when `None`.
    pub title: Option<String>,
    /// The JSON Schema of its results' structured form (an MCP server's
    /// `outputSchema`), when it declares one.
    pub output_schema: Option<Value>,
}

impl RuntimeToolSpec {
    /// A plugin tool with defaults for everything optional.
    pub fn new(
        name: impl Into<String>,
        toolset: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        handler: DynHandler,
    ) -> Self {
        RuntimeToolSpec {
            name: name.into(),
            toolset: toolset.into(),
            description: description.into(),
            parameters,
            handler,
            source: ToolSource::Plugin,
            check: None,
            requires_env: Vec::new(),
            emoji: String::new(),
            max_result_chars: None,
            timeout: None,
            override_existing: false,
            effects: ToolEffects::UNDECLARED,
            title: None,
            output_schema: None,
        }
    }
}

impl fmt::Debug for RuntimeToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeToolSpec")
            .field("name", &self.name)
            .field("toolset", &self.toolset)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A registered run-time tool: the spec plus what registration computed once.
pub struct RuntimeTool {
    pub spec: RuntimeToolSpec,
    /// `{name, description, parameters}`.
    pub schema: Value,
    /// Compiled at registration; dispatch never walks the schema.
    pub plan: CoercionPlan,
    /// `schema` with `parameters` sanitized for strict backends.
    pub sanitized: Value,
    /// `{"type": "function", "function": sanitized}`, shared by definitions.
    pub definition: Arc<Value>,
    /// A description writes `{HERMES_HOME}` (replaced per profile).
    pub mentions_home: bool,
}

impl fmt::Debug for RuntimeTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

/// Why a registration or removal was refused (the registry is unchanged).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterError {
    InvalidName(String),
    /// The name is taken by a tool of another toolset and `override` was not set.
    Shadowing {
        name: String,
        existing_toolset: String,
        toolset: String,
    },
    /// A plugin asked to replace a built-in tool without the operator's opt-in.
    BuiltinOverrideNotAllowed {
        name: String,
    },
    /// Removal of a tool that is not registered at run time.
    NotRegistered(String),
    /// Removal asked by another toolset than the one that registered it.
    WrongToolset {
        name: String,
        toolset: String,
        requested: String,
    },
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::InvalidName(n) => {
                let pattern = hermes_tool_facts::NAME_PATTERN;
                write!(f, "invalid tool name `{n}`: names must match {pattern}")
            }
            RegisterError::Shadowing {
                name,
                existing_toolset,
                toolset,
            } => write!(
                f,
                "tool `{name}` is already registered by toolset `{existing_toolset}`; toolset `{toolset}` must set `override` to replace it"
            ),
            RegisterError::BuiltinOverrideNotAllowed { name } => write!(
                f,
                "a plugin may replace the built-in tool `{name}` only when the operator allows plugin overrides"
            ),
            RegisterError::NotRegistered(n) => write!(f, "no run-time tool `{n}` is registered"),
            RegisterError::WrongToolset {
                name,
                toolset,
                requested,
            } => write!(
                f,
                "tool `{name}` belongs to toolset `{toolset}`, not `{requested}`; only its own toolset (or an override) may remove it"
            ),
        }
    }
}

impl std::error::Error for RegisterError {}

/// A static or run-time tool.
#[derive(Debug, Clone)]
pub enum ToolRef {
    Static(&'static ToolEntry),
    Runtime(Arc<RuntimeTool>),
}

impl ToolRef {
    pub fn name(&self) -> &str {
        match self {
            ToolRef::Static(e) => e.name,
            ToolRef::Runtime(t) => &t.spec.name,
        }
    }

    pub fn toolset(&self) -> &str {
        match self {
            ToolRef::Static(e) => e.toolset,
            ToolRef::Runtime(t) => &t.spec.toolset,
        }
    }

    pub fn emoji(&self) -> &str {
        match self {
            ToolRef::Static(e) => e.emoji,
            ToolRef::Runtime(t) => &t.spec.emoji,
        }
    }

    /// `{name, description, parameters}`.
    pub fn schema(&self) -> &Value {
        match self {
            ToolRef::Static(e) => e.schema(),
            ToolRef::Runtime(t) => &t.schema,
        }
    }

    pub fn parameters(&self) -> &Value {
        self.schema().get("parameters").unwrap_or(&Value::Null)
    }

    /// The ready definition, `{"type": "function", "function": …}`.
    pub fn definition(&self) -> Arc<Value> {
        match self {
            ToolRef::Static(e) => e.definition().clone(),
            ToolRef::Runtime(t) => t.definition.clone(),
        }
    }

    /// Whether a description writes `{HERMES_HOME}`, so definitions need a
    /// per-profile copy.
    pub fn mentions_home(&self) -> bool {
        match self {
            ToolRef::Static(e) => e.mentions_home(),
            ToolRef::Runtime(t) => t.mentions_home,
        }
    }

    /// The schema with `parameters` sanitized for strict backends.
    pub fn sanitized_schema(&self) -> &Value {
        match self {
            ToolRef::Static(e) => e.sanitized_schema(),
            ToolRef::Runtime(t) => &t.sanitized,
        }
    }

    pub fn check(&self) -> Option<CheckFn> {
        match self {
            ToolRef::Static(e) => e.check,
            ToolRef::Runtime(t) => t.spec.check,
        }
    }

    pub fn requires_env(&self) -> Vec<&str> {
        match self {
            ToolRef::Static(e) => e.requires_env.to_vec(),
            ToolRef::Runtime(t) => t.spec.requires_env.iter().map(String::as_str).collect(),
        }
    }

    pub fn max_result_chars(&self) -> Option<usize> {
        match self {
            ToolRef::Static(e) => e.max_result_chars,
            ToolRef::Runtime(t) => t.spec.max_result_chars,
        }
    }

    pub(crate) fn timeout(&self) -> Option<Duration> {
        match self {
            ToolRef::Static(_) => None,
            ToolRef::Runtime(t) => t.spec.timeout,
        }
    }

    /// What it does and whether its calls may overlap.
    pub fn effects(&self) -> &ToolEffects {
        match self {
            ToolRef::Static(e) => &e.effects,
            ToolRef::Runtime(t) => &t.spec.effects,
        }
    }

    /// The JSON Schema of its result (MCP `outputSchema`): built-in tools
    /// whose result type is a struct deriving `JsonSchema`, run-time tools
    /// that were given one (an MCP server's tool that declares one);
    /// `None` else.
    pub fn output_schema(&self) -> Option<&Value> {
        match self {
            ToolRef::Static(e) => e.output_schema(),
            ToolRef::Runtime(t) => t.spec.output_schema.as_ref(),
        }
    }

    /// Its title for people: the one it was given, else one made from its
    /// name (`read_file` → "Read file").
    pub fn title(&self) -> String {
        match self {
            ToolRef::Static(e) => title_from_name(e.name),
            ToolRef::Runtime(t) => t
                .spec
                .title
                .clone()
                .unwrap_or_else(|| title_from_name(&t.spec.name)),
        }
    }

    pub fn is_static(&self) -> bool {
        matches!(self, ToolRef::Static(_))
    }

    pub(crate) fn coerce(&self, plans: &'static StaticPlans, args: Value) -> Value {
        match self {
            ToolRef::Static(e) => e.coercion_plan(plans).apply(args),
            ToolRef::Runtime(t) => t.plan.apply(args),
        }
    }

    /// Starts the handler. Static blocking handlers go to tokio's blocking
    /// pool when a runtime is present.
    pub(crate) fn start(&self, ctx: ToolContext, args: Value) -> HandlerStart {
        match self {
            ToolRef::Static(e) => match e.handler {
                Handler::Async(h) => HandlerStart::Future(h(ctx, args)),
                Handler::Blocking(h) => HandlerStart::Blocking(h, ctx, args),
            },
            ToolRef::Runtime(t) => HandlerStart::Future((t.spec.handler)(ctx, args)),
        }
    }
}

pub(crate) enum HandlerStart {
    Future(HandlerFuture),
    Blocking(fn(ToolContext, Value) -> String, ToolContext, Value),
}
