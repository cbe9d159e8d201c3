//! Run-time toolset API: the static table emitted at build time plus run-time additions.
//!
//! [`Toolsets`] answers the questions the rest of the agent asks about toolsets
//! (resolve names to tools, validate names, describe a toolset, the core and
//! webhook-safe lists) with the semantics of the reference implementation:
//!
//! * resolution is recursive with a visited set, so a cycle or a diamond
//!   contributes nothing the second time; the result is sorted and deduplicated;
//! * `all` and `*` stand for every toolset; an unknown name resolves to nothing;
//! * toolsets come from the static table, from [`Toolsets::create_custom_toolset`]
//!   (which replaces a static toolset of the same name), and from tools that
//!   plugins / MCP servers registered at run time
//!   ([`Toolsets::register_plugin_tool`]): such tools join the static or custom
//!   toolset of that name, or make a plugin-only toolset exist;
//! * aliases (static, or registered at run time) stand for their target toolset;
//! * a plugin platform ([`Toolsets::register_plugin_platform`]) gets an implicit
//!   `hermes-<platform>` bundle = core + the tools registered into `<platform>`.
//!
//! Run-time state sits behind an [`RwLock`]; a poisoned lock is recovered, never
//! a panic. Every mutation bumps [`Toolsets::generation`], so caches can key on it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The prefix of platform bundles (`hermes-cli`, `hermes-discord`, …):
/// shared with the build step.
pub(crate) use hermes_tool_facts::BUNDLE_PREFIX;

use hermes_tool_facts::is_all_toolsets as is_all;

/// The static toolset table types (their home is `tables.rs`; generated
/// code names them through `__private`).
use crate::tables::{StaticTable, StaticToolset};

/// What [`Toolsets::get_toolset_info`] reports about one toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsetInfo {
    /// The name asked about (an alias stays the alias).
    pub name: String,
    /// Description.
    pub description: String,
    /// Direct tools (including run-time plugin tools), sorted and deduplicated.
    pub direct_tools: Vec<String>,
    /// Included toolsets, in declaration order.
    pub includes: Vec<String>,
    /// Every tool the toolset resolves to, sorted and deduplicated.
    pub resolved_tools: Vec<String>,
    /// `resolved_tools.len()`.
    pub tool_count: usize,
    /// Whether the toolset includes other toolsets.
    pub is_composite: bool,
    /// Whether the toolset is instructional (skills, prompts, playbooks).
    pub instructional: bool,
    /// Whether the toolset is a posture toolset.
    pub posture: bool,
}

/// A toolset created at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CustomToolset {
    description: String,
    tools: Vec<String>,
    includes: Vec<String>,
}

/// Everything that can change after start-up.
#[derive(Debug, Default)]
struct Runtime {
    custom: BTreeMap<String, CustomToolset>,
    /// toolset → tools registered into it at run time (never empty sets).
    plugin: BTreeMap<String, BTreeSet<String>>,
    /// alias → canonical toolset, registered at run time.
    aliases: BTreeMap<String, String>,
    /// Plugin platforms that get an implicit `hermes-<platform>` bundle.
    platforms: BTreeSet<String>,
}

impl Runtime {
    fn add_plugin_tool(&mut self, toolset: &str, tool: &str) -> bool {
        match self.plugin.get_mut(toolset) {
            Some(tools) => tools.insert(tool.to_owned()),
            None => {
                self.plugin
                    .insert(toolset.to_owned(), BTreeSet::from([tool.to_owned()]));
                true
            }
        }
    }

    /// When the toolset's last run-time tool goes, the toolset and the
    /// run-time aliases pointing at it go too.
    fn drop_plugin_tool(&mut self, toolset: &str, tool: &str) -> bool {
        let Some(tools) = self.plugin.get_mut(toolset) else {
            return false;
        };
        if !tools.remove(tool) {
            return false;
        }
        if tools.is_empty() {
            self.plugin.remove(toolset);
            self.aliases.retain(|_, target| target != toolset);
        }
        true
    }
}

