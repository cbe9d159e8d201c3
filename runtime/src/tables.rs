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

/// Everything `cargo xtask gen` emits for one tools crate
/// (`hermes_tools::generated::TABLES`).
#[derive(Debug)]
pub struct StaticTables {
    pub tools: &'static StaticTools,
    /// The generated `find_tool`: `tools.get(name)` by a `match`, which
    /// dispatch resolves names with (phf's SipHash is most of a phf lookup).
    pub find_tool: fn(&str) -> Option<&'static ToolEntry>,
    pub plans: &'static StaticPlans,
    /// The toolset table of `toolsets.toml`.
    pub toolsets: &'static StaticTable,
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
