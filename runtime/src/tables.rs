//! The static tables the build step emits (`cargo xtask gen`): the
//! phf-indexed tools, the coercion plans and the toolset table. Plain data,
//! depending on nothing in the runtime but the entry and plan types; the
//! registry (`registry.rs`) and the toolsets (`toolsets.rs`) read them and
//! re-export them under their historical paths.

use crate::coerce::CoercionPlan;
use crate::entry::ToolEntry;

/// The generated, phf-indexed table: tool name → entry.
pub type StaticTools = phf::Map<&'static str, &'static ToolEntry>;

/// The generated coercion plans: tool name → plan.
pub type StaticPlans = phf::Map<&'static str, &'static CoercionPlan>;

/// The generated schemas: tool name → its `parameters` as JSON text, as the
/// build step derived them (`generated_schemas.rs`).
pub type StaticSchemas = phf::Map<&'static str, &'static str>;

/// Everything `cargo xtask gen` emits for one tools crate
/// (`hermes_tools::generated::TABLES`).
#[derive(Debug)]
pub struct StaticTables {
    pub tools: &'static StaticTools,
    /// The generated `find_tool`: `tools.get(name)` by a `match`, which
    /// dispatch resolves names with (phf's SipHash is most of a phf lookup).
    pub find_tool: fn(&str) -> Option<&'static ToolEntry>,
    pub plans: &'static StaticPlans,
    /// Every tool's `parameters` as JSON text: a registry built over these
    /// tables reads a tool's schema from it instead of deriving it.
    pub schemas: &'static StaticSchemas,
    /// The toolset table of `toolsets.toml`.
    pub toolsets: &'static StaticTable,
    /// The package these tables were generated for (`CARGO_PKG_NAME`),
    /// named by composition errors.
    pub krate: &'static str,
}

impl StaticTables {
    /// `{tool name: parameters}` for every tool of this crate's table (its
    /// own tools only, not those of the crates it is composed with): what
    /// the build step reads the compiled schemas from, to run the
    /// schema-level lints and render the coercion plans. `cargo hermes`
    /// prints it from a throwaway crate that depends on yours:
    /// `println!("{}", my_crate::generated::TABLES.parameters_by_name())`.
    /// Derived from the Rust types ([`ToolEntry::derived_parameters`]),
    /// never read from [`schemas`](Self::schemas), which is written from it.
    pub fn parameters_by_name(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.tools
                .entries()
                .map(|(name, entry)| ((*name).to_string(), entry.derived_parameters()))
                .collect(),
        )
    }

    /// Gives each tool of these tables its `parameters` text
    /// ([`schemas`](Self::schemas)), read by [`ToolEntry::schema`]; a tool
    /// without one (added since the last `cargo hermes gen`) derives its
    /// schema as before.
    pub(crate) fn use_schema_texts(&self) {
        for (name, text) in self.schemas.entries() {
            if let Some(entry) = (self.find_tool)(name) {
                entry.use_parameters_text(text);
            }
        }
    }
}

/// One toolset of the static table, as the build emits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticToolset {
    /// Toolset name.
    pub name: &'static str,
    /// Human-readable description.
    pub description: &'static str,
    /// Tools named directly (platform bundles: core + extras, already expanded).
    pub tools: &'static [&'static str],
    /// Toolsets (or aliases) included.
    pub includes: &'static [&'static str],
    /// Skills / prompts / playbooks.
    pub instructional: bool,
    /// Posture toolset: re-lists core tools without owning them.
    pub posture: bool,
    /// Its tools keep no state in the session between calls: any host of
    /// a profile may answer any call (`stateless = true` in toolsets.toml).
    pub stateless: bool,
}

impl StaticToolset {
    /// A plain toolset (neither instructional nor posture).
    pub const fn new(
        name: &'static str,
        description: &'static str,
        tools: &'static [&'static str],
        includes: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            description,
            tools,
            includes,
            instructional: false,
            posture: false,
            stateless: false,
        }
    }

    /// The same toolset, marked instructional.
    pub const fn instructional(mut self) -> Self {
        self.instructional = true;
        self
    }

    /// The same toolset, marked as a posture toolset.
    pub const fn posture(mut self) -> Self {
        self.posture = true;
        self
    }

    /// The same toolset, marked stateless.
    pub const fn stateless(mut self) -> Self {
        self.stateless = true;
        self
    }
}

/// A legacy name that maps straight to a tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticLegacy {
    /// The legacy name (e.g. `web_tools`).
    pub name: &'static str,
    /// The tools it stands for.
    pub tools: &'static [&'static str],
}

/// An alias for a toolset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticAlias {
    /// The alias.
    pub alias: &'static str,
    /// The toolset it stands for.
    pub target: &'static str,
}

/// The whole static table, as the build emits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticTable {
    /// Every static toolset, including generated `hermes-*` bundles.
    pub toolsets: &'static [StaticToolset],
    /// The core list.
    pub core: &'static [&'static str],
    /// The webhook-safe list.
    pub webhook_safe: &'static [&'static str],
    /// Legacy names.
    pub legacy: &'static [StaticLegacy],
    /// Aliases.
    pub aliases: &'static [StaticAlias],
}

