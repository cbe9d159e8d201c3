//! The names of the tool-contract lints (`cargo xtask check-tools`), known
//! here so that `#[hermes_tool(allow(NAME = "reason"))]` is checked by the
//! macro and by the lints against one list.

/// One lint of the tool contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lint {
    /// The stable name, kebab-case (`literal-home-path`).
    pub name: &'static str,
    /// Whether a tool may allow it with `allow(NAME = "reason")`. Lints about
    /// the registry as a whole (duplicate names, the toolset table, invalid
    /// schemas) cannot be allowed: the registry would not work.
    pub allowable: bool,
    /// One line: what the lint enforces.
    pub summary: &'static str,
}

macro_rules! lints {
    ($($konst:ident = $name:literal, $allowable:literal, $summary:literal;)*) => {
        $(
            #[doc = concat!("`", $name, "`: ", $summary)]
            pub const $konst: &str = $name;
        )*
        /// Every lint, in the order of the rules.
        pub const LINTS: &[Lint] = &[$(Lint { name: $name, allowable: $allowable, summary: $summary }),*];
    };
}

lints! {
    FOREIGN_TOOL_IN_DESCRIPTION = "foreign-tool-in-description", true,
        "no description names a tool of another toolset";
    TOOL_NOT_IN_TOOLSET = "tool-not-in-toolset", true,
        "every tool is exposed by at least one toolset";
    UNKNOWN_TOOLSET_ENTRY = "unknown-toolset-entry", false,
        "every toolsets.toml entry names a known tool or toolset";
    DUPLICATE_TOOL_NAME = "duplicate-tool-name", false,
        "tool names are unique (also ignoring case and -/_), and no alias or bridge tool has one";
    INCLUDE_CYCLE = "include-cycle", false,
        "toolset includes have no cycle";
    INSTRUCTIONAL_PAGINATION = "instructional-pagination", true,
        "tools of instructional toolsets take no offset/limit parameters";
    LITERAL_HOME_PATH = "literal-home-path", true,
        "descriptions write the home as {HERMES_HOME}, never ~/.hermes, $HOME or /home/...";
    INVALID_SCHEMA = "invalid-schema", false,
        "each schema is valid JSON Schema and fits function-calling providers";
    REQUIRES_ENV_WITHOUT_CHECK = "requires-env-without-check", true,
        "a tool with requires_env has a check";
    UNDOCUMENTED_PARAMETER = "undocumented-parameter", true,
        "every parameter has a description";
    DIALECT_INCOMPATIBLE = "dialect-incompatible", true,
        "every schema rewrites into each provider dialect";
    INVALID_TOOLSET_TABLE = "invalid-toolset-table", false,
        "toolsets.toml parses and its names are well-formed and unique";
    READ_ONLY_AND_DESTRUCTIVE = "read-only-and-destructive", false,
        "no tool is declared both `read_only` and `destructive`";
    CONCURRENCY_SAFE_WRITE = "concurrency-safe-write", false,
        "`concurrency = \"safe\"` only on `read_only` tools (a writer is scoped by a path or exclusive)";
    UNUSED_ALLOW = "unused-allow", false,
        "an allow(...) in `#[hermes_tool]` suppresses something";
}

/// The lint called `name` (kebab-case; `snake_case` is accepted too).
pub fn find_lint(name: &str) -> Option<&'static Lint> {
    let name = name.replace('_', "-");
    LINTS.iter().find(|l| l.name == name)
}