/// One step of [`Toolsets::apply_plugin_changes`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum PluginChange<'a> {
    Add { toolset: &'a str, tool: &'a str },
    Remove { toolset: &'a str, tool: &'a str },
}

/// One toolset definition as seen through the static table and run-time state.
#[derive(Debug, Clone, Default)]
struct Def {
    description: String,
    tools: BTreeSet<String>,
    includes: Vec<String>,
    instructional: bool,
    posture: bool,
    stateless: bool,
}

/// The toolsets of one agent process: a static table plus run-time additions.
#[derive(Debug)]
pub struct Toolsets {
    table: StaticTable,
    by_name: BTreeMap<&'static str, &'static StaticToolset>,
    static_aliases: BTreeMap<&'static str, &'static str>,
    runtime: RwLock<Runtime>,
    /// Shared with the registry that owns these toolsets: one counter for
    /// every change the definitions memo keys on.
    generation: Arc<AtomicU64>,
}

impl Toolsets {
    /// Builds the run-time view over a static table. When a name occurs twice
    /// in the table, the first entry wins (the build-time check rejects that).
    pub fn new(table: StaticTable) -> Self {
        Self::with_generation(table, Arc::default())
    }

    /// [`Toolsets::new`], bumping `generation` on every mutation (the
    /// registry's counter, which other changes bump too).
    pub fn with_generation(table: StaticTable, generation: Arc<AtomicU64>) -> Self {
        let mut by_name = BTreeMap::new();
        for t in table.toolsets {
            by_name.entry(t.name).or_insert(t);
        }
        let mut static_aliases = BTreeMap::new();
        for a in table.aliases {
            static_aliases.entry(a.alias).or_insert(a.target);
        }
        Self {
            table,
            by_name,
            static_aliases,
            runtime: RwLock::new(Runtime::default()),
            generation,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Runtime> {
        self.runtime.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Runtime> {
        self.runtime.write().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// A counter bumped by every mutation of the run-time state (and, for
    /// a registry's toolsets, by every other change of the registry).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    // -- lookups ------------------------------------------------------------

    /// A static or custom toolset of exactly this name (custom wins), with
    /// run-time plugin tools merged in.
    fn declared(&self, rt: &Runtime, name: &str) -> Option<Def> {
        let mut def = if let Some(c) = rt.custom.get(name) {
            Def {
                description: c.description.clone(),
                tools: c.tools.iter().cloned().collect(),
                includes: c.includes.clone(),
                instructional: false,
                posture: false,
                stateless: false,
            }
        } else {
            let s = self.by_name.get(name)?;
            Def {
                description: s.description.to_owned(),
                tools: s.tools.iter().map(|t| (*t).to_owned()).collect(),
                includes: s.includes.iter().map(|t| (*t).to_owned()).collect(),
                instructional: s.instructional,
                posture: s.posture,
                stateless: s.stateless,
            }
        };
        if let Some(extra) = rt.plugin.get(name) {
            def.tools.extend(extra.iter().cloned());
        }
        Some(def)
    }

    fn is_declared(&self, rt: &Runtime, name: &str) -> bool {
        rt.custom.contains_key(name) || self.by_name.contains_key(name)
    }

    fn is_plugin_only(&self, rt: &Runtime, name: &str) -> bool {
        rt.plugin.contains_key(name) && !self.is_declared(rt, name)
    }

    fn alias_target<'a>(&'a self, rt: &'a Runtime, name: &str) -> Option<&'a str> {
        rt.aliases
            .get(name)
            .map(String::as_str)
            .or_else(|| self.static_aliases.get(name).copied())
    }

    /// The first alias (run-time aliases first, then static ones, each in name
    /// order) that points at `canonical` and is not itself a declared toolset.
    fn display_alias<'a>(&'a self, rt: &'a Runtime, canonical: &str) -> Option<&'a str> {
        rt.aliases
            .iter()
            .map(|(a, t)| (a.as_str(), t.as_str()))
            .chain(self.static_aliases.iter().map(|(a, t)| (*a, *t)))
            .find(|(a, t)| *t == canonical && !self.is_declared(rt, a))
            .map(|(a, _)| a)
    }

    /// The reference's `get_toolset`: declared toolsets first, then plugin-only
    /// toolsets, then aliases.
    fn lookup(&self, rt: &Runtime, name: &str) -> Option<Def> {
        if let Some(def) = self.declared(rt, name) {
            return Some(def);
        }
        if let Some(tools) = rt.plugin.get(name) {
            let description = match self.display_alias(rt, name) {
                Some(alias) => format!("MCP server '{alias}' tools"),
                None => format!("Plugin toolset: {name}"),
            };
            return Some(Def {
                description,
                tools: tools.clone(),
                ..Def::default()
            });
        }
        let target = self.alias_target(rt, name)?;
        // Deliberate difference from the reference: an alias of a declared
        // toolset stands for all of it (the reference only sees the plugin
        // tools registered into the target).
        if let Some(def) = self.declared(rt, target) {
            return Some(def);
        }
        Some(Def {
            description: format!("MCP server '{name}' tools"),
            tools: rt.plugin.get(target).cloned().unwrap_or_default(),
            ..Def::default()
        })
    }

    /// Names of every toolset, sorted: static, custom, and plugin-only toolsets
    /// (a plugin-only toolset with an alias is listed under the alias).
    fn names(&self, rt: &Runtime) -> Vec<String> {
        let mut names: BTreeSet<String> = self.by_name.keys().map(|k| (*k).to_owned()).collect();
        names.extend(rt.custom.keys().cloned());
        for ts in rt.plugin.keys().filter(|k| !self.is_declared(rt, k)) {
            names.insert(
                self.display_alias(rt, ts)
                    .map_or_else(|| ts.clone(), str::to_owned),
            );
        }
        names.into_iter().collect()
    }

    fn resolve_into(&self, rt: &Runtime, name: &str, out: &mut BTreeSet<String>) {
        // The union of the direct tools of every toolset reachable from `name`
        // equals what the reference's recursive walk (visited set shared across
        // siblings, copied per branch of `all`) collects; a work list avoids
        // both recursion depth and the reference's repeated `all` expansions.
        let mut visited: BTreeSet<String> = BTreeSet::new();
        let mut all_expanded = false;
        let mut pending: Vec<String> = vec![name.to_owned()];
        while let Some(current) = pending.pop() {
            if is_all(&current) {
                if !all_expanded {
                    all_expanded = true;
                    pending.extend(self.names(rt));
                }
                continue;
            }
            if visited.contains(&current) {
                continue;
            }
            match self.lookup(rt, &current) {
                Some(def) => {
                    out.extend(def.tools);
                    pending.extend(def.includes);
                }
                None => {
                    if let Some(platform) = current.strip_prefix(BUNDLE_PREFIX) {
                        if rt.platforms.contains(platform) {
                            out.extend(self.table.core.iter().map(|t| (*t).to_owned()));
                            if let Some(tools) = rt.plugin.get(platform) {
                                out.extend(tools.iter().cloned());
                            }
                        }
                    }
                }
            }
            visited.insert(current);
        }
    }

    // -- queries --------------------------------------------------------------

    /// Every tool `name` stands for, sorted and deduplicated. `all` / `*` mean
    /// every toolset; aliases are followed; unknown names give nothing.
    pub fn resolve_toolset(&self, name: &str) -> Vec<String> {
        let rt = self.read();
        let mut out = BTreeSet::new();
        self.resolve_into(&rt, name, &mut out);
        out.into_iter().collect()
    }

    /// The union of [`Self::resolve_toolset`] over `names`, sorted and deduplicated.
    pub fn resolve_multiple_toolsets<S: AsRef<str>>(&self, names: &[S]) -> Vec<String> {
        let rt = self.read();
        let mut out = BTreeSet::new();
        for name in names {
            self.resolve_into(&rt, name.as_ref(), &mut out);
        }
        out.into_iter().collect()
    }

    /// A bundle's tools minus core, following one level of `includes` (their
    /// direct tools only). Disabling a bundle through this never strips core
    /// tools. A name that is not a toolset falls back to its full resolution
    /// minus core (so `all`, plugin platforms and unknown names work too).
    pub fn bundle_non_core_tools(&self, name: &str) -> Vec<String> {
        let rt = self.read();
        let core: BTreeSet<&str> = self.table.core.iter().copied().collect();
        let mut out = BTreeSet::new();
        match self.lookup(&rt, name) {
            Some(def) => {
                out.extend(def.tools);
                for inc in &def.includes {
                    if let Some(inc_def) = self.lookup(&rt, inc) {
                        out.extend(inc_def.tools);
                    }
                }
            }
            None => self.resolve_into(&rt, name, &mut out),
        }
        out.retain(|t| !core.contains(t.as_str()));
        out.into_iter().collect()
    }

    /// Whether `name` is a valid toolset name: `all`, `*`, a static or custom
    /// toolset, a plugin-only toolset, or an alias (even one whose target has
    /// no tools). Legacy names and implicit plugin-platform bundles are not
    /// toolsets (as in the reference).
    pub fn validate_toolset(&self, name: &str) -> bool {
        if is_all(name) {
            return true;
        }
        let rt = self.read();
        self.is_declared(&rt, name)
            || self.is_plugin_only(&rt, name)
            || self.alias_target(&rt, name).is_some()
    }

    /// Details of one toolset; `None` for names that are not toolsets
    /// (including `all`, `*` and legacy names).
    pub fn get_toolset_info(&self, name: &str) -> Option<ToolsetInfo> {
        let rt = self.read();
        let def = self.lookup(&rt, name)?;
        let mut resolved = BTreeSet::new();
        self.resolve_into(&rt, name, &mut resolved);
        let resolved_tools: Vec<String> = resolved.into_iter().collect();
        Some(ToolsetInfo {
            name: name.to_owned(),
            description: def.description,
            direct_tools: def.tools.into_iter().collect(),
            is_composite: !def.includes.is_empty(),
            includes: def.includes,
            tool_count: resolved_tools.len(),
            resolved_tools,
            instructional: def.instructional,
            posture: def.posture,
        })
    }

    /// Whether `name` is a posture toolset (disabling it subtracts only its
    /// non-core tools).
    pub fn is_posture(&self, name: &str) -> bool {
        let rt = self.read();
        self.lookup(&rt, name).is_some_and(|d| d.posture)
    }

    /// Whether `name` is declared stateless: its tools keep nothing in the
    /// session between calls, so any host may answer any call. A toolset
    /// created at run time (an MCP server's) or unknown is not: forgetting
    /// to declare it is safe.
    pub fn is_stateless(&self, name: &str) -> bool {
        let rt = self.read();
        self.lookup(&rt, name).is_some_and(|d| d.stateless)
    }

    /// Whether `name` is an instructional toolset (skills, prompts, playbooks).
    pub fn is_instructional(&self, name: &str) -> bool {
        let rt = self.read();
        self.lookup(&rt, name).is_some_and(|d| d.instructional)
    }

    /// Every toolset name, sorted (aliases excluded, except that a plugin-only
    /// toolset with an alias is listed under its alias, as the reference does).
    pub fn toolset_names(&self) -> Vec<String> {
        let rt = self.read();
        self.names(&rt)
    }

    /// The tools of a legacy name (e.g. `web_tools`), if it is one.
    pub fn legacy_tools(&self, name: &str) -> Option<&'static [&'static str]> {
        self.table
            .legacy
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.tools)
    }

    /// Whether `tool` is in the core list.
    pub fn is_core(&self, tool: &str) -> bool {
        self.table.core.contains(&tool)
    }

    /// The core list, in table order.
    pub fn core_tools(&self) -> &'static [&'static str] {
        self.table.core
    }

    /// The webhook-safe list, in table order.
    pub fn webhook_safe_tools(&self) -> &'static [&'static str] {
        self.table.webhook_safe
    }

