//! The registry: the generated static tools, run-time (plugin / MCP) tools
//! beside them, toolsets, availability answers, hooks and dispatch settings.
//! `dispatch` itself lives in `dispatch.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arc_swap::ArcSwap;
use serde_json::Value;

use crate::availability::Availability;
use crate::blocking::{BlockingWork, DEFAULT_MAX_ABANDONED};
use crate::coerce::CoercionPlan;
use crate::definitions::DefinitionsState;
use crate::entry::{HandlerFuture, ToolEntry};
use crate::hooks::{
    ExecutionMiddleware, HookSet, PostCallHook, PreCallHook, RequestMiddleware, ResultTransformHook,
};
pub use crate::tables::{ComposeError, StaticPlans, StaticSchemas, StaticTables, StaticTools};
use crate::tool::{RegisterError, RuntimeTool, RuntimeToolSpec, ToolRef, ToolSource};
use crate::toolsets::{PluginChange, Toolsets};
use crate::ToolContext;

/// Default cap on a result, in characters, for tools without their own.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;
/// Default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// [`DispatchConfig::max_parallel_calls`] unless set.
pub const DEFAULT_MAX_PARALLEL_CALLS: usize = 8;
/// [`DispatchConfig::max_turn_chars`] unless set.
pub const DEFAULT_MAX_TURN_CHARS: usize = 200_000;

/// Tools the agent loop owns (the reference's four): dispatch never runs a
/// handler of the registry for them, registered or not; it answers through
/// the executor the agent set ([`Registry::set_agent_loop_executor`]), or
/// with `{"error": "NAME must be handled by the agent loop"}`. The one list:
/// `hermes_tools::install_agent_loop_executors` covers those of them the
/// registry holds.
pub const AGENT_LOOP_TOOLS: &[&str] = &["todo", "memory", "session_search", "delegate_task"];

/// An inline executor the agent registers for an agent-loop tool.
pub type AgentLoopExecutor = Arc<dyn Fn(ToolContext, Value) -> HandlerFuture + Send + Sync>;

/// Settings of the dispatch pipeline. New settings may be added: build one
/// from [`DispatchConfig::default`] and its `with_*` methods.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DispatchConfig {
    /// Results longer than this (in characters) are cut, unless the tool
    /// sets its own `max_result_chars`.
    pub default_max_result_chars: usize,
    /// A handler running longer is cancelled (a blocking one is abandoned).
    pub default_timeout: Duration,
    /// Per-tool timeouts, overriding the default.
    pub tool_timeouts: HashMap<String, Duration>,
    /// Blocking handlers that timed out and still run (their threads cannot
    /// be stopped) allowed at once; beyond it, blocking calls are refused
    /// until some finish. See [`crate::blocking`].
    pub max_abandoned_blocking: usize,
    /// Calls of one [`Registry::dispatch_batch`] running at once, at most
    /// (8, the reference's pool of tool workers).
    pub max_parallel_calls: usize,
    /// Characters of all the results of one batch together, at most; the
    /// longest beyond it are saved and previewed (200,000, the reference's
    /// per-turn budget). The profile's `tool_output.max_turn_chars` lowers it.
    pub max_turn_chars: usize,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            default_max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            default_timeout: DEFAULT_TIMEOUT,
            tool_timeouts: HashMap::new(),
            max_abandoned_blocking: DEFAULT_MAX_ABANDONED,
            max_parallel_calls: DEFAULT_MAX_PARALLEL_CALLS,
            max_turn_chars: DEFAULT_MAX_TURN_CHARS,
        }
    }
}

impl DispatchConfig {
    /// Sets [`DispatchConfig::default_max_result_chars`].
    pub fn with_default_max_result_chars(mut self, chars: usize) -> Self {
        self.default_max_result_chars = chars;
        self
    }

    /// Sets [`DispatchConfig::default_timeout`].
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Adds (or replaces) the timeout of one tool.
    pub fn with_tool_timeout(mut self, tool: impl Into<String>, timeout: Duration) -> Self {
        self.tool_timeouts.insert(tool.into(), timeout);
        self
    }

    /// Sets [`DispatchConfig::max_abandoned_blocking`].
    pub fn with_max_abandoned_blocking(mut self, max: usize) -> Self {
        self.max_abandoned_blocking = max;
        self
    }

