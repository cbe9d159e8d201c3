//! The declarative toolset file (`toolsets.toml`): parsed and validated at build time.
//!
//! One TOML file declares every static toolset, the core tool list, the
//! webhook-safe list, the `hermes-<platform>` bundles, legacy toolset names
//! and toolset aliases. The build parses it with
//! [`parse_table`], checks it against the tools the crate really registers with
//! [`validate`], and emits static data from [`Table::expanded_toolsets`] for
//! `hermes_runtime::Toolsets`, the one resolver, to use at run time.
//!
//! # Format
//!
//! ```toml
//! # The default bundle every platform inherits.
//! core = ["web_search", "read_file", "terminal", "clarify"]
//!
//! # Tools that may see untrusted input (webhooks): read-only tools only.
//! webhook_safe = ["web_search", "clarify"]
//!
//! [toolsets.web]
//! description = "Search the web and read pages"
//! tools = ["web_search"]
//!
//! [toolsets.debugging]
//! description = "Commands plus web and file access"
//! tools = ["terminal"]
//! includes = ["web"]            # other toolsets (or aliases); optional
//!
//! [toolsets.skills]
//! description = "Read skill documents"
//! tools = ["skills_list"]
//! instructional = true          # skills / prompts / playbooks; optional
//! stateless = true              # its tools keep nothing in the session; optional
//!
//! [toolsets.coding]
//! description = "Everything for pairing on code"
//! tools = ["web_search", "read_file", "terminal"]
//! posture = true                # disabling it subtracts only its non-core tools
//!
//! # `hermes-<platform>` bundles. [platforms.cli] generates the toolset
//! # `hermes-cli` whose tools are `core` followed by `extras`.
//! [platforms.cli]
//! description = "Interactive CLI"   # optional; a default is generated
//! extras = []                       # optional
//!
//! # base = "webhook_safe" builds the bundle from the webhook-safe list
//! # instead of core; such a bundle may not name extras.
//! [platforms.webhook]
//! base = "webhook_safe"
//!
//! # Old names that map straight to tool lists (not toolsets).
//! [legacy]
//! web_tools = ["web_search"]
//!
//! # alias = "toolset it stands for"
//! [aliases]
//! files = "debugging"
//! ```
//!
//! Every list entry and every name keeps its position in the text, so each
//! [`TableError`] points at the offending entry (1-based line and column).
mod emit;
mod parse;
mod validate;

use std::collections::BTreeSet;
use std::fmt;

use hermes_tool_facts::BUNDLE_PREFIX;

pub use emit::{emit_rust, table_tokens};
pub use parse::parse_table;
pub use validate::{did_you_mean, validate};

/// A 1-based position in the TOML text (column counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// A name (tool, toolset, alias, …) and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name as written, without quotes.
    pub name: String,
    /// Where the entry starts in the TOML text.
    pub pos: Pos,
}

/// Which list a platform bundle starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BundleBase {
    /// The core list (the usual case).
    #[default]
    Core,
    /// The webhook-safe list (for bundles fed untrusted input).
    WebhookSafe,
}

/// A toolset declared under `[toolsets.NAME]`, or generated from `[platforms.NAME]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsetDef {
    /// The toolset's name.
    pub name: Entry,
    /// Human-readable description.
    pub description: String,
    /// Tools named directly, in file order.
    pub tools: Vec<Entry>,
    /// Other toolsets (or aliases) included, in file order.
    pub includes: Vec<Entry>,
    /// Skills / prompts / playbooks: instructional content rather than actions.
    pub instructional: bool,
    /// A posture toolset re-lists core tools without owning them.
    pub posture: bool,
    /// Its tools keep no state in the session between calls (what they
    /// keep is on the profile's filesystem): any host may answer any call.
    pub stateless: bool,
    /// For a generated bundle, the platform it came from.
    pub platform: Option<String>,
}

/// A `[platforms.NAME]` entry: the bundle `hermes-NAME` = base list + extras.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformDef {
    /// The platform name (without the `hermes-` prefix).
    pub name: Entry,
    /// Description, if the file gives one.
    pub description: Option<String>,
    /// Which list the bundle starts from.
    pub base: BundleBase,
    /// Where `base` was written, if it was.
    pub base_pos: Option<Pos>,
    /// Platform-specific tools added to the base list.
    pub extras: Vec<Entry>,
}