    // -- mutations ------------------------------------------------------------

    /// Creates (or replaces) a toolset at run time. A custom toolset with the
    /// name of a static one replaces it, as in the reference.
    pub fn create_custom_toolset(
        &self,
        name: &str,
        description: &str,
        tools: &[&str],
        includes: &[&str],
    ) {
        let mut rt = self.write();
        rt.custom.insert(
            name.to_owned(),
            CustomToolset {
                description: description.to_owned(),
                tools: tools.iter().map(|t| (*t).to_owned()).collect(),
                includes: includes.iter().map(|t| (*t).to_owned()).collect(),
            },
        );
        self.bump();
    }

    /// Removes a custom toolset (a static one it replaced shows again).
    /// Returns whether there was one.
    pub fn remove_custom_toolset(&self, name: &str) -> bool {
        let mut rt = self.write();
        let removed = rt.custom.remove(name).is_some();
        if removed {
            self.bump();
        }
        removed
    }

    /// Records that a run-time (plugin / MCP) tool was registered into
    /// `toolset`. The tool joins that toolset if it is declared; otherwise the
    /// toolset exists from now on as a plugin-only toolset. Returns whether
    /// anything changed. (Which toolset may own a tool is the registry's
    /// business, not this table's.)
    pub fn register_plugin_tool(&self, toolset: &str, tool: &str) -> bool {
        let added = self.write().add_plugin_tool(toolset, tool);
        if added {
            self.bump();
        }
        added
    }