    /// Sets [`DispatchConfig::max_parallel_calls`] (at least 1).
    pub fn with_max_parallel_calls(mut self, max: usize) -> Self {
        self.max_parallel_calls = max.max(1);
        self
    }

    /// Sets [`DispatchConfig::max_turn_chars`].
    pub fn with_max_turn_chars(mut self, chars: usize) -> Self {
        self.max_turn_chars = chars;
        self
    }
}

/// The toolset-table steps of registering `name` into `toolset`: out of
/// the toolset it `replaced` a tool of (when another), into its own.
fn toolset_changes<'a>(
    name: &'a str,
    toolset: &'a str,
    replaced: Option<&'a str>,
) -> impl Iterator<Item = PluginChange<'a>> {
    let leave = replaced
        .filter(|old| *old != toolset)
        .map(|old| PluginChange::Remove {
            toolset: old,
            tool: name,
        });
    leave.into_iter().chain(std::iter::once(PluginChange::Add {
        toolset,
        tool: name,
    }))
}

/// The tools an agent can call, their toolsets and availability answers.
/// Build one per process (`hermes_tools::registry()`) and share it.
pub struct Registry {
    /// The generated tables of every crate composed, in composition order
    /// (a later crate's `override` tool wins, so lookups go last to first).
    layers: Box<[&'static StaticTables]>,
    /// The one crate's `find_tool` when there is one crate: dispatch's
    /// lookup stays one call.
    find_static: Option<fn(&str) -> Option<&'static ToolEntry>>,
    toolsets: Toolsets,
    availability: Availability,
    definitions: Mutex<DefinitionsState>,
    /// Run-time tools: a snapshot readers load without locking; writers
    /// copy, modify and swap under `write_lock`.
    runtime: ArcSwap<HashMap<String, Arc<RuntimeTool>>>,
    /// Hooks, dispatch settings and agent-loop executors.
    dispatch: DispatchState,
    write_lock: Mutex<()>,
    blocking: BlockingWork,
    allow_plugin_overrides: AtomicBool,
    /// The one counter of changes that can alter definitions (tools,
    /// toolsets, overrides, cross-references, disclosure): the memo keys on it.
    generation: Arc<AtomicU64>,
    /// [`Busy`] bits: whether hooks, run-time tools or dispatch settings
    /// other than the defaults exist, read by dispatch with one atomic load
    /// (an `ArcSwap` load costs a fence).
    busy: AtomicU8,
}

/// What dispatch reads besides the tools: hooks and middleware, the
/// dispatch settings and the agent-loop executors. Readers load snapshots
/// without locking; the registry replaces them under its `write_lock`.
pub(crate) struct DispatchState {
    hooks: ArcSwap<HookSet>,
    config: ArcSwap<DispatchConfig>,
    agent_loop: ArcSwap<HashMap<String, AgentLoopExecutor>>,
}

impl DispatchState {
    fn new() -> Self {
        DispatchState {
            hooks: ArcSwap::from_pointee(HookSet::default()),
            config: ArcSwap::from_pointee(DispatchConfig::default()),
            agent_loop: ArcSwap::from_pointee(HashMap::new()),
        }
    }

    /// The hooks and middleware now registered.
    #[inline]
    pub(crate) fn hooks(&self) -> Arc<HookSet> {
        self.hooks.load_full()
    }

    /// The dispatch settings now in force.
    #[inline]
    pub(crate) fn config(&self) -> arc_swap::Guard<Arc<DispatchConfig>> {
        self.config.load()
    }

    /// The executor the agent set for the agent-loop tool `name`.
    pub(crate) fn agent_loop_executor(&self, name: &str) -> Option<AgentLoopExecutor> {
        self.agent_loop.load().get(name).cloned()
    }
}

/// Bits of `Registry::busy`.
#[derive(Clone, Copy)]
enum Busy {
    Hooks = 1,
    RuntimeTools = 2,
    Configured = 4,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field(
                "crates",
                &self.layers.iter().map(|t| t.krate).collect::<Vec<_>>(),
            )
            .field("static_tools", &self.builtin_entries().len())
            .field("runtime_tools", &self.runtime.load().len())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry over the generated tables of one crate
    /// (`hermes_tools::generated::TABLES`).
    pub fn new(tables: &'static StaticTables) -> Self {
        Registry::with_availability(tables, Availability::default())
    }

