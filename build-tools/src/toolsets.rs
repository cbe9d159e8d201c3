//! The declarative toolset file (`toolsets.toml`): parsed and validated at build time.
//!
//! One TOML file declares every static toolset, the core tool list, the
//! webhook-safe list, the `hermes-<platform>` bundles, legacy toolset names
//! and toolset aliases. The build parses it with
//! [`parse_table`], checks it against the tools the crate really registers with
//! [`validate`], and emits static data from [`Table::expanded_toolsets`] for
//! `hermes_runtime::toolsets::Toolsets`, the one resolver, to use at run time.
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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use hermes_tool_facts::{is_all_toolsets, BUNDLE_PREFIX};
use serde::Deserialize;
use toml::Spanned;

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

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

type SpannedName = Spanned<String>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    core: Vec<SpannedName>,
    #[serde(default)]
    webhook_safe: Vec<SpannedName>,
    #[serde(default)]
    toolsets: BTreeMap<SpannedName, RawToolset>,
    #[serde(default)]
    platforms: BTreeMap<SpannedName, RawPlatform>,
    #[serde(default)]
    legacy: BTreeMap<SpannedName, Vec<SpannedName>>,
    #[serde(default)]
    aliases: BTreeMap<SpannedName, SpannedName>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolset {
    description: String,
    #[serde(default)]
    tools: Vec<SpannedName>,
    #[serde(default)]
    includes: Vec<SpannedName>,
    #[serde(default)]
    instructional: bool,
    #[serde(default)]
    posture: bool,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawBase {
    Core,
    WebhookSafe,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    base: Option<Spanned<RawBase>>,
    #[serde(default)]
    extras: Vec<SpannedName>,
}

/// Maps byte offsets of one text to 1-based line/column.
struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, line_starts }
    }

    fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self
            .line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        Pos {
            line: line.max(1),
            column,
        }
    }

    fn entry(&self, s: &SpannedName) -> Entry {
        Entry {
            name: s.get_ref().clone(),
            pos: self.pos(s.span().start),
        }
    }

    fn entries(&self, list: &[SpannedName]) -> Vec<Entry> {
        list.iter().map(|s| self.entry(s)).collect()
    }
}

/// Parses the text of `toolsets.toml`.
///
/// Fails on TOML syntax errors, duplicate keys, unknown fields, missing
/// descriptions and values of the wrong type; each error carries the line and
/// column the TOML parser pointed at. Semantic checks are [`validate`]'s job.
pub fn parse_table(text: &str) -> Result<Table, Vec<TableError>> {
    let index = LineIndex::new(text);
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let pos = e
            .span()
            .map_or(Pos { line: 1, column: 1 }, |s| index.pos(s.start));
        vec![TableError::at(
            TableErrorKind::Parse,
            pos,
            e.message().trim().to_owned(),
        )]
    })?;

    let toolsets = raw
        .toolsets
        .iter()
        .map(|(name, t)| ToolsetDef {
            name: index.entry(name),
            description: t.description.clone(),
            tools: index.entries(&t.tools),
            includes: index.entries(&t.includes),
            instructional: t.instructional,
            posture: t.posture,
            platform: None,
        })
        .collect();
    let platforms = raw
        .platforms
        .iter()
        .map(|(name, p)| PlatformDef {
            name: index.entry(name),
            description: p.description.clone(),
            base: match p.base.as_ref().map(|b| *b.get_ref()) {
                None | Some(RawBase::Core) => BundleBase::Core,
                Some(RawBase::WebhookSafe) => BundleBase::WebhookSafe,
            },
            base_pos: p.base.as_ref().map(|b| index.pos(b.span().start)),
            extras: index.entries(&p.extras),
        })
        .collect();
    let legacy = raw
        .legacy
        .iter()
        .map(|(name, tools)| LegacyDef {
            name: index.entry(name),
            tools: index.entries(tools),
        })
        .collect();
    let aliases = raw
        .aliases
        .iter()
        .map(|(alias, target)| AliasDef {
            alias: index.entry(alias),
            target: index.entry(target),
        })
        .collect();

    Ok(Table {
        core: index.entries(&raw.core),
        webhook_safe: index.entries(&raw.webhook_safe),
        toolsets,
        platforms,
        legacy,
        aliases,
    })
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

/// The nearest candidate to `name`, if one is close enough to be a likely
/// typo ([`hermes_tool_facts::suggestions`], the one policy).
pub fn did_you_mean<'c, I>(name: &str, candidates: I) -> Option<&'c str>
where
    I: IntoIterator<Item = &'c str>,
{
    hermes_tool_facts::suggestions(name, candidates, 1)
        .into_iter()
        .next()
}

fn hint<'c, I>(name: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'c str>,
{
    did_you_mean(name, candidates).map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
}

