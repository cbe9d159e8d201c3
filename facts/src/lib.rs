//! The facts of the tool contract that both sides need: the run time
//! (`hermes-runtime`) and the build time (`hermes-tool-model`, so the
//! `#[hermes_tool]` macro, and `hermes-build-tools`). Each is defined here
//! once and imported everywhere else.
//!
//! A leaf crate of plain constants, the name rule and the did-you-mean
//! policy, depending only on `strsim`:
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

/// The one did-you-mean policy: up to `n` of `candidates` that `name` is
/// likely a slip for, nearest first. A candidate qualifies when it differs
/// from `name` only in case, or by an optimal-string-alignment distance of
/// at most a third of `name`'s length (at least 1), or (for names of four
/// characters or more) when `name` is one of its `_`/`-`-separated ends
/// (`search` for `web_search`, `read` for `read_file`). `name` itself is
/// never suggested.
pub fn suggestions<'c, I>(name: &str, candidates: I, n: usize) -> Vec<&'c str>
where
    I: IntoIterator<Item = &'c str>,
{
    let limit = (name.chars().count() / 3).max(1);
    let lower = name.to_lowercase();
    let is_end = |c: &str| {
        name.chars().count() >= 4
            && c.len() > name.len()
            && ((c.starts_with(name) && c[name.len()..].starts_with(['_', '-']))
                || (c.ends_with(name) && c[..c.len() - name.len()].ends_with(['_', '-'])))
    };
    let mut scored: Vec<(usize, &'c str)> = candidates
        .into_iter()
        .filter(|c| *c != name)
        .filter_map(|c| {
            let d = if c.to_lowercase() == lower {
                0
            } else {
                strsim::osa_distance(name, c)
            };
            if d <= limit {
                Some((d, c))
            } else if is_end(c) {
                // After every near spelling.
                Some((limit + 1, c))
            } else {
                None
            }
        })
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

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

    #[test]
    fn suggestions_rank_near_spellings_before_ends_of_longer_names() {
        let names = [
            "read_file",
            "write_file",
            "search_files",
            "web_search",
            "terminal",
        ];
        assert_eq!(suggestions("termnial", names, 3), ["terminal"]);
        assert_eq!(suggestions("READ_FILE", names, 3), ["read_file"]);
        assert_eq!(suggestions("read", names, 3), ["read_file"]);
        assert_eq!(
            suggestions("search", names, 3),
            ["search_files", "web_search"]
        );
        assert_eq!(
            suggestions("rite_file", names, 3),
            ["write_file", "read_file"]
        );
        assert!(suggestions("terminal", names, 3).is_empty());
        assert!(suggestions("xyz", names, 3).is_empty());
        assert!(suggestions("", names, 3).is_empty());
        // An end must be a whole word of the longer name.
        assert!(suggestions("arch", names, 3).is_empty());
    }
}