    /// The same, with availability answered on a given clock (tests).
    pub fn with_availability(tables: &'static StaticTables, availability: Availability) -> Self {
        Registry::build(Box::new([tables]), availability)
    }

    /// One registry over the generated tables of several tools crates (the
    /// built-ins, your own, a third party's), in order:
    /// `Registry::compose(&[&hermes_tools::TABLES, &my_agent::TABLES])`.
    ///
    /// A tool name defined by two crates is refused, naming both crates and
    /// files, unless the later definition says `#[hermes_tool(override)]`:
    /// then it replaces the earlier one. Toolsets of the same name are one
    /// toolset (a tool of a later crate whose attribute names `file` joins
    /// the built-in `file`); the core list, the webhook-safe list and the
    /// platform bundles are the unions of the crates'.
    pub fn compose(tables: &[&'static StaticTables]) -> Result<Self, ComposeError> {
        Registry::compose_with_availability(tables, Availability::default())
    }

    /// [`Registry::compose`], with availability answered on a given clock.
    pub fn compose_with_availability(
        tables: &[&'static StaticTables],
        availability: Availability,
    ) -> Result<Self, ComposeError> {
        if tables.is_empty() {
            return Err(ComposeError::Empty);
        }
        crate::tables::check_names(tables)?;
        Ok(Registry::build(tables.into(), availability))
    }

    fn build(layers: Box<[&'static StaticTables]>, availability: Availability) -> Self {
        for tables in &layers {
            tables.use_schema_texts();
        }
        let generation = Arc::new(AtomicU64::new(0));
        let toolset_tables: Vec<&'static crate::tables::StaticTable> =
            layers.iter().map(|t| t.toolsets).collect();
        let table = crate::tables::compose_toolsets(&toolset_tables);
        let find_static = match &*layers {
            [one] => Some(one.find_tool),
            _ => None,
        };
        Registry {
            layers,
            find_static,
            toolsets: Toolsets::with_generation(table, generation.clone()),
            availability,
            definitions: Mutex::new(DefinitionsState::default()),
            runtime: ArcSwap::from_pointee(HashMap::new()),
            dispatch: DispatchState::new(),
            write_lock: Mutex::new(()),
            blocking: BlockingWork::default(),
            allow_plugin_overrides: AtomicBool::new(false),
            generation,
            busy: AtomicU8::new(0),
        }
    }

    /// The crates composed into this registry, in order (`CARGO_PKG_NAME`s).
    pub fn crates(&self) -> Vec<&'static str> {
        self.layers.iter().map(|t| t.krate).collect()
    }

    /// Hooks, dispatch settings and agent-loop executors, for dispatch.
    #[inline]
    pub(crate) fn dispatch_state(&self) -> &DispatchState {
        &self.dispatch
    }

    /// The coercion plans of the crate that defines the built-in `name`.
    pub(crate) fn plans_for(&self, name: &str) -> &'static StaticPlans {
        match &*self.layers {
            [one] => one.plans,
            layers => {
                layers
                    .iter()
                    .rev()
                    .find(|t| (t.find_tool)(name).is_some())
                    .unwrap_or(&layers[0])
                    .plans
            }
        }
    }

    fn writer(&self) -> MutexGuard<'_, ()> {
        self.write_lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_busy(&self, bit: Busy, on: bool) {
        if on {
            self.busy.fetch_or(bit as u8, Ordering::AcqRel);
        } else {
            self.busy.fetch_and(!(bit as u8), Ordering::AcqRel);
        }
    }

    /// No hook, no middleware and no run-time tool is registered.
    pub(crate) fn is_plain(&self) -> bool {
        let busy = Busy::Hooks as u8 | Busy::RuntimeTools as u8;
        self.busy.load(Ordering::Acquire) & busy == 0
    }

    /// No hook or middleware is registered.
    pub(crate) fn has_no_hooks(&self) -> bool {
        self.busy.load(Ordering::Acquire) & Busy::Hooks as u8 == 0
    }

    /// The dispatch settings are the defaults.
    pub(crate) fn default_config(&self) -> bool {
        self.busy.load(Ordering::Acquire) & Busy::Configured as u8 == 0
    }

    /// Publishes a new run-time tool map (under `write_lock`).
    fn store_runtime(&self, next: HashMap<String, Arc<RuntimeTool>>) {
        self.set_busy(Busy::RuntimeTools, !next.is_empty());
        self.runtime.store(Arc::new(next));
    }

    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Every change that can alter definitions (hooks aside): the memo keys on it.
    pub(crate) fn tools_generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The operator's opt-in: plugins may then replace built-in tools (with `override`).
    pub fn allow_plugin_overrides(&self, allow: bool) {
        self.allow_plugin_overrides.store(allow, Ordering::Release);
    }

    /// Registers a run-time tool beside the static ones: same dispatch, same
    /// coercion (its plan is compiled now), same definitions. Shadowing
    /// rules: a name held by another toolset is refused unless `override`;
    /// two `mcp-*` toolsets may replace each other (server refresh); a plugin
    /// replacing a built-in tool also needs [`Registry::allow_plugin_overrides`].
    pub fn register_tool(&self, spec: RuntimeToolSpec) -> Result<(), RegisterError> {
        let _w = self.writer();
        let mut next = (**self.runtime.load()).clone();
        let (name, toolset, replaced) = self.insert_checked(&mut next, spec)?;
        self.store_runtime(next);
        self.sync_toolsets(&name, &toolset, replaced.as_deref());
        self.bump();
        Ok(())
    }

    /// Checks the shadowing rules and inserts into `map` (a copy). Returns
    /// the name, the toolset and the toolset of a replaced tool.
    fn insert_checked(
        &self,
        map: &mut HashMap<String, Arc<RuntimeTool>>,
        spec: RuntimeToolSpec,
    ) -> Result<(String, String, Option<String>), RegisterError> {
        if !hermes_tool_facts::is_valid_tool_name(&spec.name) {
            return Err(RegisterError::InvalidName(spec.name));
        }
        let existing = map
            .get(&spec.name)
            .map(|t| (t.spec.toolset.clone(), false))
            .or_else(|| {
                self.builtin(&spec.name)
                    .map(|e| (e.toolset.to_string(), true))
            });
        let mut replaced = None;
        if let Some((existing_toolset, is_builtin)) = existing {
            let both_mcp = existing_toolset.starts_with("mcp-") && spec.toolset.starts_with("mcp-");
            if existing_toolset != spec.toolset && !both_mcp && !spec.override_existing {
                return Err(RegisterError::Shadowing {
                    name: spec.name,
                    existing_toolset,
                    toolset: spec.toolset,
                });
            }
            if is_builtin
                && spec.source == ToolSource::Plugin
                && !self.allow_plugin_overrides.load(Ordering::Acquire)
            {
                return Err(RegisterError::BuiltinOverrideNotAllowed { name: spec.name });
            }
            replaced = Some(existing_toolset);
        }
        // Built by hand: `json!` would copy the parameters by serializing
        // them, and sanitizing a copy of the whole schema copies them again.
        let definition_of = |parameters: Value| {
            let mut m = serde_json::Map::with_capacity(3);
            m.insert("name".into(), Value::String(spec.name.clone()));
            m.insert(
                "description".into(),
                Value::String(spec.description.clone()),
            );
            m.insert("parameters".into(), parameters);
            Value::Object(m)
        };
        let schema = definition_of(spec.parameters.clone());
        let plan = CoercionPlan::compile(&spec.parameters);
        let sanitized = definition_of(crate::dialect::sanitize_for_strict_backends(
            &spec.parameters,
        ));
        let definition = Arc::new(crate::schema::wrap(&sanitized));
        let name = spec.name.clone();
        let toolset = spec.toolset.clone();
        map.insert(
            name.clone(),
            Arc::new(RuntimeTool {
                mentions_home: crate::schema::mentions_home(&schema),
                spec,
                schema,
                plan,
                sanitized,
                definition,
            }),
        );
        Ok((name, toolset, replaced))
    }

    fn sync_toolsets(&self, name: &str, toolset: &str, replaced: Option<&str>) {
        self.toolsets
            .apply_plugin_changes(toolset_changes(name, toolset, replaced));
    }

    /// Removes a run-time tool registered by `toolset` (an `mcp-*` toolset
    /// may remove another `mcp-*` toolset's tool). Removing the last tool of
    /// a toolset drops that toolset and its aliases.
    pub fn deregister_tool(&self, name: &str, toolset: &str) -> Result<(), RegisterError> {
        let _w = self.writer();
        let current = self.runtime.load_full();
        let Some(tool) = current.get(name) else {
            return Err(RegisterError::NotRegistered(name.to_string()));
        };
        let owner = tool.spec.toolset.clone();
        let both_mcp = owner.starts_with("mcp-") && toolset.starts_with("mcp-");
        if owner != toolset && !both_mcp {
            return Err(RegisterError::WrongToolset {
                name: name.to_string(),
                toolset: owner,
                requested: toolset.to_string(),
            });
        }
        let mut next = (*current).clone();
        next.remove(name);
        self.store_runtime(next);
        self.toolsets.remove_plugin_tool(&owner, name);
        // A built-in tool that was overridden is exposed again by its own toolset.
        self.bump();
        Ok(())
    }

    /// Replaces all tools of one toolset at once (an MCP server refresh):
    /// dispatch sees the old set or the new one, never a mix. Specs that
    /// break a shadowing rule are skipped and reported.
    pub fn replace_toolset_tools(
        &self,
        toolset: &str,
        specs: Vec<RuntimeToolSpec>,
    ) -> Vec<RegisterError> {
        let _w = self.writer();
        let mut next = (**self.runtime.load()).clone();
        let old: Vec<String> = next
            .values()
            .filter(|t| t.spec.toolset == toolset)
            .map(|t| t.spec.name.clone())
            .collect();
        for name in &old {
            next.remove(name);
        }
        let mut errors = Vec::new();
        let mut added = Vec::new();
        for spec in specs {
            match self.insert_checked(&mut next, spec) {
                Ok(done) => added.push(done),
                Err(e) => errors.push(e),
            }
        }
        self.store_runtime(next);
        // The toolset table follows in one step: the old names not listed
        // again leave, then each new one joins (leaving the toolset it
        // replaced a tool of).
        let kept: std::collections::HashSet<&str> =
            added.iter().map(|(n, _, _)| n.as_str()).collect();
        let gone = old
            .iter()
            .filter(|name| !kept.contains(name.as_str()))
            .map(|name| PluginChange::Remove {
                toolset,
                tool: name,
            });
        let joined = added
            .iter()
            .flat_map(|(name, set, replaced)| toolset_changes(name, set, replaced.as_deref()));
        self.toolsets.apply_plugin_changes(gone.chain(joined));
        self.bump();
        errors
    }

    /// The tool `name`, built-in or run-time (a run-time override wins).
    pub fn tool(&self, name: &str) -> Option<ToolRef> {
        let runtime = self.runtime.load();
        if !runtime.is_empty() {
            if let Some(t) = runtime.get(name) {
                return Some(ToolRef::Runtime(t.clone()));
            }
        }
        self.builtin(name).map(ToolRef::Static)
    }

    /// Every tool, built-in and run-time, sorted by name.
    pub fn tools(&self) -> Vec<ToolRef> {
        let runtime = self.runtime.load();
        let mut tools: Vec<ToolRef> = runtime.values().cloned().map(ToolRef::Runtime).collect();
        tools.extend(
            self.builtin_entries()
                .into_iter()
                .filter(|e| !runtime.contains_key(e.name))
                .map(ToolRef::Static),
        );
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        tools
    }

    /// Every tool name, built-in and run-time, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools().iter().map(|t| t.name().to_string()).collect()
    }