/// What a name at the top level of the file stands for (for duplicate checks).
#[derive(Clone, Copy)]
enum NameRole {
    Toolset,
    Bundle,
    Legacy,
}

impl NameRole {
    fn describe(self) -> &'static str {
        match self {
            Self::Toolset => "toolset",
            Self::Bundle => "platform bundle",
            Self::Legacy => "legacy name",
        }
    }
}

struct Checker<'t> {
    table: &'t Table,
    known_tools: BTreeSet<&'t str>,
    toolset_names: BTreeSet<String>,
    alias_names: BTreeSet<String>,
    errors: Vec<TableError>,
}

impl<'t> Checker<'t> {
    fn push(&mut self, kind: TableErrorKind, pos: Pos, message: String) {
        self.errors.push(TableError::at(kind, pos, message));
    }

    fn check_name(&mut self, what: &str, entry: &Entry) {
        if is_all_toolsets(&entry.name) {
            self.push(
                TableErrorKind::ReservedName,
                entry.pos,
                format!(
                    "`{}` means every toolset and cannot name {what}",
                    entry.name
                ),
            );
        } else if entry.name.is_empty() || entry.name.chars().any(char::is_whitespace) {
            self.push(
                TableErrorKind::InvalidName,
                entry.pos,
                format!(
                    "`{}` is not a valid name for {what}: it is empty or contains white space",
                    entry.name
                ),
            );
        }
    }

    /// Checks one list of tool names: known, and listed once.
    fn check_tool_list(&mut self, context: &str, list: &[Entry]) {
        let mut seen = BTreeSet::new();
        for entry in list {
            if !seen.insert(entry.name.as_str()) {
                self.push(
                    TableErrorKind::DuplicateEntry,
                    entry.pos,
                    format!("{context} lists tool `{}` twice", entry.name),
                );
                continue;
            }
            if self.known_tools.contains(entry.name.as_str()) {
                continue;
            }
            let extra = if self.toolset_names.contains(&entry.name) {
                format!(" (`{}` is a toolset: put it in `includes`)", entry.name)
            } else {
                let known: Vec<&str> = self.known_tools.iter().copied().collect();
                hint(&entry.name, known)
            };
            self.push(
                TableErrorKind::UnknownTool,
                entry.pos,
                format!("{context} names unknown tool `{}`{extra}", entry.name),
            );
        }
    }

    fn check_includes(&mut self, toolset: &ToolsetDef) {
        let mut seen = BTreeSet::new();
        for inc in &toolset.includes {
            let context = format!("toolset `{}`", toolset.name.name);
            if !seen.insert(inc.name.as_str()) {
                self.push(
                    TableErrorKind::DuplicateEntry,
                    inc.pos,
                    format!("{context} includes `{}` twice", inc.name),
                );
                continue;
            }
            if is_all_toolsets(&inc.name) {
                self.push(
                    TableErrorKind::ReservedName,
                    inc.pos,
                    format!(
                        "{context} includes `{}`, which means every toolset (itself included)",
                        inc.name
                    ),
                );
                continue;
            }
            if self.toolset_names.contains(&inc.name) || self.alias_names.contains(&inc.name) {
                continue;
            }
            let extra = if self.known_tools.contains(inc.name.as_str()) {
                format!(" (`{}` is a tool: put it in `tools`)", inc.name)
            } else {
                hint(
                    &inc.name,
                    self.toolset_names
                        .iter()
                        .chain(&self.alias_names)
                        .map(String::as_str),
                )
            };
            self.push(
                TableErrorKind::UnknownToolset,
                inc.pos,
                format!("{context} includes unknown toolset `{}`{extra}", inc.name),
            );
        }
    }

    fn check_duplicates(&mut self, toolsets: &[ToolsetDef]) {
        let mut names: BTreeMap<&str, (NameRole, Pos)> = BTreeMap::new();
        let mut entries: Vec<(&Entry, NameRole)> = Vec::new();
        for t in toolsets {
            let role = if t.platform.is_some() {
                NameRole::Bundle
            } else {
                NameRole::Toolset
            };
            entries.push((&t.name, role));
        }
        for l in &self.table.legacy {
            entries.push((&l.name, NameRole::Legacy));
        }
        entries.sort_by_key(|(e, _)| e.pos);
        for (entry, role) in entries {
            if let Some((first, pos)) = names.get(entry.name.as_str()) {
                let message = format!(
                    "{} `{}` has the name of the {} defined at line {}",
                    role.describe(),
                    entry.name,
                    first.describe(),
                    pos.line
                );
                self.push(TableErrorKind::DuplicateName, entry.pos, message);
            } else {
                names.insert(entry.name.as_str(), (role, entry.pos));
            }
        }
    }