impl PlatformDef {
    /// The generated toolset name, `hermes-<platform>`.
    pub fn bundle_name(&self) -> String {
        format!("{BUNDLE_PREFIX}{}", self.name.name)
    }
}

/// A legacy name mapping straight to a list of tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyDef {
    /// The legacy name (e.g. `web_tools`).
    pub name: Entry,
    /// The tools it stands for.
    pub tools: Vec<Entry>,
}

/// An alias for a toolset name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasDef {
    /// The alias.
    pub alias: Entry,
    /// The toolset it stands for.
    pub target: Entry,
}

/// The parsed `toolsets.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// Packages whose tools and toolsets this table extends (`builds_on`).
    pub builds_on: Vec<Entry>,
    /// What the table may name of those packages (filled by
    /// `read_toolsets`; empty when it builds on nothing).
    pub base: BaseNames,
    /// The core list, in file order.
    pub core: Vec<Entry>,
    /// The webhook-safe list, in file order.
    pub webhook_safe: Vec<Entry>,
    /// Declared toolsets, sorted by name.
    pub toolsets: Vec<ToolsetDef>,
    /// Platform bundles, sorted by platform name.
    pub platforms: Vec<PlatformDef>,
    /// Legacy names, sorted by name.
    pub legacy: Vec<LegacyDef>,
    /// Aliases, sorted by alias.
    pub aliases: Vec<AliasDef>,
}

impl Table {
    /// Adds each tool to the declared toolset its `#[hermes_tool(toolset =
    /// …)]` names, when the table does not list it there already: a new tool
    /// of an existing toolset needs no edit of `toolsets.toml`. (A tool whose
    /// toolset is not declared is still exposed by nothing, and the
    /// `tool-not-in-toolset` lint says so.) `members` is (tool, toolset).
    pub fn add_declared_members<'a>(
        &mut self,
        members: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        for (tool, toolset) in members {
            if !self.toolsets.iter().any(|t| t.name.name == toolset)
                && self.base.toolsets.iter().any(|t| t == toolset)
            {
                // A toolset of a crate this one builds on: this crate's
                // table extends it (the registry merges the two).
                self.toolsets.push(ToolsetDef {
                    name: Entry {
                        name: toolset.to_string(),
                        pos: Pos { line: 1, column: 1 },
                    },
                    description: String::new(),
                    tools: Vec::new(),
                    includes: Vec::new(),
                    instructional: false,
                    posture: false,
                    stateless: false,
                    platform: None,
                });
                self.toolsets.sort_by(|a, b| a.name.name.cmp(&b.name.name));
            }
            if let Some(def) = self.toolsets.iter_mut().find(|t| t.name.name == toolset) {
                if !def.tools.iter().any(|e| e.name == tool) {
                    let pos = def.name.pos;
                    def.tools.push(Entry {
                        name: tool.to_string(),
                        pos,
                    });
                }
            }
        }
    }

    /// The toolset generated for one platform bundle: base list + extras.
    pub fn bundle_toolset(&self, platform: &PlatformDef) -> ToolsetDef {
        let base = match platform.base {
            BundleBase::Core => &self.core,
            BundleBase::WebhookSafe => &self.webhook_safe,
        };
        let description = platform.description.clone().unwrap_or_else(|| {
            format!(
                "Hermes {} platform bundle: the core tools plus platform extras",
                platform.name.name
            )
        });
        ToolsetDef {
            name: Entry {
                name: platform.bundle_name(),
                pos: platform.name.pos,
            },
            description,
            tools: base.iter().chain(&platform.extras).cloned().collect(),
            includes: Vec::new(),
            instructional: false,
            posture: false,
            stateless: false,
            platform: Some(platform.name.name.clone()),
        }
    }

    /// Every tool some declared toolset or platform bundle names: what the
    /// toolsets expose, as an include only brings in another toolset's tools.
    pub fn exposed_tools(&self) -> BTreeSet<String> {
        self.expanded_toolsets()
            .into_iter()
            .flat_map(|t| t.tools)
            .map(|e| e.name)
            .collect()
    }

    /// Declared toolsets plus the generated `hermes-<platform>` bundles, sorted by
    /// name (a duplicated name appears twice; [`validate`] reports it).
    pub fn expanded_toolsets(&self) -> Vec<ToolsetDef> {
        let mut all: Vec<ToolsetDef> = self.toolsets.clone();
        all.extend(self.platforms.iter().map(|p| self.bundle_toolset(p)));
        // The bundles of the crates this one builds on take its core
        // additions (the registry merges them with the bases' bundles).
        if !self.core.is_empty() {
            for platform in &self.base.platforms {
                if self.platforms.iter().any(|p| p.name.name == *platform) {
                    continue;
                }
                all.push(ToolsetDef {
                    name: Entry {
                        name: format!("{BUNDLE_PREFIX}{platform}"),
                        pos: Pos { line: 1, column: 1 },
                    },
                    description: String::new(),
                    tools: self.core.clone(),
                    includes: Vec::new(),
                    instructional: false,
                    posture: false,
                    stateless: false,
                    platform: Some(platform.clone()),
                });
            }
        }
        all.sort_by(|a, b| a.name.name.cmp(&b.name.name));
        all
    }
}