    pub fn add_pre_call_hook(&self, hook: Arc<dyn PreCallHook>) {
        self.edit_hooks(|h| h.pre.push(hook));
    }

    pub fn add_post_call_hook(&self, hook: Arc<dyn PostCallHook>) {
        self.edit_hooks(|h| h.post.push(hook));
    }

    pub fn add_result_transform(&self, hook: Arc<dyn ResultTransformHook>) {
        self.edit_hooks(|h| h.transform.push(hook));
    }

    pub fn add_request_middleware(&self, m: Arc<dyn RequestMiddleware>) {
        self.edit_hooks(|h| h.request.push(m));
    }

    pub fn add_execution_middleware(&self, m: Arc<dyn ExecutionMiddleware>) {
        self.edit_hooks(|h| h.execution.push(m));
    }

    /// Removes every hook and middleware.
    pub fn clear_hooks(&self) {
        self.edit_hooks(|h| *h = HookSet::default());
    }

    fn edit_hooks(&self, f: impl FnOnce(&mut HookSet)) {
        let _w = self.writer();
        let mut next = (**self.dispatch.hooks.load()).clone();
        f(&mut next);
        self.set_busy(Busy::Hooks, !next.is_empty());
        self.dispatch.hooks.store(Arc::new(next));
    }

    /// Replaces the dispatch settings.
    pub fn set_dispatch_config(&self, config: DispatchConfig) {
        let _w = self.writer();
        // The limit is read by the blocking runner itself, not through `config`.
        self.blocking.set_limit(config.max_abandoned_blocking);
        // Every setting dispatch (or a batch) reads through `config`.
        let default = config.default_max_result_chars == DEFAULT_MAX_RESULT_CHARS
            && config.default_timeout == DEFAULT_TIMEOUT
            && config.tool_timeouts.is_empty()
            && config.max_parallel_calls == DEFAULT_MAX_PARALLEL_CALLS
            && config.max_turn_chars == DEFAULT_MAX_TURN_CHARS;
        // Bit last when leaving the defaults, first when returning to them:
        // a reader that sees the bit clear never misses a setting.
        if default {
            self.dispatch.config.store(Arc::new(config));
            self.set_busy(Busy::Configured, false);
        } else {
            self.set_busy(Busy::Configured, true);
            self.dispatch.config.store(Arc::new(config));
        }
    }