    fn check_aliases(&mut self) {
        let table = self.table;
        let legacy: BTreeSet<&str> = table.legacy.iter().map(|l| l.name.name.as_str()).collect();
        for a in &table.aliases {
            self.check_name("an alias", &a.alias);
            if self.toolset_names.contains(&a.alias.name) {
                self.push(
                    TableErrorKind::AliasShadowsToolset,
                    a.alias.pos,
                    format!(
                        "alias `{}` has the name of a toolset; the toolset would always win",
                        a.alias.name
                    ),
                );
            } else if legacy.contains(a.alias.name.as_str()) {
                self.push(
                    TableErrorKind::DuplicateName,
                    a.alias.pos,
                    format!("alias `{}` has the name of a legacy name", a.alias.name),
                );
            }
            if self.toolset_names.contains(&a.target.name) {
                continue;
            }
            let message =
                if let Some(next) = table.aliases.iter().find(|b| b.alias.name == a.target.name) {
                    format!(
                        "alias `{}` points at `{}`, which is itself an alias; point at `{}`",
                        a.alias.name, a.target.name, next.target.name
                    )
                } else {
                    format!(
                        "alias `{}` points at unknown toolset `{}`{}",
                        a.alias.name,
                        a.target.name,
                        hint(
                            &a.target.name,
                            self.toolset_names.iter().map(String::as_str)
                        )
                    )
                };
            self.push(TableErrorKind::AliasTargetUnknown, a.target.pos, message);
        }
    }

    /// Reports one cycle per back edge of a depth-first walk over `includes`
    /// (aliases followed), each as `a -> b -> a`, at the include closing it.
    fn check_cycles(&mut self, toolsets: &[ToolsetDef]) {
        let by_name: BTreeMap<&str, &ToolsetDef> =
            toolsets.iter().map(|t| (t.name.name.as_str(), t)).collect();
        let aliases: BTreeMap<&str, &str> = self
            .table
            .aliases
            .iter()
            .map(|a| (a.alias.name.as_str(), a.target.name.as_str()))
            .collect();
        let target = |name: &str| -> Option<&ToolsetDef> {
            by_name
                .get(name)
                .or_else(|| aliases.get(name).and_then(|t| by_name.get(t)))
                .copied()
        };

        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnPath,
            Done,
        }
        let mut mark: BTreeMap<&str, Mark> = by_name.keys().map(|k| (*k, Mark::New)).collect();
        let mut found: BTreeSet<Vec<String>> = BTreeSet::new();

