//! What a tool does to the world and whether its calls may overlap:
//! [`ToolEffects`], the one type built-in tools (`#[hermes_tool(read_only,
//! concurrency = "path:path", ...)]`), run-time tools and MCP servers' tools
//! (their `readOnlyHint` / `destructiveHint` / `idempotentHint` /
//! `openWorldHint`) all carry.
//!
//! Forgetting is safe: a tool that states nothing is
//! [`ToolEffects::UNDECLARED`], a writing, destructive, open-world tool whose
//! calls run alone.

use std::borrow::Cow;

/// Whether a tool's calls may run beside other calls.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Concurrency {
    /// Alone: no other call runs beside it (a barrier). The default.
    Exclusive,
    /// Beside any other call that is not exclusive.
    Safe,
    /// Beside calls that do not name the same path: the string parameter
    /// called this holds the path (`write_file`'s `path`); calls naming one
    /// path run in order.
    PerPath(Cow<'static, str>),
}

/// What a tool does, as MCP's tool annotations say it, plus whether its
/// calls may overlap.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolEffects {
    /// It changes nothing (MCP `readOnlyHint`).
    pub read_only: bool,
    /// A change it makes may destroy something (MCP `destructiveHint`;
    /// meaningful only when not `read_only`).
    pub destructive: bool,
    /// A second call with the same arguments changes nothing more (MCP
    /// `idempotentHint`).
    pub idempotent: bool,
    /// It reaches things outside the machine and the profile: the web, other
    /// services (MCP `openWorldHint`).
    pub open_world: bool,
    pub concurrency: Concurrency,
}

impl ToolEffects {
    /// A tool that declared nothing: writing, destructive, open-world,
    /// exclusive (MCP's own defaults for missing hints, and no overlap).
    pub const UNDECLARED: ToolEffects = ToolEffects {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
        concurrency: Concurrency::Exclusive,
    };

    /// Whether its calls may run beside others (`Safe` or `PerPath`).
    pub fn parallel_safe(&self) -> bool {
        !matches!(self.concurrency, Concurrency::Exclusive)
    }

    /// The parameter naming the path its calls are ordered by, if any.
    pub fn path_scope(&self) -> Option<&str> {
        match &self.concurrency {
            Concurrency::PerPath(param) => Some(param),
            _ => None,
        }
    }

    /// An MCP server's annotations, missing hints taking MCP's defaults
    /// (not read-only, destructive, not idempotent, open-world). The calls
    /// may overlap only when the server says read-only or the profile opts
    /// the server in (`parallel`: `supports_parallel_tool_calls` of its
    /// `mcp_servers` entry).
    pub fn from_mcp_hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
        open_world: Option<bool>,
        parallel: bool,
    ) -> ToolEffects {
        let read_only = read_only.unwrap_or(false);
        ToolEffects {
            read_only,
            destructive: !read_only && destructive.unwrap_or(true),
            idempotent: idempotent.unwrap_or(read_only),
            open_world: open_world.unwrap_or(true),
            concurrency: if read_only || parallel {
                Concurrency::Safe
            } else {
                Concurrency::Exclusive
            },
        }
    }
}

impl Default for ToolEffects {
    fn default() -> Self {
        Self::UNDECLARED
    }
}

/// A type `concurrency = "path:NAME"` may name: the path arrives as a JSON
/// string.
#[diagnostic::on_unimplemented(
    message = "`concurrency = \"path:...\"` names a parameter of type `{Self}`, not a string",
    label = "the path scope needs a `String` or `PathBuf` parameter",
    note = "calls are ordered by the path the parameter holds; name a string parameter, or use `concurrency = \"safe\"` / `\"exclusive\"`"
)]
pub trait PathScopeParam {}

impl PathScopeParam for String {}
impl PathScopeParam for std::path::PathBuf {}

#[doc(hidden)]
pub const fn assert_path_scope<T: PathScopeParam>() {}

/// A tool's title for people (MCP `title`) from its name: `read_file` →
/// "Read file", `mcp__github__list_issues` → "Mcp github list issues".
pub fn title_from_name(name: &str) -> String {
    let words: Vec<&str> = name
        .split(['_', '-', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    let mut title = words.join(" ");
    if let Some(first) = title.chars().next() {
        let upper: String = first.to_uppercase().collect();
        title.replace_range(..first.len_utf8(), &upper);
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_names() {
        assert_eq!(title_from_name("read_file"), "Read file");
        assert_eq!(title_from_name("web-search"), "Web search");
        assert_eq!(title_from_name(""), "");
    }

    #[test]
    fn mcp_hints_default_to_writing_and_exclusive() {
        let e = ToolEffects::from_mcp_hints(None, None, None, None, false);
        assert_eq!(e, ToolEffects::UNDECLARED);
        let r = ToolEffects::from_mcp_hints(Some(true), Some(true), None, Some(false), false);
        assert!(r.read_only && !r.destructive && r.idempotent && r.parallel_safe());
        let opted = ToolEffects::from_mcp_hints(None, None, None, None, true);
        assert!(!opted.read_only && opted.parallel_safe());
    }
}
