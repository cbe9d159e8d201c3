//! The tool definitions the model is sent, and the availability report.
//!
//! `get_tool_definitions(enabled, disabled, profile)` (BEHAVIOUR.md §5):
//! 1. `enabled` absent → every toolset; else each valid toolset name
//!    resolves, a legacy name maps to its tool list, an unknown name is
//!    reported in [`Definitions::unknown`];
//! 2. `disabled` is subtracted last; for a `hermes-*` bundle or a posture
//!    toolset only its non-core tools are subtracted;
//! 3. tools that do not exist or fail their availability check are dropped
//!    (a check shared by several tools runs once per pass); the rest are
//!    sorted by name and wrapped `{"type": "function", "function": …}`;
//!    dynamic schema overrides are merged shallowly over the static schema;
//! 4. cross-references are appended to a description only when the tool
//!    they mention survived;
//! 5. schemas are sanitized for strict backends (no `$ref`, no bare object
//!    without `properties`); `{HERMES_HOME}` in any description becomes the
//!    profile's display home ([`Profile::display_home`]);
//! 7. results are memoised: at most 8 entries keyed by the inputs, the
//!    profile and the registry generation, oldest evicted, each reused for
//!    at most the availability TTL. Callers get an `Arc` they cannot mutate
//!    in place; `Definitions::to_vec` gives them their own copy. Each tool's
//!    ready definition is built once and shared (an `Arc`), so an uncached
//!    pass copies no schema unless an override or cross-reference applies.

mod state;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::availability::{CheckPass, CHECK_TTL};
use crate::config::{ProfileConfig, RECHECK};
use crate::dialect::sanitize_for_strict_backends;
use crate::disclosure::{bridge_definitions, estimate_tokens, for_profile, DisclosureConfig};
use crate::schema::{mentions_home, show_home, wrap_owned};
use crate::{Profile, Registry};

/// What descriptions write for the profile's home (`cargo xtask check-tools`
/// refuses literal home paths); definitions show the profile's display home.
pub use hermes_tool_facts::HOME_PLACEHOLDER;

pub(crate) use state::DefinitionsState;
pub use state::{Definitions, SchemaOverride};

use state::{CacheKey, Memo};

/// How many definition sets are memoised.
pub const DEFINITIONS_CACHE_SIZE: usize = 8;

/// One toolset none of whose tools is exposable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UnavailableToolset {
    pub name: String,
    /// The secrets its tools need (`requires_env`), sorted.
    pub env_vars: Vec<String>,
    pub tools: Vec<String>,
}