    /// The blocking handlers of this registry's calls: how many were
    /// abandoned by their call and still run. Agent-loop executors of
    /// blocking tools run through it too.
    pub fn blocking_work(&self) -> &BlockingWork {
        &self.blocking
    }

    pub fn dispatch_config(&self) -> DispatchConfig {
        (**self.dispatch.config.load()).clone()
    }

    /// Lets the agent answer an agent-loop tool (`todo`, `memory`, …) inline.
    pub fn set_agent_loop_executor(&self, tool: &str, executor: AgentLoopExecutor) {
        let _w = self.writer();
        let mut next = (**self.dispatch.agent_loop.load()).clone();
        next.insert(tool.to_string(), executor);
        self.dispatch.agent_loop.store(Arc::new(next));
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

    /// The built-in (static) tool `name`; a run-time tool of that name,
    /// even one overriding it, is not seen (see [`Registry::tool`]).
    #[inline]
    pub fn builtin(&self, name: &str) -> Option<&'static ToolEntry> {
        match self.find_static {
            Some(find) => find(name),
            // Last to first: an `override` of a later crate wins.
            None => self.layers.iter().rev().find_map(|t| (t.find_tool)(name)),
        }
    }

    /// Every built-in (static) tool, sorted by name; run-time tools are not
    /// seen (see [`Registry::tools`]).
    pub fn builtin_entries(&self) -> Vec<&'static ToolEntry> {
        let mut entries: Vec<&'static ToolEntry> = Vec::new();
        for (i, t) in self.layers.iter().enumerate() {
            // A name a later crate overrides is that crate's.
            let overridden = |name: &str| {
                self.layers[i + 1..]
                    .iter()
                    .any(|l| (l.find_tool)(name).is_some())
            };
            entries.extend(t.tools.values().copied().filter(|e| !overridden(e.name)));
        }
        entries.sort_unstable_by_key(|e| e.name);
        entries
    }

    /// `{name: parameters}` for every tool, derived from the Rust types
    /// ([`ToolEntry::derived_parameters`]): what the build step compiles
    /// coercion plans from and writes the schemas' text from.
    pub fn parameters_by_name(&self) -> Value {
        Value::Object(
            self.builtin_entries()
                .into_iter()
                .map(|e| (e.name.to_string(), e.derived_parameters()))
                .collect(),
        )
    }
}
