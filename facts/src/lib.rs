//! The facts of the tool contract that both sides need: the run time
//! (`hermes-runtime`) and the build time (`hermes-tool-model`, so the
//! `#[hermes_tool]` macro, and `hermes-build-tools`). Each is defined here
//! once and imported everywhere else.
//!
//! A leaf crate of plain constants and one predicate, with no dependencies:
//! `hermes-tool-model` would be the natural home, but it depends on `syn`,
//! which the runtime must never pull in.

/// Tool names must match this pattern (the function-calling providers' rule).
pub const NAME_PATTERN: &str = "^[a-zA-Z0-9_-]{1,64}$";

/// The longest tool name, in bytes (every allowed character is ASCII).
pub const MAX_NAME_LEN: usize = 64;

/// Whether `c` may appear in a tool name.
pub const fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `name` matches [`NAME_PATTERN`].
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_LEN && name.chars().all(is_name_char)
}

/// The bridge tool that searches the session's catalog of deferred tools.
pub const TOOL_SEARCH: &str = "tool_search";
/// The bridge tool that answers one deferred tool's schema.
pub const TOOL_DESCRIBE: &str = "tool_describe";
/// The bridge tool that calls a deferred tool by name.
pub const TOOL_CALL: &str = "tool_call";
/// The tools progressive disclosure adds to a session (BEHAVIOUR.md §5.6):
/// dispatch answers them itself, and no tool may take one of their names.
pub const BRIDGE_TOOLS: [&str; 3] = [TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL];

/// Names that stand for every toolset, so they cannot name a toolset,
/// alias or legacy entry.
pub const ALL_TOOLSETS: [&str; 2] = ["all", "*"];

/// Whether `name` stands for every toolset ([`ALL_TOOLSETS`]).
pub fn is_all_toolsets(name: &str) -> bool {
    ALL_TOOLSETS.contains(&name)
}

/// Prefix of the platform bundles (`[platforms.cli]` → `hermes-cli`).
pub const BUNDLE_PREFIX: &str = "hermes-";

/// How descriptions write the home of the profile a call runs under:
/// definitions substitute the profile's display home, and the
/// `literal-home-path` lint refuses a literal home path.
pub const HOME_PLACEHOLDER: &str = "{HERMES_HOME}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for ok in ["a", "read_file", "A-9_z", &"x".repeat(MAX_NAME_LEN)] {
            assert!(is_valid_tool_name(ok), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "a.b",
            "é",
            "tool/x",
            &"x".repeat(MAX_NAME_LEN + 1),
        ] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }
}
