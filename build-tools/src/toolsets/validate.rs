//! Validating a parsed [`Table`]: known tools and toolsets, no include
//! cycle, and the rest of the table's rules.

use std::collections::{BTreeMap, BTreeSet};

use hermes_tool_facts::is_all_toolsets;

use super::*;

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
        known_tools: known_tools
            .iter()
            .copied()
            .chain(table.base.tools.iter().map(|(t, _, _)| t.as_str()))
            .collect(),
        toolset_names: toolsets
            .iter()
            .map(|t| t.name.name.clone())
            .chain(table.base.toolsets.iter().cloned())
            .collect(),
        alias_names: table
            .aliases
            .iter()
            .map(|a| a.alias.name.clone())
            .chain(table.base.aliases.iter().cloned())
            .collect(),
        errors: Vec::new(),
    };

    c.check_tool_list("`core`", &table.core);
    c.check_tool_list("`webhook_safe`", &table.webhook_safe);
    for t in &table.toolsets {
        c.check_name("a toolset", &t.name);
        if t.description.trim().is_empty() && !table.base.toolsets.contains(&t.name.name) {
            c.push(
                TableErrorKind::MissingDescription,
                t.name.pos,
                format!(
                    "toolset `{}` needs a description (only a toolset of a crate in `builds_on` may be extended without one)",
                    t.name.name
                ),
            );
        }
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
