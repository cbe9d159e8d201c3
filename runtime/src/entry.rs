//! One built-in tool as the generated registry holds it: metadata, the
//! schema builder and the handler, all `'static`.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::coerce::CoercionPlan;
use crate::effects::ToolEffects;
use crate::{Profile, ToolContext};

/// The future an async handler returns: the JSON string for the model.
pub type HandlerFuture = Pin<Box<dyn Future<Output = String> + Send + 'static>>;

/// The direct entry of an `async fn` tool: the raw JSON arguments decoded
/// straight into the parameter types (see `direct.rs`); `None` when they do
/// not decode as they are, and the call takes the `Value` path.
pub type DirectHandler = fn(&ToolContext, &str) -> Option<HandlerFuture>;

/// How dispatch runs a handler.
#[derive(Clone, Copy)]
pub enum Handler {
    /// An `async fn` tool: polled on the caller's task.
    Async(fn(ToolContext, Value) -> HandlerFuture),
    /// A plain `fn` tool: run on tokio's blocking pool, so it never blocks
    /// the async runtime.
    Blocking(fn(ToolContext, Value) -> String),
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Handler::Async(_) => "Handler::Async",
            Handler::Blocking(_) => "Handler::Blocking",
        })
    }
}

/// One schema property, as the macro saw it in the function signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    pub name: &'static str,
    /// The Rust type as written (`Option<u64>`).
    pub rust_type: &'static str,
    pub required: bool,
    pub description: &'static str,
}

/// A built-in tool. The macro emits one `static` of this type beside each
/// `#[hermes_tool]` function; the generated registry indexes them by name.
#[derive(Debug)]
pub struct ToolEntry {
    pub name: &'static str,
    pub toolset: &'static str,
    pub description: &'static str,
    pub emoji: &'static str,
    pub requires_env: &'static [&'static str],
    pub max_result_chars: Option<usize>,
    pub override_existing: bool,
    pub check: Option<fn(&Profile) -> bool>,
    /// What it does (read-only, destructive, ...) and whether its calls may
    /// overlap; [`ToolEffects::UNDECLARED`] when the attribute states nothing.
    pub effects: ToolEffects,
    /// The properties in declaration order; empty for the `args: T` form.
    pub params: &'static [ParamInfo],
    /// `file!()` / `line!()` of the function.
    pub source_file: &'static str,
    pub source_line: u32,
    pub handler: Handler,
    /// The direct entry, for `async fn` tools of at most
    /// `MAX_DIRECT_PARAMS` properties.
    pub direct: Option<DirectHandler>,
    #[doc(hidden)]
    pub parameters: fn() -> Value,
    /// The schema of its result when that is a struct deriving `JsonSchema`
    /// (MCP `outputSchema`); see [`ToolEntry::output_schema`].
    #[doc(hidden)]
    pub output: fn() -> Option<Value>,
    #[doc(hidden)]
    pub cache: EntryCache,
}

/// Lazily built, then shared: the schema is read (or derived) once per
/// process.
#[doc(hidden)]
#[derive(Debug)]
pub struct EntryCache {
    /// The `parameters` JSON text the build step wrote
    /// (`generated_schemas.rs`), set when a registry is built over the
    /// entry's tables: read instead of deriving the schema.
    text: OnceLock<&'static str>,
    schema: OnceLock<Value>,
    sanitized: OnceLock<Value>,
    definition: OnceLock<std::sync::Arc<Value>>,
    mentions_home: OnceLock<bool>,
    plan: OnceLock<PlanSlot>,
    output: OnceLock<Option<Value>>,
}

#[derive(Debug)]
enum PlanSlot {
    /// Emitted by the build step (`generated_plans.rs`).
    Static(&'static CoercionPlan),
    /// Compiled from the schema on first use (a tool added since the last
    /// `cargo xtask gen`).
    Compiled(CoercionPlan),
}

impl EntryCache {
    pub const fn new() -> Self {
        EntryCache {
            text: OnceLock::new(),
            schema: OnceLock::new(),
            sanitized: OnceLock::new(),
            definition: OnceLock::new(),
            mentions_home: OnceLock::new(),
            plan: OnceLock::new(),
            output: OnceLock::new(),
        }
    }
}

impl Default for EntryCache {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolEntry {
    /// The `parameters` JSON Schema object (self-contained: no `$ref`, no `$schema`).
    pub fn parameters(&self) -> &Value {
        self.schema().get("parameters").unwrap_or(&Value::Null)
    }

    /// The `parameters` derived from the Rust types now (schemars), never
    /// read from the text the build step wrote: what the build step writes
    /// that text from, and what it is checked against. Not cached.
    pub fn derived_parameters(&self) -> Value {
        (self.parameters)()
    }

    /// Gives the entry the `parameters` text the build step wrote for it
    /// (`StaticTables::schemas`), which [`schema`](Self::schema) then reads
    /// instead of deriving. The first text given wins; one given after the
    /// schema was built changes nothing.
    pub(crate) fn use_parameters_text(&self, text: &'static str) {
        let _ = self.cache.text.set(text);
    }

