//! Shared by the toolset tests: a parsed `toolsets.toml` loaded into the
//! run-time API, as the build's generator would emit it.

use std::collections::BTreeMap;

use hermes_build_tools::toolsets as table;
use hermes_runtime::__private::{StaticAlias, StaticLegacy, StaticTable, StaticToolset};
use hermes_runtime::Toolsets;

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn leak_list(v: Vec<String>) -> &'static [&'static str] {
    Box::leak(
        v.into_iter()
            .map(leak)
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

/// What the build's generator does, done at test time with leaked strings.
pub fn static_table_from(table: &table::Table) -> StaticTable {
    let names = |v: &[table::Entry]| leak_list(v.iter().map(|e| e.name.clone()).collect());
    let toolsets: Vec<StaticToolset> = table
        .expanded_toolsets()
        .iter()
        .map(|t| StaticToolset {
            name: leak(t.name.name.clone()),
            description: leak(t.description.clone()),
            tools: names(&t.tools),
            includes: names(&t.includes),
            instructional: t.instructional,
            posture: t.posture,
            stateless: t.stateless,
        })
        .collect();
    let legacy: Vec<StaticLegacy> = table
        .legacy
        .iter()
        .map(|l| StaticLegacy {
            name: leak(l.name.name.clone()),
            tools: names(&l.tools),
        })
        .collect();
    let aliases: Vec<StaticAlias> = table
        .aliases
        .iter()
        .map(|a| StaticAlias {
            alias: leak(a.alias.name.clone()),
            target: leak(a.target.name.clone()),
        })
        .collect();
    StaticTable {
        toolsets: Box::leak(toolsets.into_boxed_slice()),
        core: names(&table.core),
        webhook_safe: names(&table.webhook_safe),
        legacy: Box::leak(legacy.into_boxed_slice()),
        aliases: Box::leak(aliases.into_boxed_slice()),
    }
}

/// Every toolset of `table` (declared and platform bundles, not aliases)
/// → the tools the runtime resolves it to (sorted, deduplicated).
pub fn resolve_all(table: &table::Table) -> BTreeMap<String, Vec<String>> {
    let t = Toolsets::new(static_table_from(table));
    t.toolset_names()
        .into_iter()
        .map(|name| {
            let tools = t.resolve_toolset(&name);
            (name, tools)
        })
        .collect()
}
