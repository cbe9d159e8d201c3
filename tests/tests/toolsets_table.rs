//! Tests of the build-time toolset table: parsing, validation, resolution (through the run-time API), and the real `toolsets.toml`.

use std::collections::BTreeSet;

use hermes_build_tools::toolsets::{
    did_you_mean, parse_table, validate, BundleBase, Table, TableError, TableErrorKind as K,
};

mod common;
use common::resolve_all;

/// The tools this project has or is building.
const PROJECT_TOOLS: [&str; 13] = [
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "terminal",
    "process",
    "web_search",
    "web_extract",
    "skills_list",
    "skill_view",
    "todo",
    "memory",
    "clarify",
];

/// Tools that write files or run commands: never webhook-safe.
const WRITE_OR_EXEC: [&str; 4] = ["write_file", "patch", "terminal", "process"];

const REAL: &str = include_str!("../fixtures/reference-toolsets.toml");

fn parse(text: &str) -> Table {
    match parse_table(text) {
        Ok(t) => t,
        Err(e) => panic!("parse failed: {e:?}"),
    }
}

fn check(text: &str, known: &[&str]) -> Vec<TableError> {
    validate(&parse(text), known)
}

// ---------------------------------------------------------------------------
// The real toolsets.toml
// ---------------------------------------------------------------------------