/// Stable kinds of [`TableError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableErrorKind {
    /// The text is not TOML, or not the shape this module expects.
    Parse,
    /// A list names a tool the crate does not register.
    UnknownTool,
    /// `includes` names a toolset that does not exist.
    UnknownToolset,
    /// `includes` leads back to where it started.
    IncludeCycle,
    /// An alias points at no toolset.
    AliasTargetUnknown,
    /// An alias has the name of a toolset (the toolset would always win).
    AliasShadowsToolset,
    /// Two toolsets / legacy names / aliases share one name.
    DuplicateName,
    /// A list names the same entry twice.
    DuplicateEntry,
    /// `all` or `*` used as a name or include.
    ReservedName,
    /// An empty name, or one with white space.
    InvalidName,
    /// A bundle built on the webhook-safe list names extras.
    WebhookBundleExtras,
    /// A toolset without a description that extends no base toolset.
    MissingDescription,
}

impl TableErrorKind {
    /// The stable identifier of this kind.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Parse => "parse",
            Self::UnknownTool => "unknown_tool",
            Self::UnknownToolset => "unknown_toolset",
            Self::IncludeCycle => "include_cycle",
            Self::AliasTargetUnknown => "alias_target_unknown",
            Self::AliasShadowsToolset => "alias_shadows_toolset",
            Self::DuplicateName => "duplicate_name",
            Self::DuplicateEntry => "duplicate_entry",
            Self::ReservedName => "reserved_name",
            Self::InvalidName => "invalid_name",
            Self::WebhookBundleExtras => "webhook_bundle_extras",
            Self::MissingDescription => "missing_description",
        }
    }
}

impl fmt::Display for TableErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in `toolsets.toml`, located at the offending entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    /// What kind of problem.
    pub kind: TableErrorKind,
    /// A sentence for the person editing the file.
    pub message: String,
    /// 1-based line of the offending entry.
    pub line: usize,
    /// 1-based column of the offending entry.
    pub column: usize,
}

impl TableError {
    fn at(kind: TableErrorKind, pos: Pos, message: String) -> Self {
        Self {
            kind,
            message,
            line: pos.line,
            column: pos.column,
        }
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "toolsets.toml:{}:{}: {}: {}",
            self.line, self.column, self.kind, self.message
        )
    }
}

impl std::error::Error for TableError {}

/// What a table may name of the crates it builds on: filled into
/// [`Table::base`] by [`crate::read_toolsets`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BaseNames {
    /// (tool, its toolset, its package) of every base tool.
    pub tools: Vec<(String, String, String)>,
    /// Toolsets (declared and platform bundles) of the bases.
    pub toolsets: Vec<String>,
    /// Aliases of the bases.
    pub aliases: Vec<String>,
    /// Platforms of the bases (without the `hermes-` prefix).
    pub platforms: Vec<String>,
}