impl StaticTable {
    /// A table with nothing in it.
    pub const EMPTY: StaticTable = StaticTable {
        toolsets: &[],
        core: &[],
        webhook_safe: &[],
        legacy: &[],
        aliases: &[],
    };
}

/// Why tables could not be composed into one registry
/// ([`Registry::compose`](crate::Registry::compose)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComposeError {
    /// Two crates define a tool of one name and the later one does not say
    /// `override`.
    DuplicateTool {
        name: String,
        /// (crate, file:line) of the first definition.
        first: (String, String),
        /// (crate, file:line) of the later one.
        second: (String, String),
    },
    /// No tables at all.
    Empty,
}

impl std::fmt::Display for ComposeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ComposeError::DuplicateTool {
                name,
                first,
                second,
            } => write!(
                f,
                "tool `{name}` is defined twice: by crate `{}` ({}) and by crate `{}` ({}); \
                 rename one, or mark the later one #[hermes_tool(override)] to replace the first",
                first.0, first.1, second.0, second.1
            ),
            ComposeError::Empty => write!(f, "a registry needs the tables of at least one crate"),
        }
    }
}

impl std::error::Error for ComposeError {}

fn place(tables: &StaticTables, e: &ToolEntry) -> (String, String) {
    (
        tables.krate.to_string(),
        format!("{}:{}", e.source_file, e.source_line),
    )
}

/// Checks that no name is defined twice across `layers` (in composition
/// order) unless the later definition says `override`.
pub(crate) fn check_names(layers: &[&'static StaticTables]) -> Result<(), ComposeError> {
    for (i, later) in layers.iter().enumerate() {
        for (name, entry) in later.tools.entries() {
            if entry.override_existing {
                continue;
            }
            if let Some((earlier, first)) = layers[..i]
                .iter()
                .find_map(|t| (t.find_tool)(name).map(|e| (t, e)))
            {
                return Err(ComposeError::DuplicateTool {
                    name: (*name).to_string(),
                    first: place(earlier, first),
                    second: place(later, entry),
                });
            }
        }
    }
    Ok(())
}

/// The toolset tables of several crates as one: a toolset named by several
/// crates is the union of their tools and includes (the first crate's
/// description, unless empty; instructional or posture if any says so);
/// platform bundles likewise (each crate's bundle already holds its core
/// and extras); the core and webhook-safe lists are unions in order; a
/// legacy name or alias keeps its first definition.
///
/// The merged table is `'static` like the generated ones: it is built once
/// per distinct list of tables in a process and kept (a few KB), so
/// composing the same crates again allocates nothing new.
pub(crate) fn compose_toolsets(tables: &[&'static StaticTable]) -> StaticTable {
    use std::sync::Mutex;
    type Key = Vec<usize>;
    static MERGED: Mutex<Vec<(Key, StaticTable)>> = Mutex::new(Vec::new());
    if let [one] = tables {
        return **one;
    }
    let key: Key = tables
        .iter()
        .map(|t| std::ptr::from_ref::<StaticTable>(*t) as usize)
        .collect();
    let mut merged = MERGED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, t)) = merged.iter().find(|(k, _)| *k == key) {
        return *t;
    }
    let table = merge(tables);
    merged.push((key, table));
    table
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn union<'a>(lists: impl Iterator<Item = &'a [&'static str]>) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for list in lists {
        for s in list {
            if !out.contains(s) {
                out.push(s);
            }
        }
    }
    out
}

fn merge(tables: &[&'static StaticTable]) -> StaticTable {
    let mut names: Vec<&'static str> = Vec::new();
    for t in tables {
        for ts in t.toolsets {
            if !names.contains(&ts.name) {
                names.push(ts.name);
            }
        }
    }
    names.sort_unstable();
    let toolsets: Vec<StaticToolset> = names
        .iter()
        .map(|name| {
            let defs: Vec<&StaticToolset> = tables
                .iter()
                .flat_map(|t| t.toolsets.iter())
                .filter(|ts| ts.name == *name)
                .collect();
            StaticToolset {
                name,
                description: defs
                    .iter()
                    .map(|d| d.description)
                    .find(|d| !d.is_empty())
                    .unwrap_or(""),
                tools: leak(union(defs.iter().map(|d| d.tools))),
                includes: leak(union(defs.iter().map(|d| d.includes))),
                instructional: defs.iter().any(|d| d.instructional),
                posture: defs.iter().any(|d| d.posture),
                // Stateless only if every table that defines it says so.
                stateless: defs.iter().all(|d| d.stateless),
            }
        })
        .collect();
    let mut legacy: Vec<StaticLegacy> = Vec::new();
    let mut aliases: Vec<StaticAlias> = Vec::new();
    for t in tables {
        for l in t.legacy {
            if !legacy.iter().any(|x| x.name == l.name) {
                legacy.push(*l);
            }
        }
        for a in t.aliases {
            if !aliases.iter().any(|x| x.alias == a.alias) {
                aliases.push(*a);
            }
        }
    }
    StaticTable {
        toolsets: leak(toolsets),
        core: leak(union(tables.iter().map(|t| t.core))),
        webhook_safe: leak(union(tables.iter().map(|t| t.webhook_safe))),
        legacy: leak(legacy),
        aliases: leak(aliases),
    }
}
