//! `allow(NAME = "reason")`: dropping what a tool allows, and warning
//! about allows that suppress nothing.

use std::collections::{BTreeMap, BTreeSet};

use hermes_tool_model::lints::*;

use crate::discover::{DiscoveredTool, Discovery};
use crate::Diagnostic;

/// Drops the diagnostics a tool allows; with `full`, warns about allows
/// that suppressed nothing (a source-only run cannot tell).
pub fn apply_allows(
    discovery: &Discovery,
    diagnostics: Vec<Diagnostic>,
    full: bool,
) -> Vec<Diagnostic> {
    let tools: BTreeMap<&str, &DiscoveredTool> = discovery
        .tools()
        .map(|(_, t)| (t.tool.name.as_str(), t))
        .collect();
    let mut used: BTreeSet<(String, &'static str)> = BTreeSet::new();
    let mut kept: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| {
            let (Some(tool), Some(lint)) = (&d.tool, d.lint) else {
                return true;
            };
            let allowed = tools
                .get(tool.as_str())
                .is_some_and(|t| t.tool.attr.allow.iter().any(|a| a.lint == lint));
            if allowed {
                used.insert((tool.clone(), lint));
            }
            !allowed
        })
        .collect();
    if full {
        for t in tools.values() {
            for a in &t.tool.attr.allow {
                if used.contains(&(t.tool.name.clone(), a.lint)) {
                    continue;
                }
                let start = a.span.start();
                kept.push(
                    Diagnostic::warning(format!(
                        "`{}` allows `{}`, which finds nothing to allow",
                        t.tool.name, a.lint
                    ))
                    .at(&t.file, start.line, start.column)
                    .underline(a.lint.chars().count())
                    .label("unused")
                    .help("remove this entry from allow(...)")
                    .tool(&t.tool.name),
                );
                if let Some(d) = kept.last_mut() {
                    d.lint = Some(UNUSED_ALLOW);
                }
            }
        }
    }
    kept
}