/// [`Registry::check_tool_availability`]'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AvailabilityReport {
    /// Toolsets with at least one exposable tool, sorted.
    pub available: Vec<String>,
    pub unavailable: Vec<UnavailableToolset>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    /// Registers a dynamic schema override for `tool` (replacing any other).
    pub fn set_schema_override(&self, tool: &str, f: SchemaOverride) {
        let mut state = lock(self.definitions_state());
        state.overrides.insert(tool.to_string(), f);
        self.bump();
    }

    /// Appends `sentence` to `tool`'s description whenever `mentions`
    /// survives filtering too. Descriptions themselves never name tools of
    /// other toolsets (`cargo xtask check-tools`); this is how they refer to one.
    pub fn add_cross_reference(&self, tool: &str, mentions: &str, sentence: &str) {
        let mut state = lock(self.definitions_state());
        state
            .cross_refs
            .entry(tool.to_string())
            .or_default()
            .push((mentions.to_string(), sentence.to_string()));
        self.bump();
    }

    /// Turns progressive disclosure on (`Some`) or off.
    pub fn set_progressive_disclosure(&self, config: Option<DisclosureConfig>) {
        let mut state = lock(self.definitions_state());
        state.disclosure = config;
        self.bump();
    }

    /// A counter bumped by every change that can alter definitions.
    pub fn generation(&self) -> u64 {
        self.tools_generation()
    }

    /// The definitions for a session: see the module docs for every step.
    pub fn get_tool_definitions(
        &self,
        enabled: Option<&[&str]>,
        disabled: &[&str],
        profile: &Profile,
    ) -> Definitions {
        let key = CacheKey {
            enabled: enabled.map(|e| e.iter().map(|s| s.to_string()).collect()),
            disabled: disabled.iter().map(|s| s.to_string()).collect(),
            profile: profile.home().to_path_buf(),
            generation: self.generation(),
        };
        let now = self.availability().now();
        // A hit is served as is while its configuration was confirmed within
        // `RECHECK`; past that, a look at the configuration (its stamp
        // changes when `config.yaml` or `.env` did) renews it or rebuilds.
        // A lookup therefore makes no system call, and an edited file is
        // seen within twice `RECHECK`.
        let config_load = {
            let mut state = lock(self.definitions_state());
            let hit = state
                .cache
                .iter_mut()
                .find(|m| m.key == key && now.saturating_duration_since(m.built) < CHECK_TTL);
            match hit {
                Some(memo) if now.saturating_duration_since(memo.config_seen) < RECHECK => {
                    return memo.defs.clone();
                }
                Some(memo) => Some(memo.config),
                None => None,
            }
        };
        let config = crate::config::cached(profile, RECHECK);
        if config_load == Some(config.stamp) {
            let mut state = lock(self.definitions_state());
            if let Some(memo) = state.cache.iter_mut().find(|m| m.key == key) {
                memo.config_seen = now;
                return memo.defs.clone();
            }
        }
        let defs = self.build_definitions(enabled, disabled, profile, &config);
        let mut state = lock(self.definitions_state());
        state.cache.retain(|m| m.key != key);
        if state.cache.len() >= DEFINITIONS_CACHE_SIZE {
            state.cache.pop_front();
        }
        state.cache.push_back(Memo {
            key,
            built: now,
            config: config.stamp,
            config_seen: now,
            defs: defs.clone(),
        });
        defs
    }

    /// Forgets memoised definitions (availability answers have their own
    /// [`Availability::invalidate`](crate::availability::Availability::invalidate)).
    pub fn invalidate_definitions(&self) {
        lock(self.definitions_state()).cache.clear();
    }

    /// Whether `name` may be enabled: a toolset, an alias, `all` / `*`, or a
    /// legacy name. Any other name is one [`Definitions::unknown`] reports
    /// (and `serve` refuses).
    pub fn knows_toolset(&self, name: &str) -> bool {
        let toolsets = self.toolsets();
        toolsets.validate_toolset(name) || toolsets.legacy_tools(name).is_some()
    }

    /// Steps 1–2: the names of the tools a session is offered, before checks.
    pub fn selected_tools(
        &self,
        enabled: Option<&[&str]>,
        disabled: &[&str],
    ) -> (BTreeSet<String>, Vec<String>) {
        let toolsets = self.toolsets();
        let mut unknown = Vec::new();
        let mut selected: BTreeSet<String> = match enabled {
            None => toolsets.resolve_toolset("all").into_iter().collect(),
            Some(names) => {
                let mut set = BTreeSet::new();
                for name in names {
                    if !self.knows_toolset(name) {
                        unknown.push(name.to_string());
                        continue;
                    }
                    // A toolset of a legacy name's spelling wins over it.
                    match toolsets.legacy_tools(name) {
                        Some(tools) if !toolsets.validate_toolset(name) => {
                            set.extend(tools.iter().map(|t| t.to_string()));
                        }
                        _ => set.extend(toolsets.resolve_toolset(name)),
                    }
                }
                set
            }
        };
        for name in disabled {
            let remove: Vec<String> =
                if name.starts_with(crate::toolsets::BUNDLE_PREFIX) || toolsets.is_posture(name) {
                    toolsets.bundle_non_core_tools(name)
                } else if let Some(tools) = toolsets.legacy_tools(name) {
                    tools.iter().map(|t| t.to_string()).collect()
                } else {
                    toolsets.resolve_toolset(name)
                };
            for tool in remove {
                selected.remove(&tool);
            }
        }
        (selected, unknown)
    }

    fn build_definitions(
        &self,
        enabled: Option<&[&str]>,
        disabled: &[&str],
        profile: &Profile,
        config: &ProfileConfig,
    ) -> Definitions {
        let (selected, unknown) = self.selected_tools(enabled, disabled);
        let mut pass = self.availability().pass(profile);
        let survivors: Vec<_> = selected
            .iter()
            .filter_map(|name| self.tool(name))
            .filter(|tool| pass.is_available(tool.check()))
            .collect();
        let names: BTreeSet<&str> = survivors.iter().map(|t| t.name()).collect();

        let (overrides, cross_refs, disclosure) = {
            let state = lock(self.definitions_state());
            (
                state.overrides.clone(),
                state.cross_refs.clone(),
                state.disclosure,
            )
        };
        let disclosure = for_profile(disclosure, &config.tool_search);
        // Read once per pass, and only when a description needs it.
        let display_home = std::cell::OnceCell::new();
        let tools: Vec<Arc<Value>> = survivors
            .iter()
            .map(|entry| {
                let refs: Vec<&str> = cross_refs
                    .get(entry.name())
                    .map(|refs| {
                        refs.iter()
                            .filter(|(other, _)| names.contains(other.as_str()))
                            .map(|(_, sentence)| sentence.as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                let f = overrides.get(entry.name());
                if f.is_none() && refs.is_empty() && !entry.mentions_home() {
                    // Nothing session-specific: the shared, ready definition.
                    return entry.definition();
                }
                let mut schema = match entry.sanitized_schema() {
                    Value::Object(map) => map.clone(),
                    _ => Map::new(),
                };
                if let Some(f) = f {
                    let fields =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(profile)));
                    if let Ok(Some(fields)) = fields {
                        let new_parameters = fields.contains_key("parameters");
                        schema.extend(fields);
                        if new_parameters {
                            if let Some(params) = schema.get("parameters") {
                                let clean = sanitize_for_strict_backends(params);
                                schema.insert("parameters".into(), clean);
                            }
                        }
                    }
                }
                if !refs.is_empty() {
                    let base = schema
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .trim_end()
                        .to_string();
                    schema.insert(
                        "description".into(),
                        Value::String(format!("{base} {}", refs.join(" "))),
                    );
                }
                schema.insert("name".into(), Value::String(entry.name().to_string()));
                let mut schema = Value::Object(schema);
                if mentions_home(&schema) {
                    show_home(
                        &mut schema,
                        display_home.get_or_init(|| profile.display_home()),
                    );
                }
                Arc::new(wrap_owned(schema))
            })
            .collect();
        let (tools, deferred) = match disclosure {
            Some(config) => self.defer(tools, config),
            None => (tools, Vec::new()),
        };
        Definitions {
            tools: Arc::new(tools),
            unknown,
            deferred,
        }
    }

    /// Step 6: replaces deferrable (non-core) definitions by the bridge
    /// tools when they exceed the configured share of the context window.
    fn defer(
        &self,
        tools: Vec<Arc<Value>>,
        config: DisclosureConfig,
    ) -> (Vec<Arc<Value>>, Vec<String>) {
        let name_of = |t: &Arc<Value>| t["function"]["name"].as_str().unwrap_or("").to_string();
        let (deferrable, core): (Vec<Arc<Value>>, Vec<Arc<Value>>) = tools
            .into_iter()
            .partition(|t| !self.toolsets().is_core(&name_of(t)));
        let tokens: usize = deferrable.iter().map(|t| estimate_tokens(t)).sum();
        let budget = (config.context_window_tokens as f64 * config.max_share) as usize;
        if deferrable.is_empty() || tokens <= budget {
            let mut all = core;
            all.extend(deferrable);
            all.sort_by_key(name_of);
            return (all, Vec::new());
        }
        let deferred: Vec<String> = deferrable.iter().map(name_of).collect();
        let mut all = core;
        all.extend(bridge_definitions().into_iter().map(Arc::new));
        all.sort_by_key(name_of);
        (all, deferred)
    }

    /// Which toolsets have at least one exposable tool for `profile`, and
    /// for the others what they would need.
    pub fn check_tool_availability(&self, profile: &Profile) -> AvailabilityReport {
        let mut pass = self.availability().pass(profile);
        let mut report = AvailabilityReport {
            available: Vec::new(),
            unavailable: Vec::new(),
        };
        for name in self.toolsets().toolset_names() {
            let tools = self.toolsets().resolve_toolset(&name);
            let exposable = tools.iter().any(|t| self.is_exposable(t, &mut pass));
            if exposable {
                report.available.push(name);
            } else {
                let env_vars: BTreeSet<String> = tools
                    .iter()
                    .filter_map(|t| self.tool(t))
                    .flat_map(|t| {
                        t.requires_env()
                            .into_iter()
                            .map(str::to_string)
                            .collect::<Vec<_>>()
                    })
                    .collect();
                report.unavailable.push(UnavailableToolset {
                    name,
                    env_vars: env_vars.into_iter().collect(),
                    tools,
                });
            }
        }
        report
    }

    fn is_exposable(&self, tool: &str, pass: &mut CheckPass<'_>) -> bool {
        self.tool(tool)
            .is_some_and(|t| pass.is_available(t.check()))
    }
}