#[test]
fn real_file_validates_against_project_tools() {
    let table = parse(REAL);
    let errors = validate(&table, &PROJECT_TOOLS);
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn real_file_names_only_project_tools() {
    let table = parse(REAL);
    let known: BTreeSet<&str> = PROJECT_TOOLS.into_iter().collect();
    let mut named = Vec::new();
    named.extend(&table.core);
    named.extend(&table.webhook_safe);
    for t in &table.toolsets {
        named.extend(&t.tools);
    }
    for p in &table.platforms {
        named.extend(&p.extras);
    }
    for l in &table.legacy {
        named.extend(&l.tools);
    }
    for e in named {
        assert!(known.contains(e.name.as_str()), "{} at {:?}", e.name, e.pos);
    }
    for (name, tools) in resolve_all(&table) {
        for t in tools {
            assert!(known.contains(t.as_str()), "{name} resolves to {t}");
        }
    }
}

#[test]
fn real_file_webhook_safe_is_read_only() {
    let table = parse(REAL);
    for e in &table.webhook_safe {
        assert!(!WRITE_OR_EXEC.contains(&e.name.as_str()), "{}", e.name);
    }
    let resolved = resolve_all(&table);
    let webhook = &resolved["hermes-webhook"];
    assert_eq!(webhook, &["clarify", "web_extract", "web_search"]);
    for t in webhook {
        assert!(!WRITE_OR_EXEC.contains(&t.as_str()));
    }
    let safe = &resolved["safe"];
    for t in safe {
        assert!(!WRITE_OR_EXEC.contains(&t.as_str()), "safe has {t}");
    }
}

#[test]
fn real_file_shape() {
    let table = parse(REAL);
    let resolved = resolve_all(&table);
    let core: Vec<String> = {
        let mut c: Vec<String> = table.core.iter().map(|e| e.name.clone()).collect();
        c.sort();
        c
    };
    // Every reference tool we have is core in the reference.
    let mut project_tools = PROJECT_TOOLS.map(String::from).to_vec();
    project_tools.sort();
    assert_eq!(core, project_tools);
    for p in &table.platforms {
        let name = p.bundle_name();
        match p.base {
            BundleBase::Core => assert_eq!(resolved[&name], core, "{name}"),
            BundleBase::WebhookSafe => assert_eq!(name, "hermes-webhook"),
        }
    }
    assert_eq!(resolved["hermes-gateway"], core);
    assert_eq!(
        resolved["debugging"],
        [
            "patch",
            "process",
            "read_file",
            "search_files",
            "terminal",
            "web_extract",
            "web_search",
            "write_file"
        ]
    );
    assert_eq!(resolved["safe"], ["web_extract", "web_search"]);
    // The editor bundle is core without the interactive clarify.
    let core_but_clarify: Vec<String> = core.iter().filter(|t| *t != "clarify").cloned().collect();
    assert_eq!(resolved["hermes-acp"], core_but_clarify);

    let find = |n: &str| table.toolsets.iter().find(|t| t.name.name == n);
    assert!(find("skills").is_some_and(|t| t.instructional));
    assert!(find("coding").is_some_and(|t| t.posture && !t.instructional));
    let instructional: Vec<&str> = table
        .toolsets
        .iter()
        .filter(|t| t.instructional)
        .map(|t| t.name.name.as_str())
        .collect();
    assert_eq!(instructional, ["skills"]);
    let legacy: Vec<&str> = table.legacy.iter().map(|l| l.name.name.as_str()).collect();
    assert_eq!(
        legacy,
        ["file_tools", "skills_tools", "terminal_tools", "web_tools"]
    );
}

// ---------------------------------------------------------------------------
// Parse errors carry line and column
// ---------------------------------------------------------------------------

#[test]
fn parse_errors_are_located() {
    // (toml, line, column, message fragment)
    let cases: &[(&str, usize, usize, &str)] = &[
        (
            "[toolsets.web]\ndescription = \"d\"\ntoolz = [\"a\"]\n",
            3,
            1,
            "unknown field `toolz`",
        ),
        (
            "core = [\"a\"]\n[toolsets.web]\ndescription = 3\n",
            3,
            15,
            "invalid type",
        ),
        (
            "[toolsets.web]\ndescription = \"d\"\n[toolsets.web]\ndescription = \"e\"\n",
            3,
            11,
            "duplicate key",
        ),
        (
            "[toolset.web]\ndescription = \"d\"\n",
            1,
            2,
            "unknown field",
        ),
        ("core = [\"a\",\n", 1, 13, ""),
        (
            "[platforms.x]\nbase = \"everything\"\n",
            2,
            8,
            "unknown variant",
        ),
        ("[aliases]\nx = 1\n", 2, 5, "invalid type"),
        // The agent-loop tools are the runtime's `AGENT_LOOP_TOOLS`, not a key.
        (
            "core = [\"a\"]\nagent_loop = [\"todo\"]\n",
            2,
            1,
            "unknown field `agent_loop`",
        ),
    ];
    for (text, line, column, fragment) in cases {
        let errors = match parse_table(text) {
            Ok(_) => panic!("{text:?} parsed"),
            Err(e) => e,
        };
        assert_eq!(errors.len(), 1, "{text:?}");
        let e = &errors[0];
        assert_eq!(e.kind, K::Parse, "{text:?}");
        assert_eq!((e.line, e.column), (*line, *column), "{text:?}: {e}");
        assert!(e.message.contains(fragment), "{text:?}: {}", e.message);
        assert!(!e.message.contains('\n'), "{text:?}: message is one line");
    }
}

#[test]
fn a_toolset_without_a_description_is_an_error_unless_it_extends_a_base() {
    // Parsed (a table that `builds_on` a crate may extend its toolsets
    // without describing them), then refused by validation, at its name.
    let table = parse_table("[toolsets.web]\ntools = [\"a\"]\n").unwrap();
    let errors = validate(&table, &["a"]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, K::MissingDescription);
    assert_eq!((errors[0].line, errors[0].column), (1, 11));
    assert!(errors[0]
        .message
        .contains("toolset `web` needs a description"));
}

#[test]
fn empty_file_is_an_empty_table() {
    let table = parse("");
    assert_eq!(table, Table::default());
    assert!(validate(&table, &[]).is_empty());
    assert!(resolve_all(&table).is_empty());
}

#[test]
fn positions_count_characters_not_bytes() {
    let text = "[toolsets.x]\ndescription = \"é\"\ntools = [\"é\", \"nope\"]\n";
    let errors = check(text, &["é"]);
    assert_eq!(errors.len(), 1);
    // `tools = ["é", "nope"]`: the second entry's quote is the 15th character.
    assert_eq!((errors[0].line, errors[0].column), (3, 15));
}

#[test]
fn entries_keep_positions() {
    let table =
        parse("core = [\"a\", \"b\"]\n\n[toolsets.t]\ndescription = \"d\"\nincludes = [\"u\"]\n");
    let core: Vec<(usize, usize)> = table
        .core
        .iter()
        .map(|e| (e.pos.line, e.pos.column))
        .collect();
    assert_eq!(core, [(1, 9), (1, 14)]);
    assert_eq!(
        (
            table.toolsets[0].name.pos.line,
            table.toolsets[0].name.pos.column
        ),
        (3, 11)
    );
    assert_eq!(
        (
            table.toolsets[0].includes[0].pos.line,
            table.toolsets[0].includes[0].pos.column
        ),
        (5, 13)
    );
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

const KNOWN: [&str; 6] = [
    "web_search",
    "web_extract",
    "terminal",
    "read_file",
    "write_file",
    "clarify",
];

/// One validation case: file, expected (kind, line, column, message fragment).
type Case = (&'static str, &'static [(K, usize, usize, &'static str)]);

#[test]
fn validation_cases() {
    let cases: &[Case] = &[
        // A valid table with a diamond: no error.
        (
            r#"
core = ["web_search", "terminal"]
[toolsets.top]
description = "t"
includes = ["left", "right"]
[toolsets.left]
description = "l"
includes = ["bottom"]
[toolsets.right]
description = "r"
includes = ["bottom"]
[toolsets.bottom]
description = "b"
tools = ["terminal"]
"#,
            &[],
        ),
        // Unknown tool, with and without a suggestion.
        (
            r#"
[toolsets.web]
description = "w"
tools = ["web_serch", "zzz"]
"#,
            &[
                (
                    K::UnknownTool,
                    4,
                    10,
                    "unknown tool `web_serch`; did you mean `web_search`?",
                ),
                (K::UnknownTool, 4, 23, "unknown tool `zzz`"),
            ],
        ),
        // A toolset named where a tool is due, and a tool where a toolset is due.
        (
            r#"
[toolsets.web]
description = "w"
tools = ["web_search"]
[toolsets.x]
description = "x"
tools = ["web"]
includes = ["terminal"]
"#,
            &[
                (
                    K::UnknownTool,
                    7,
                    10,
                    "`web` is a toolset: put it in `includes`",
                ),
                (
                    K::UnknownToolset,
                    8,
                    13,
                    "`terminal` is a tool: put it in `tools`",
                ),
            ],
        ),
        // Unknown include with suggestion.
        (
            r#"
[toolsets.files]
description = "f"
tools = ["read_file"]
[toolsets.x]
description = "x"
includes = ["fiels"]
"#,
            &[(
                K::UnknownToolset,
                7,
                13,
                "includes unknown toolset `fiels`; did you mean `files`?",
            )],
        ),
        // Cycle of three, reported once, at the include closing it.
        (
            r#"
[toolsets.a]
description = "a"
includes = ["b"]
[toolsets.b]
description = "b"
includes = ["c"]
[toolsets.c]
description = "c"
includes = ["a"]
"#,
            &[(K::IncludeCycle, 10, 13, "include cycle: a -> b -> c -> a")],
        ),
        // Self-include.
        (
            r#"
[toolsets.me]
description = "m"
includes = ["me"]
"#,
            &[(K::IncludeCycle, 4, 13, "include cycle: me -> me")],
        ),
        // A cycle through an alias.
        (
            r#"
[toolsets.a]
description = "a"
includes = ["bee"]
[toolsets.b]
description = "b"
includes = ["a"]
[aliases]
bee = "b"
"#,
            &[(K::IncludeCycle, 7, 13, "include cycle: a -> b -> a")],
        ),
        // Aliases: nowhere (with hint), at another alias, named like a toolset.
        (
            r#"
[toolsets.web]
description = "w"
[toolsets.file]
description = "f"
[aliases]
www = "wbe"
w = "www"
file = "web"
"#,
            &[
                (
                    K::AliasShadowsToolset,
                    9,
                    1,
                    "alias `file` has the name of a toolset",
                ),
                (
                    K::AliasTargetUnknown,
                    7,
                    7,
                    "unknown toolset `wbe`; did you mean `web`?",
                ),
                (
                    K::AliasTargetUnknown,
                    8,
                    5,
                    "`www`, which is itself an alias; point at `wbe`",
                ),
            ],
        ),
        // Duplicate names: a declared toolset and a platform bundle; a legacy
        // name and a toolset; an alias and a legacy name.
        (
            r#"
core = ["terminal"]
[toolsets."hermes-cli"]
description = "c"
[toolsets.web]
description = "w"
[platforms.cli]
[legacy]
web = ["web_search"]
old = ["web_search"]
[aliases]
old = "web"
"#,
            &[
                (
                    K::DuplicateName,
                    7,
                    12,
                    "platform bundle `hermes-cli` has the name of the toolset defined at line 3",
                ),
                (
                    K::DuplicateName,
                    9,
                    1,
                    "legacy name `web` has the name of the toolset defined at line 5",
                ),
                (
                    K::DuplicateName,
                    12,
                    1,
                    "alias `old` has the name of a legacy name",
                ),
            ],
        ),
        // Duplicate entries in one list; an extra already in core.
        (
            r#"
core = ["terminal", "terminal"]
[toolsets.x]
description = "x"
tools = ["clarify", "clarify"]
includes = ["y", "y"]
[toolsets.y]
description = "y"
[platforms.p]
extras = ["terminal"]
"#,
            &[
                (
                    K::DuplicateEntry,
                    2,
                    21,
                    "`core` lists tool `terminal` twice",
                ),
                (K::DuplicateEntry, 5, 21, "lists tool `clarify` twice"),
                (K::DuplicateEntry, 6, 18, "includes `y` twice"),
                (
                    K::DuplicateEntry,
                    10,
                    11,
                    "extra `terminal` is already in `core`",
                ),
            ],
        ),
        // Reserved and malformed names; including `all`.
        (
            r#"
[toolsets.all]
description = "a"
[toolsets."has space"]
description = "s"
[toolsets.x]
description = "x"
includes = ["*"]
[aliases]
"*" = "x"
"#,
            &[
                (K::ReservedName, 2, 11, "`all` means every toolset"),
                (
                    K::InvalidName,
                    4,
                    11,
                    "`has space` is not a valid name for a toolset",
                ),
                (K::ReservedName, 8, 13, "includes `*`"),
                (K::ReservedName, 10, 1, "`*` means every toolset"),
            ],
        ),
        // A webhook-based bundle may not widen the trust boundary.
        (
            r#"
webhook_safe = ["web_search"]
[platforms.webhook]
base = "webhook_safe"
extras = ["terminal"]
"#,
            &[(K::WebhookBundleExtras, 5, 11, "may not add extras")],
        ),
        // Unknown tools in every list kind.
        (
            r#"
core = ["clarifi"]
webhook_safe = ["read_fle"]
[platforms.p]
extras = ["xx"]
[legacy]
file_tools = ["write_fil"]
"#,
            &[
                (
                    K::UnknownTool,
                    2,
                    9,
                    "`core` names unknown tool `clarifi`; did you mean `clarify`?",
                ),
                (K::UnknownTool, 3, 17, "did you mean `read_file`?"),
                (
                    K::UnknownTool,
                    5,
                    11,
                    "platform `p` extras names unknown tool `xx`",
                ),
                (K::UnknownTool, 7, 15, "did you mean `write_file`?"),
            ],
        ),
    ];

    for (i, (text, expected)) in cases.iter().enumerate() {
        let errors = check(text, &KNOWN);
        assert_eq!(
            errors.len(),
            expected.len(),
            "case {i}: {:#?}",
            errors.iter().map(ToString::to_string).collect::<Vec<_>>()
        );
        let mut errors = errors;
        errors.sort_by_key(|e| (e.kind, e.line, e.column));
        let mut expected = expected.to_vec();
        expected.sort_by_key(|(k, l, c, _)| (*k, *l, *c));
        for (e, (kind, line, column, fragment)) in errors.iter().zip(expected) {
            assert_eq!(e.kind, kind, "case {i}: {e}");
            assert_eq!((e.line, e.column), (line, column), "case {i}: {e}");
            assert!(
                e.message.contains(fragment),
                "case {i}: {e}\nwanted: {fragment}"
            );
        }
    }
}

#[test]
fn errors_come_sorted_by_position_and_display_their_place() {
    let errors = check(
        "core = [\"zz1\"]\n[toolsets.a]\ndescription = \"a\"\ntools = [\"zz2\"]\n",
        &KNOWN,
    );
    let places: Vec<(usize, usize)> = errors.iter().map(|e| (e.line, e.column)).collect();
    assert_eq!(places, [(1, 9), (4, 10)]);
    assert_eq!(
        errors[0].to_string(),
        "toolsets.toml:1:9: unknown_tool: `core` names unknown tool `zz1`"
    );
}

#[test]
fn error_kinds_have_stable_names() {
    let kinds = [
        (K::Parse, "parse"),
        (K::UnknownTool, "unknown_tool"),
        (K::UnknownToolset, "unknown_toolset"),
        (K::IncludeCycle, "include_cycle"),
        (K::AliasTargetUnknown, "alias_target_unknown"),
        (K::AliasShadowsToolset, "alias_shadows_toolset"),
        (K::DuplicateName, "duplicate_name"),
        (K::DuplicateEntry, "duplicate_entry"),
        (K::ReservedName, "reserved_name"),
        (K::InvalidName, "invalid_name"),
        (K::WebhookBundleExtras, "webhook_bundle_extras"),
    ];
    for (k, s) in kinds {
        assert_eq!(k.as_str(), s);
        assert_eq!(k.to_string(), s);
    }
}

#[test]
fn two_separate_cycles_are_both_reported() {
    let errors = check(
        r#"
[toolsets.a]
description = "a"
includes = ["b"]
[toolsets.b]
description = "b"
includes = ["a"]
[toolsets.x]
description = "x"
includes = ["y", "a"]
[toolsets.y]
description = "y"
includes = ["x"]
"#,
        &[],
    );
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        ["include cycle: a -> b -> a", "include cycle: x -> y -> x"]
    );
}

#[test]
fn did_you_mean_cases() {
    let candidates = [
        "web_search",
        "web_extract",
        "terminal",
        "file",
        "files",
        "web",
    ];
    let cases: &[(&str, Option<&str>)] = &[
        ("web_serch", Some("web_search")),
        ("wbe", Some("web")),
        ("WEB", Some("web")),
        ("termnial", Some("terminal")),
        ("fiel", Some("file")),
        ("filez", Some("file")),
        ("web", None), // itself is not a suggestion
        ("xyz", None),
        ("search", Some("web_search")), // one end of a longer name
        ("", None),
    ];
    for (name, want) in cases {
        assert_eq!(did_you_mean(name, candidates), *want, "{name}");
    }
}

// ---------------------------------------------------------------------------
// Static resolution
// ---------------------------------------------------------------------------

#[test]
fn resolution_at_run_time() {
    let table = parse(
        r#"
core = ["terminal", "read_file"]
webhook_safe = ["web_search"]
[toolsets.top]
description = "diamond top"
tools = ["t1"]
includes = ["left", "right"]
[toolsets.left]
description = "l"
tools = ["shared", "l1"]
includes = ["bottom"]
[toolsets.right]
description = "r"
tools = ["r1"]
includes = ["bottom"]
[toolsets.bottom]
description = "b"
tools = ["z1", "shared"]
[toolsets.cyc_a]
description = "a"
tools = ["a1"]
includes = ["cyc_b"]
[toolsets.cyc_b]
description = "b"
tools = ["b1"]
includes = ["cyc_a", "nowhere"]
[toolsets.via_alias]
description = "v"
includes = ["bot"]
[toolsets.everything]
description = "e"
tools = ["e1"]
includes = ["all"]
[platforms.cli]
extras = ["x1"]
[platforms.webhook]
base = "webhook_safe"
[aliases]
bot = "bottom"
"#,
    );
    let r = resolve_all(&table);
    let cases: &[(&str, &[&str])] = &[
        ("top", &["l1", "r1", "shared", "t1", "z1"]),
        ("cyc_a", &["a1", "b1"]),
        ("cyc_b", &["a1", "b1"]),
        ("via_alias", &["shared", "z1"]),
        ("hermes-cli", &["read_file", "terminal", "x1"]),
        ("hermes-webhook", &["web_search"]),
        (
            "everything",
            &[
                "a1",
                "b1",
                "e1",
                "l1",
                "r1",
                "read_file",
                "shared",
                "t1",
                "terminal",
                "web_search",
                "x1",
                "z1",
            ],
        ),
    ];
    for (name, want) in cases {
        assert_eq!(r[*name], *want, "{name}");
    }
    // Exactly the declared toolsets and bundles resolve: aliases are not
    // toolsets of their own.
    let resolved: Vec<&str> = r.keys().map(String::as_str).collect();
    assert_eq!(
        resolved,
        [
            "bottom",
            "cyc_a",
            "cyc_b",
            "everything",
            "hermes-cli",
            "hermes-webhook",
            "left",
            "right",
            "top",
            "via_alias",
        ]
    );
}

#[test]
fn generated_bundles_keep_core_order_then_extras() {
    let table = parse(
        "core = [\"b\", \"a\"]\n[platforms.x]\ndescription = \"X\"\nextras = [\"c\"]\n[platforms.y]\n",
    );
    let expanded = table.expanded_toolsets();
    let x = &expanded[0];
    assert_eq!(x.name.name, "hermes-x");
    assert_eq!(x.description, "X");
    assert_eq!(x.platform.as_deref(), Some("x"));
    let tools: Vec<&str> = x.tools.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(tools, ["b", "a", "c"]);
    assert!(expanded[1].description.contains('y'));
}

#[test]
fn module_doc_example_is_valid() {
    // The format example in `toolsets/mod.rs`'s module docs must parse and validate.
    let source = include_str!("../../build-tools/src/toolsets/mod.rs");
    let mut example = String::new();
    let mut inside = false;
    for line in source.lines().filter_map(|l| l.strip_prefix("//!")) {
        let line = line.strip_prefix(' ').unwrap_or(line);
        match (inside, line.trim()) {
            (false, "```toml") => inside = true,
            (true, "```") => break,
            (true, _) => {
                example.push_str(line);
                example.push('\n');
            }
            _ => {}
        }
    }
    assert!(example.contains("[platforms.cli]"), "{example}");
    let table = parse(&example);
    let known = [
        "web_search",
        "read_file",
        "terminal",
        "clarify",
        "todo",
        "skills_list",
    ];
    let errors = validate(&table, &known);
    assert!(errors.is_empty(), "{errors:#?}");
    let resolved = resolve_all(&table);
    assert_eq!(resolved["hermes-webhook"], ["clarify", "web_search"]);
    assert_eq!(
        resolved["hermes-cli"],
        ["clarify", "read_file", "terminal", "web_search"]
    );
    assert_eq!(resolved["debugging"], ["terminal", "web_search"]);
}

#[test]
fn emitted_rust_matches_its_snapshot() {
    // The snapshot's contents, `snapshots/toolsets_table__emitted_table.snap.rs`,
    // are `include!`d by tests/toolsets_resolve.rs, so they are also compiled
    // and checked against the run-time API.
    let emitted =
        hermes_build_tools::toolsets::emit_rust(&parse(REAL), "hermes_runtime::__private", "TABLE")
            .unwrap();
    insta::assert_binary_snapshot!("emitted_table.rs", emitted.into_bytes());
}

#[test]
fn emitted_rust_escapes_strings() {
    let table = parse(
        "[toolsets.q]\ndescription = \"say \\\"hi\\\" \\\\ back\\nslash\"\ntools = [\"a\"]\n[aliases]\nqq = \"q\"\n[legacy]\nold = [\"a\"]\n",
    );
    let code = hermes_build_tools::toolsets::emit_rust(&table, "crate::resolve", "T").unwrap();
    assert!(
        code.contains(r#"description: "say \"hi\" \\ back\nslash","#),
        "{code}"
    );
    // rustfmt lays the entries out one field a line.
    for field in [
        "crate::resolve::StaticAlias {",
        r#"alias: "qq","#,
        r#"target: "q","#,
        "crate::resolve::StaticLegacy {",
        r#"name: "old","#,
        r#"tools: &["a"],"#,
    ] {
        assert!(code.contains(field), "{field} missing from {code}");
    }
    assert!(code.starts_with("// @generated"));
    assert!(code.contains("pub static T: crate::resolve::StaticTable"));
}