    /// Undoes [`Self::register_plugin_tool`]. When the toolset's last run-time
    /// tool goes, a plugin-only toolset stops existing and run-time aliases
    /// pointing at it are dropped. Returns whether anything changed.
    pub fn remove_plugin_tool(&self, toolset: &str, tool: &str) -> bool {
        let removed = self.write().drop_plugin_tool(toolset, tool);
        if removed {
            self.bump();
        }
        removed
    }

    /// Several [`Self::remove_plugin_tool`] / [`Self::register_plugin_tool`]
    /// in order, under one lock and one generation bump (a toolset's
    /// replace). Returns whether anything changed.
    pub(crate) fn apply_plugin_changes<'a>(
        &self,
        changes: impl IntoIterator<Item = PluginChange<'a>>,
    ) -> bool {
        let mut rt = self.write();
        let mut changed = false;
        for change in changes {
            changed |= match change {
                PluginChange::Add { toolset, tool } => rt.add_plugin_tool(toolset, tool),
                PluginChange::Remove { toolset, tool } => rt.drop_plugin_tool(toolset, tool),
            };
        }
        drop(rt);
        if changed {
            self.bump();
        }
        changed
    }

    /// Registers (or re-points) a run-time alias, e.g. an MCP server's short
    /// name for its `mcp-<server>` toolset. Run-time aliases take precedence
    /// over static ones; a declared toolset of the same name still wins.
    pub fn register_toolset_alias(&self, alias: &str, toolset: &str) {
        let mut rt = self.write();
        rt.aliases.insert(alias.to_owned(), toolset.to_owned());
        self.bump();
    }

    /// Registers a plugin platform: `hermes-<platform>` then resolves to core
    /// plus the tools registered into `<platform>`. Returns whether it was new.
    pub fn register_plugin_platform(&self, platform: &str) -> bool {
        let mut rt = self.write();
        let added = rt.platforms.insert(platform.to_owned());
        if added {
            self.bump();
        }
        added
    }

    /// Undoes [`Self::register_plugin_platform`]. Returns whether it was there.
    pub fn remove_plugin_platform(&self, platform: &str) -> bool {
        let mut rt = self.write();
        let removed = rt.platforms.remove(platform);
        if removed {
            self.bump();
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_recovered() {
        let t = Toolsets::new(StaticTable::EMPTY);
        t.register_plugin_tool("p", "x");
        let poisoned = std::thread::scope(|s| {
            s.spawn(|| {
                let _guard = t.write();
                panic!("poison the lock on purpose");
            })
            .join()
            .is_err()
        });
        assert!(poisoned);
        assert!(t.runtime.is_poisoned());
        assert_eq!(t.resolve_toolset("p"), ["x"]);
        assert!(t.register_plugin_tool("p", "y"));
        assert_eq!(t.resolve_toolset("all"), ["x", "y"]);
    }
}