    /// The coercion plan: the static one the build step emitted, else one
    /// compiled from the schema once. Dispatch never walks schema JSON.
    /// `plans` is a [`StaticPlans`](crate::registry::StaticPlans), written
    /// out so this module needs nothing from the table module, which needs it.
    pub fn coercion_plan(
        &self,
        plans: &'static phf::Map<&'static str, &'static CoercionPlan>,
    ) -> &CoercionPlan {
        let slot = self.cache.plan.get_or_init(|| match plans.get(self.name) {
            Some(plan) => PlanSlot::Static(plan),
            None => PlanSlot::Compiled(CoercionPlan::compile(self.parameters())),
        });
        match slot {
            PlanSlot::Static(plan) => plan,
            PlanSlot::Compiled(plan) => plan,
        }
    }

    /// The schema with `parameters` sanitized for strict backends, built once.
    pub fn sanitized_schema(&self) -> &Value {
        self.cache
            .sanitized
            .get_or_init(|| crate::schema::sanitized(self.schema()))
    }

    /// `{"type": "function", "function": sanitized schema}`, built once and
    /// shared by every definitions pass that needs no per-session change.
    pub fn definition(&self) -> &std::sync::Arc<Value> {
        self.cache
            .definition
            .get_or_init(|| std::sync::Arc::new(crate::schema::wrap(self.sanitized_schema())))
    }

    /// Whether a description of the schema writes `{HERMES_HOME}`, which
    /// definitions replace per profile.
    pub fn mentions_home(&self) -> bool {
        *self
            .cache
            .mentions_home
            .get_or_init(|| crate::schema::mentions_home(self.schema()))
    }

    /// The JSON Schema of its result, when the result type is a struct
    /// deriving `JsonSchema` (as it serializes, every subschema inlined),
    /// built once.
    pub fn output_schema(&self) -> Option<&Value> {
        self.cache.output.get_or_init(|| (self.output)()).as_ref()
    }

    /// `{name, description, parameters}`, as the model is sent it.
    ///
    /// `parameters` is read from the text the build step wrote when a
    /// registry over this entry's tables gave it one (deriving the schema
    /// costs a process's start-up more than reading it), else derived.
    /// Debug builds derive it anyway and compare: a text that differs (the
    /// tool changed since `cargo hermes gen`) is reported and not used.
    pub fn schema(&self) -> &Value {
        self.cache.schema.get_or_init(|| {
            let parameters = match self.cache.text.get() {
                Some(text) => self.read_parameters(text),
                None => (self.parameters)(),
            };
            serde_json::json!({
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            })
        })
    }

    /// `parameters` from the build step's `text`, unless it does not parse
    /// or (in debug builds) differs from the derived one.
    fn read_parameters(&self, text: &str) -> Value {
        let Ok(read) = serde_json::from_str::<Value>(text) else {
            tracing::warn!(
                target: "hermes::registry",
                "the generated schema of `{}` does not parse: run `cargo hermes gen`",
                self.name
            );
            return (self.parameters)();
        };
        if cfg!(debug_assertions) {
            let derived = (self.parameters)();
            if derived != read {
                tracing::warn!(
                    target: "hermes::registry",
                    "the generated schema of `{}` is stale (the tool changed since it was written): run `cargo hermes gen`",
                    self.name
                );
                return derived;
            }
        }
        read
    }
}

/// The entry `#[hermes_tool]` emits, beside its compile errors, for a
/// function it rejected: code that names the entry (the generated registry,
/// a `use tools::*`) still resolves, so the only errors shown are the real
/// ones. The crate does not build, so the entry is never dispatched; its
/// handler answers an error all the same.
#[doc(hidden)]
pub const fn rejected_entry(
    name: &'static str,
    source_file: &'static str,
    source_line: u32,
) -> ToolEntry {
    ToolEntry {
        name,
        toolset: "",
        description: "",
        emoji: "",
        requires_env: &[],
        max_result_chars: None,
        override_existing: false,
        check: None,
        effects: ToolEffects::UNDECLARED,
        params: &[],
        source_file,
        source_line,
        handler: Handler::Blocking(rejected_handler),
        direct: None,
        parameters: rejected_parameters,
        output: no_output,
        cache: EntryCache::new(),
    }
}

fn rejected_handler(_: ToolContext, _: Value) -> String {
    crate::error_json("this tool was rejected by #[hermes_tool] at compile time")
}

fn no_output() -> Option<Value> {
    None
}

fn rejected_parameters() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ToolEntry {
        rejected_entry("t", file!(), line!())
    }

    #[test]
    fn without_a_text_the_schema_is_derived() {
        let e = entry();
        assert_eq!(e.parameters(), &serde_json::json!({}));
        assert_eq!(e.derived_parameters(), serde_json::json!({}));
    }

    #[test]
    fn a_text_equal_to_the_derived_schema_is_read() {
        let e = entry();
        e.use_parameters_text("{ }");
        assert_eq!(e.parameters(), &serde_json::json!({}));
        assert_eq!(e.schema()["name"], "t");
    }

    #[test]
    fn a_text_that_does_not_parse_or_is_stale_is_not_used() {
        let e = entry();
        e.use_parameters_text("{not json");
        assert_eq!(e.parameters(), &serde_json::json!({}));
        // Tests are debug builds: the derived schema wins over a stale text.
        let e = entry();
        e.use_parameters_text(r#"{"type": "object"}"#);
        assert_eq!(e.parameters(), &serde_json::json!({}));
    }

    #[test]
    fn the_first_text_given_wins() {
        let e = entry();
        e.use_parameters_text("{}");
        e.use_parameters_text("{not json");
        assert_eq!(e.parameters(), &serde_json::json!({}));
    }
}