        for root in by_name.values() {
            if mark.get(root.name.name.as_str()) != Some(&Mark::New) {
                continue;
            }
            // Iterative DFS: (toolset, index of the next include to follow).
            let mut stack: Vec<(&ToolsetDef, usize)> = vec![(root, 0)];
            mark.insert(root.name.name.as_str(), Mark::OnPath);
            while let Some(top) = stack.last_mut() {
                let (node, next) = (top.0, top.1);
                let Some(inc) = node.includes.get(next) else {
                    mark.insert(node.name.name.as_str(), Mark::Done);
                    stack.pop();
                    continue;
                };
                top.1 += 1;
                if is_all_toolsets(&inc.name) {
                    continue; // reported as a reserved name
                }
                let Some(child) = target(&inc.name) else {
                    continue;
                };
                match mark.get(child.name.name.as_str()) {
                    Some(Mark::New) => {
                        mark.insert(child.name.name.as_str(), Mark::OnPath);
                        stack.push((child, 0));
                    }
                    Some(Mark::OnPath) => {
                        let start = stack
                            .iter()
                            .position(|(t, _)| t.name.name == child.name.name)
                            .unwrap_or(0);
                        let mut path: Vec<String> = stack[start..]
                            .iter()
                            .map(|(t, _)| t.name.name.clone())
                            .collect();
                        path.push(child.name.name.clone());
                        let mut key = path[..path.len() - 1].to_vec();
                        if let Some(min) = (0..key.len()).min_by_key(|&i| &key[i]) {
                            key.rotate_left(min);
                        }
                        if found.insert(key) {
                            let message = format!("include cycle: {}", path.join(" -> "));
                            self.push(TableErrorKind::IncludeCycle, inc.pos, message);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Checks a parsed table against the tools the crate registers.
///
/// Returns every problem found (empty = valid), sorted by position. Checks:
/// unknown tools and toolsets (with a did-you-mean suggestion), include cycles
/// (reported as `a -> b -> a`), aliases pointing nowhere or at another alias,
/// aliases named like a toolset, duplicate names across toolsets, bundles and
/// legacy names, duplicate entries within one list, reserved and malformed
/// names, and webhook-based bundles that add extras.
pub fn validate(table: &Table, known_tools: &[&str]) -> Vec<TableError> {
    let toolsets = table.expanded_toolsets();
    let mut c = Checker {
        table,
        known_tools: known_tools.iter().copied().collect(),
        toolset_names: toolsets.iter().map(|t| t.name.name.clone()).collect(),
        alias_names: table.aliases.iter().map(|a| a.alias.name.clone()).collect(),
        errors: Vec::new(),
    };

    c.check_tool_list("`core`", &table.core);
    c.check_tool_list("`webhook_safe`", &table.webhook_safe);
    for t in &table.toolsets {
        c.check_name("a toolset", &t.name);
        c.check_tool_list(&format!("toolset `{}`", t.name.name), &t.tools);
        c.check_includes(t);
    }
    for p in &table.platforms {
        c.check_name("a platform", &p.name);
        c.check_tool_list(&format!("platform `{}` extras", p.name.name), &p.extras);
        if p.base == BundleBase::Core {
            let core: BTreeSet<&str> = table.core.iter().map(|e| e.name.as_str()).collect();
            for extra in p.extras.iter().filter(|e| core.contains(e.name.as_str())) {
                c.push(
                    TableErrorKind::DuplicateEntry,
                    extra.pos,
                    format!(
                        "platform `{}` extra `{}` is already in `core`",
                        p.name.name, extra.name
                    ),
                );
            }
        } else if let Some(first) = p.extras.first() {
            c.push(
                TableErrorKind::WebhookBundleExtras,
                first.pos,
                format!(
                    "platform `{}` is built on `webhook_safe` and may not add extras; \
                     add read-only tools to `webhook_safe` instead",
                    p.name.name
                ),
            );
        }
    }
    for l in &table.legacy {
        c.check_name("a legacy name", &l.name);
        c.check_tool_list(&format!("legacy name `{}`", l.name.name), &l.tools);
    }
    c.check_duplicates(&toolsets);
    c.check_aliases();
    c.check_cycles(&toolsets);

    let mut errors = c.errors;
    errors.sort_by_key(|a| (a.line, a.column, a.kind));
    errors
}

// ---------------------------------------------------------------------------
// Code generation
// ---------------------------------------------------------------------------

/// Rust source for a `static` `hermes_runtime::toolsets::StaticTable` holding `table`
/// (declared toolsets plus generated bundles, sorted by name), for a build
/// script to write into `OUT_DIR` and the crate to `include!`: the
/// [`table_source`] the registry holds, behind a `// @generated` line.
///
/// `types` is the path the generated code uses for the `resolve` types (for
/// example `crate::resolve`); `item` is the name of the generated static.
/// The output is deterministic and rustfmt-independent.
pub fn emit_rust(table: &Table, types: &str, item: &str) -> String {
    format!(
        "// @generated from toolsets.toml by table::emit_rust. Do not edit.\n{}",
        table_source(table, types, item)
    )
}

/// The `static` of [`emit_rust`], without its header line: what the
/// registry (`generate`) writes.
pub fn table_source(table: &Table, types: &str, item: &str) -> String {
    fn list(out: &mut String, entries: &[Entry]) {
        out.push_str("&[");
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&format!("{:?}", e.name));
        }
        out.push(']');
    }

    let mut out = String::new();
    out.push_str(&format!(
        "pub static {item}: {types}::StaticTable = {types}::StaticTable {{\n"
    ));
    out.push_str("    toolsets: &[\n");
    for t in table.expanded_toolsets() {
        out.push_str(&format!(
            "        {types}::StaticToolset {{\n            name: {:?},\n            description: {:?},\n            tools: ",
            t.name.name, t.description
        ));
        list(&mut out, &t.tools);
        out.push_str(",\n            includes: ");
        list(&mut out, &t.includes);
        out.push_str(&format!(
            ",\n            instructional: {},\n            posture: {},\n        }},\n",
            t.instructional, t.posture
        ));
    }
    out.push_str("    ],\n");
    for (field, entries) in [("core", &table.core), ("webhook_safe", &table.webhook_safe)] {
        out.push_str(&format!("    {field}: "));
        list(&mut out, entries);
        out.push_str(",\n");
    }
    out.push_str("    legacy: &[\n");
    for l in &table.legacy {
        out.push_str(&format!(
            "        {types}::StaticLegacy {{ name: {:?}, tools: ",
            l.name.name
        ));
        list(&mut out, &l.tools);
        out.push_str(" },\n");
    }
    out.push_str("    ],\n    aliases: &[\n");
    for a in &table.aliases {
        out.push_str(&format!(
            "        {types}::StaticAlias {{ alias: {:?}, target: {:?} }},\n",
            a.alias.name, a.target.name
        ));
    }
    out.push_str("    ],\n};\n");
    out
}
