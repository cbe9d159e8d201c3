//! Tests of the run-time toolset API against behaviour observed in the reference (hermes-agent 0.19.0).
//!
//! The `REF` table below is a small, hand-written model of the reference's
//! table (same shapes: leaf toolsets, composites, a posture toolset, core-based
//! platform bundles with and without extras, a webhook bundle, a gateway bundle
//! including other bundles, legacy names). Each `observed:` comment records
//! what the reference did for the same input.

use std::sync::Arc;
use std::thread;

use hermes_build_tools::toolsets as table;
use hermes_runtime::__private::{StaticAlias, StaticLegacy, StaticTable, StaticToolset};
use hermes_runtime::{ToolsetInfo, Toolsets};

mod common;
use common::{resolve_all, static_table_from};

const CORE: &[&str] = &[
    "web_search",
    "web_extract",
    "terminal",
    "process",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "vision_analyze",
    "image_generate",
    "skills_list",
    "skill_view",
    "clarify",
];

const REF_TOOLSETS: &[StaticToolset] = &[
    StaticToolset::new("web", "Web research", &["web_search", "web_extract"], &[]),
    StaticToolset::new("search", "Search only", &["web_search"], &[]),
    StaticToolset::new("terminal", "Commands", &["terminal", "process"], &[]),
    StaticToolset::new(
        "file",
        "Files",
        &["read_file", "write_file", "patch", "search_files"],
        &[],
    ),
    StaticToolset::new("vision", "Vision", &["vision_analyze"], &[]),
    StaticToolset::new("image_gen", "Images", &["image_generate"], &[]),
    StaticToolset::new("skills", "Skills", &["skills_list", "skill_view"], &[]).instructional(),
    StaticToolset::new(
        "debugging",
        "Debugging",
        &["terminal", "process"],
        &["web", "file"],
    ),
    StaticToolset::new("safe", "Safe", &[], &["web", "vision", "image_gen"]),
    StaticToolset::new(
        "coding",
        "Coding posture",
        &[
            "web_search",
            "terminal",
            "process",
            "read_file",
            "write_file",
            "patch",
        ],
        &[],
    )
    .posture(),
    StaticToolset::new("hermes-cli", "CLI", CORE, &[]),
    StaticToolset::new(
        "hermes-discord",
        "Discord",
        &[
            "web_search",
            "web_extract",
            "terminal",
            "process",
            "read_file",
            "write_file",
            "patch",
            "search_files",
            "vision_analyze",
            "image_generate",
            "skills_list",
            "skill_view",
            "clarify",
            "discord",
            "discord_admin",
        ],
        &[],
    ),
    StaticToolset::new(
        "hermes-feishu",
        "Feishu",
        &[
            "web_search",
            "web_extract",
            "terminal",
            "process",
            "read_file",
            "write_file",
            "patch",
            "search_files",
            "vision_analyze",
            "image_generate",
            "skills_list",
            "skill_view",
            "clarify",
            "feishu_doc_read",
        ],
        &[],
    ),
    StaticToolset::new(
        "hermes-webhook",
        "Webhook",
        &["web_search", "web_extract", "vision_analyze", "clarify"],
        &[],
    ),
    StaticToolset::new(
        "hermes-gateway",
        "Gateway",
        &[],
        &["hermes-discord", "hermes-feishu", "hermes-webhook"],
    ),
];

const REF: StaticTable = StaticTable {
    toolsets: REF_TOOLSETS,
    core: CORE,
    webhook_safe: &["web_search", "web_extract", "vision_analyze", "clarify"],
    legacy: &[
        StaticLegacy {
            name: "web_tools",
            tools: &["web_search", "web_extract"],
        },
        StaticLegacy {
            name: "file_tools",
            tools: &["read_file", "write_file", "patch", "search_files"],
        },
    ],
    aliases: &[StaticAlias {
        alias: "files",
        target: "file",
    }],
};

fn ts() -> Toolsets {
    Toolsets::new(REF)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The names of the static toolsets of `REF`, sorted.
fn ref_toolset_names() -> Vec<String> {
    let mut names: Vec<String> = REF_TOOLSETS.iter().map(|t| t.name.to_owned()).collect();
    names.sort();
    names
}

fn sorted_core() -> Vec<String> {
    let mut c = strings(CORE);
    c.sort();
    c
}

// ---------------------------------------------------------------------------
// Static table
// ---------------------------------------------------------------------------

#[test]
fn resolve_static_cases() {
    let t = ts();
    let cases: &[(&str, &[&str])] = &[
        ("web", &["web_extract", "web_search"]),
        // observed: safe -> image_generate, vision_analyze, web_extract, web_search
        (
            "safe",
            &[
                "image_generate",
                "vision_analyze",
                "web_extract",
                "web_search",
            ],
        ),
        // observed: debugging -> its tools plus web and file, sorted
        (
            "debugging",
            &[
                "patch",
                "process",
                "read_file",
                "search_files",
                "terminal",
                "web_extract",
                "web_search",
                "write_file",
            ],
        ),
        // observed: an unknown name and the empty name resolve to nothing
        ("nope", &[]),
        ("", &[]),
        // observed: names are case- and space-sensitive
        ("WEB", &[]),
        (" web", &[]),
        // a legacy name is not a toolset
        ("web_tools", &[]),
        // a static alias stands for its target
        (
            "files",
            &["patch", "read_file", "search_files", "write_file"],
        ),
        (
            "hermes-webhook",
            &["clarify", "vision_analyze", "web_extract", "web_search"],
        ),
    ];
    for (name, want) in cases {
        assert_eq!(t.resolve_toolset(name), strings(want), "{name:?}");
    }

    let mut cli = sorted_core();
    assert_eq!(t.resolve_toolset("hermes-cli"), cli);
    cli.extend(strings(&["discord", "discord_admin", "feishu_doc_read"]));
    cli.sort();
    assert_eq!(t.resolve_toolset("hermes-gateway"), cli);
}

#[test]
fn all_and_star_are_every_toolset() {
    let t = ts();
    let all = t.resolve_toolset("all");
    assert_eq!(all, t.resolve_toolset("*"));
    let mut want = sorted_core();
    want.extend(strings(&["discord", "discord_admin", "feishu_doc_read"]));
    want.sort();
    assert_eq!(all, want);
    assert_eq!(t.resolve_multiple_toolsets(&t.toolset_names()), all);
}

#[test]
fn resolve_multiple_cases() {
    let t = ts();
    // observed: [web, nope, terminal, web] -> process, terminal, web_extract, web_search
    assert_eq!(
        t.resolve_multiple_toolsets(&["web", "nope", "terminal", "web"]),
        strings(&["process", "terminal", "web_extract", "web_search"])
    );
    // observed: [] -> []
    assert!(t.resolve_multiple_toolsets::<&str>(&[]).is_empty());
    let owned = vec!["search".to_owned(), "vision".to_owned()];
    assert_eq!(
        t.resolve_multiple_toolsets(&owned),
        strings(&["vision_analyze", "web_search"])
    );
}

#[test]
fn validate_toolset_cases() {
    let t = ts();
    let cases: &[(&str, bool)] = &[
        // observed: all / * are valid
        ("all", true),
        ("*", true),
        ("web", true),
        ("hermes-gateway", true),
        // observed: legacy names are not valid toolsets
        ("web_tools", false),
        // observed: unknown and empty are invalid
        ("nope", false),
        ("", false),
        ("WEB", false),
        // observed: an unregistered hermes-* name is invalid
        ("hermes-foo", false),
        // aliases are valid
        ("files", true),
    ];
    for (name, want) in cases {
        assert_eq!(t.validate_toolset(name), *want, "{name:?}");
    }
}

#[test]
fn get_toolset_info_cases() {
    let t = ts();
    // observed: all, legacy names and unknown names have no info
    for name in ["all", "*", "web_tools", "nope", ""] {
        assert_eq!(t.get_toolset_info(name), None, "{name:?}");
    }
    // observed: safe: no direct tools, three includes, composite, 4 tools
    assert_eq!(
        t.get_toolset_info("safe"),
        Some(ToolsetInfo {
            name: "safe".into(),
            description: "Safe".into(),
            direct_tools: vec![],
            includes: strings(&["web", "vision", "image_gen"]),
            resolved_tools: strings(&[
                "image_generate",
                "vision_analyze",
                "web_extract",
                "web_search"
            ]),
            tool_count: 4,
            is_composite: true,
            instructional: false,
            posture: false,
        })
    );
    // observed: direct tools come back sorted (web_extract before web_search)
    let web = t.get_toolset_info("web");
    assert_eq!(
        web.as_ref().map(|i| i.direct_tools.clone()),
        Some(strings(&["web_extract", "web_search"]))
    );
    assert_eq!(web.map(|i| i.is_composite), Some(false));
    // observed: debugging's direct tools sorted, includes in declared order
    let dbg = t.get_toolset_info("debugging");
    assert_eq!(
        dbg.as_ref()
            .map(|i| (i.direct_tools.clone(), i.includes.clone(), i.tool_count)),
        Some((
            strings(&["process", "terminal"]),
            strings(&["web", "file"]),
            8
        ))
    );
    // flags
    assert_eq!(
        t.get_toolset_info("skills").map(|i| i.instructional),
        Some(true)
    );
    assert_eq!(t.get_toolset_info("coding").map(|i| i.posture), Some(true));
    // an alias reports under its own name with the target's content
    let files = t.get_toolset_info("files");
    assert_eq!(files.as_ref().map(|i| i.name.as_str()), Some("files"));
    assert_eq!(
        files.as_ref().map(|i| i.description.as_str()),
        Some("Files")
    );
    assert_eq!(files.map(|i| i.tool_count), Some(4));
}

#[test]
fn posture_and_instructional_flags() {
    let t = ts();
    // observed: get_toolset("coding")["posture"] is True; web has none
    assert!(t.is_posture("coding"));
    assert!(!t.is_posture("web"));
    assert!(!t.is_posture("nope"));
    assert!(t.is_instructional("skills"));
    assert!(!t.is_instructional("web"));
}

#[test]
fn bundle_non_core_tools_cases() {
    let t = ts();
    let cases: &[(&str, &[&str])] = &[
        // observed: hermes-discord -> discord, discord_admin
        ("hermes-discord", &["discord", "discord_admin"]),
        // observed: hermes-cli -> nothing
        ("hermes-cli", &[]),
        // observed: hermes-gateway -> the extras of the bundles it includes
        (
            "hermes-gateway",
            &["discord", "discord_admin", "feishu_doc_read"],
        ),
        // observed: coding (posture) -> nothing
        ("coding", &[]),
        // observed: hermes-webhook -> nothing (all its tools are core)
        ("hermes-webhook", &[]),
        // observed: unknown -> nothing
        ("nope", &[]),
        // observed: all -> everything minus core
        ("all", &["discord", "discord_admin", "feishu_doc_read"]),
        ("debugging", &[]),
    ];
    for (name, want) in cases {
        assert_eq!(t.bundle_non_core_tools(name), strings(want), "{name:?}");
    }
}

#[test]
fn bundle_non_core_tools_never_strips_core() {
    let t = ts();
    t.create_custom_toolset(
        "mixed",
        "m",
        &["terminal", "x1"],
        &["web", "hermes-discord"],
    );
    t.register_plugin_tool("web", "web_plugin_extra");
    let mut names = t.toolset_names();
    names.extend(strings(&["all", "*", "nope", "files", "web_tools"]));
    for name in &names {
        for tool in t.bundle_non_core_tools(name) {
            assert!(!t.is_core(&tool), "{name} would strip core tool {tool}");
        }
    }
    assert_eq!(
        t.bundle_non_core_tools("mixed"),
        strings(&["discord", "discord_admin", "web_plugin_extra", "x1"])
    );
}

#[test]
fn bundle_non_core_tools_follows_one_level_only() {
    let t = ts();
    t.create_custom_toolset("d_top", "T", &["t1"], &["d_l", "d_r"]);
    t.create_custom_toolset("d_l", "L", &["l1", "shared"], &["d_bot"]);
    t.create_custom_toolset("d_r", "R", &["r1"], &["d_bot"]);
    t.create_custom_toolset("d_bot", "B", &["z1", "shared"], &[]);
    t.create_custom_toolset("two_lvl", "2", &["x_direct"], &["d_top"]);
    // observed: two_lvl -> t1, x_direct (d_top's includes are not followed)
    assert_eq!(
        t.bundle_non_core_tools("two_lvl"),
        strings(&["t1", "x_direct"])
    );
    // observed: a plugin tool in an included toolset counts (debugging includes web)
    t.register_plugin_tool("web", "web_plugin_extra");
    assert_eq!(
        t.bundle_non_core_tools("debugging"),
        strings(&["web_plugin_extra"])
    );
}

#[test]
fn core_webhook_and_legacy_lists() {
    let t = ts();
    assert_eq!(t.core_tools(), CORE);
    assert!(t.is_core("terminal"));
    assert!(!t.is_core("discord"));
    assert_eq!(
        t.webhook_safe_tools(),
        &["web_search", "web_extract", "vision_analyze", "clarify"]
    );
    assert_eq!(
        t.legacy_tools("web_tools"),
        Some(&["web_search", "web_extract"][..])
    );
    assert_eq!(t.legacy_tools("web"), None);
}

#[test]
fn toolset_names_are_sorted_and_exclude_aliases() {
    let t = ts();
    // Sorted, each static toolset once, and no alias (`files`).
    assert_eq!(t.toolset_names(), ref_toolset_names());
}

// ---------------------------------------------------------------------------
// Custom toolsets: cycles, diamonds, `all`, overrides
// ---------------------------------------------------------------------------

#[test]
fn cycles_contribute_nothing_the_second_time() {
    let t = ts();
    t.create_custom_toolset("cyc_a", "A", &["a1"], &["cyc_b"]);
    t.create_custom_toolset("cyc_b", "B", &["b1"], &["cyc_c"]);
    t.create_custom_toolset("cyc_c", "C", &["c1"], &["cyc_a"]);
    t.create_custom_toolset("self", "S", &["s1"], &["self"]);
    let cases: &[(&str, &[&str])] = &[
        // observed: every member of a 3-cycle resolves to the whole cycle
        ("cyc_a", &["a1", "b1", "c1"]),
        ("cyc_b", &["a1", "b1", "c1"]),
        ("cyc_c", &["a1", "b1", "c1"]),
        // observed: self-include -> its own tools
        ("self", &["s1"]),
    ];
    for (name, want) in cases {
        assert_eq!(t.resolve_toolset(name), strings(want), "{name}");
    }
    assert!(t.resolve_toolset("all").contains(&"s1".to_owned()));
}

#[test]
fn diamonds_resolve_once() {
    let t = ts();
    t.create_custom_toolset("d_top", "T", &["t1"], &["d_l", "d_r"]);
    t.create_custom_toolset("d_l", "L", &["l1", "shared"], &["d_bot"]);
    t.create_custom_toolset("d_r", "R", &["r1"], &["d_bot"]);
    t.create_custom_toolset("d_bot", "B", &["z1", "shared"], &[]);
    // observed: l1, r1, shared, t1, z1
    assert_eq!(
        t.resolve_toolset("d_top"),
        strings(&["l1", "r1", "shared", "t1", "z1"])
    );
    // observed: info of d_top
    assert_eq!(
        t.get_toolset_info("d_top"),
        Some(ToolsetInfo {
            name: "d_top".into(),
            description: "T".into(),
            direct_tools: strings(&["t1"]),
            includes: strings(&["d_l", "d_r"]),
            resolved_tools: strings(&["l1", "r1", "shared", "t1", "z1"]),
            tool_count: 5,
            is_composite: true,
            instructional: false,
            posture: false,
        })
    );
}

#[test]
fn custom_toolset_edge_cases() {
    let t = ts();
    // observed: direct tools sorted and deduplicated; an unknown include is kept
    // in `includes` (so composite) but contributes nothing
    t.create_custom_toolset("unsorted", "U", &["zz", "aa", "zz"], &["nope_ts"]);
    let info = t.get_toolset_info("unsorted");
    assert_eq!(
        info.map(|i| (i.direct_tools, i.includes, i.resolved_tools, i.is_composite)),
        Some((
            strings(&["aa", "zz"]),
            strings(&["nope_ts"]),
            strings(&["aa", "zz"]),
            true
        ))
    );
    // observed: an empty custom toolset is valid, with empty info
    t.create_custom_toolset("empty", "E", &[], &[]);
    assert!(t.validate_toolset("empty"));
    let info = t.get_toolset_info("empty");
    assert_eq!(
        info.map(|i| (i.tool_count, i.is_composite, i.description)),
        Some((0, false, "E".to_owned()))
    );
    // observed: a custom toolset including `all` gets every tool, its own too
    t.create_custom_toolset("inc_all", "IA", &["ia1"], &["all"]);
    let r = t.resolve_toolset("inc_all");
    assert!(r.contains(&"ia1".to_owned()));
    assert!(r.contains(&"discord".to_owned()));
    assert!(r.contains(&"aa".to_owned()));
    assert_eq!(r, t.resolve_toolset("all"));
    // a custom toolset may include an alias
    t.create_custom_toolset("via_alias", "V", &[], &["files"]);
    assert_eq!(t.resolve_toolset("via_alias"), t.resolve_toolset("file"));
    assert!(!t.resolve_toolset("file").is_empty());
    assert!(t.toolset_names().contains(&"inc_all".to_owned()));
}

#[test]
fn custom_toolset_replaces_static_one() {
    let t = ts();
    // observed: create_custom_toolset("file", ...) replaces the static file toolset
    t.create_custom_toolset("file", "overridden", &["only_this"], &[]);
    assert_eq!(t.resolve_toolset("file"), strings(&["only_this"]));
    assert_eq!(
        t.get_toolset_info("file").map(|i| i.description),
        Some("overridden".to_owned())
    );
    // ... and everything including it sees the replacement
    assert!(t
        .resolve_toolset("debugging")
        .contains(&"only_this".to_owned()));
    assert!(!t.resolve_toolset("debugging").contains(&"patch".to_owned()));
    // a replaced posture toolset is no longer posture
    t.create_custom_toolset("coding", "c", &["terminal"], &[]);
    assert!(!t.is_posture("coding"));
    // removing the custom one brings the static one back
    assert!(t.remove_custom_toolset("file"));
    assert!(!t.remove_custom_toolset("file"));
    assert_eq!(
        t.resolve_toolset("file"),
        strings(&["patch", "read_file", "search_files", "write_file"])
    );
}

// ---------------------------------------------------------------------------
// Plugin (run-time) tools, aliases, platforms
// ---------------------------------------------------------------------------

#[test]
fn plugin_only_toolsets() {
    let t = ts();
    assert!(!t.validate_toolset("myplugin"));
    t.register_plugin_tool("myplugin", "plug_tool_b");
    t.register_plugin_tool("myplugin", "plug_tool_a");
    // observed: valid, resolves sorted, "Plugin toolset: NAME", listed in names
    assert!(t.validate_toolset("myplugin"));
    assert_eq!(
        t.resolve_toolset("myplugin"),
        strings(&["plug_tool_a", "plug_tool_b"])
    );
    assert_eq!(
        t.get_toolset_info("myplugin"),
        Some(ToolsetInfo {
            name: "myplugin".into(),
            description: "Plugin toolset: myplugin".into(),
            direct_tools: strings(&["plug_tool_a", "plug_tool_b"]),
            includes: vec![],
            resolved_tools: strings(&["plug_tool_a", "plug_tool_b"]),
            tool_count: 2,
            is_composite: false,
            instructional: false,
            posture: false,
        })
    );
    assert!(t.toolset_names().contains(&"myplugin".to_owned()));
    // observed: `all` includes plugin tools
    assert!(t.resolve_toolset("all").contains(&"plug_tool_a".to_owned()));
    // observed: bundle_non_core_tools of a plugin-only toolset is all its tools
    assert_eq!(
        t.bundle_non_core_tools("myplugin"),
        strings(&["plug_tool_a", "plug_tool_b"])
    );
    // observed: after its last tool goes, the toolset is gone
    assert!(t.remove_plugin_tool("myplugin", "plug_tool_a"));
    assert!(t.remove_plugin_tool("myplugin", "plug_tool_b"));
    assert!(!t.remove_plugin_tool("myplugin", "plug_tool_b"));
    assert!(!t.validate_toolset("myplugin"));
    assert!(t.resolve_toolset("myplugin").is_empty());
    assert_eq!(t.get_toolset_info("myplugin"), None);
    assert!(!t.toolset_names().contains(&"myplugin".to_owned()));
}

#[test]
fn plugin_tools_join_declared_toolsets() {
    let t = ts();
    t.register_plugin_tool("web", "web_plugin_extra");
    // observed: web -> web_extract, web_plugin_extra, web_search (direct too)
    let want = strings(&["web_extract", "web_plugin_extra", "web_search"]);
    assert_eq!(t.resolve_toolset("web"), want);
    assert_eq!(
        t.get_toolset_info("web").map(|i| i.direct_tools),
        Some(want)
    );
    assert!(t
        .resolve_toolset("*")
        .contains(&"web_plugin_extra".to_owned()));
    assert!(t
        .resolve_toolset("safe")
        .contains(&"web_plugin_extra".to_owned()));
    // still listed once
    assert_eq!(t.toolset_names(), ref_toolset_names());
    // observed: a plugin toolset named like a legacy name is a toolset
    t.register_plugin_tool("web_tools", "zz_tool");
    assert!(t.validate_toolset("web_tools"));
    assert_eq!(t.resolve_toolset("web_tools"), strings(&["zz_tool"]));
}

#[test]
fn mcp_aliases() {
    let t = ts();
    t.register_plugin_tool("mcp-xserver", "mcp_x_tool");
    t.register_toolset_alias("xserver", "mcp-xserver");
    // observed: alias valid, resolves, described as the MCP server's tools
    assert!(t.validate_toolset("xserver"));
    assert_eq!(t.resolve_toolset("xserver"), strings(&["mcp_x_tool"]));
    let info = t.get_toolset_info("xserver");
    assert_eq!(
        info.as_ref()
            .map(|i| (i.name.as_str(), i.description.as_str())),
        Some(("xserver", "MCP server 'xserver' tools"))
    );
    // observed: the canonical name is valid and described the same way
    assert!(t.validate_toolset("mcp-xserver"));
    assert_eq!(
        t.get_toolset_info("mcp-xserver").map(|i| i.description),
        Some("MCP server 'xserver' tools".to_owned())
    );
    // observed: names list the alias, not the canonical name
    let names: Vec<String> = t
        .toolset_names()
        .into_iter()
        .filter(|n| n.contains("xserver"))
        .collect();
    assert_eq!(names, ["xserver"]);
    assert!(t.resolve_toolset("all").contains(&"mcp_x_tool".to_owned()));
    // observed (registry): removing the last tool drops the aliases to it
    assert!(t.remove_plugin_tool("mcp-xserver", "mcp_x_tool"));
    assert!(!t.validate_toolset("xserver"));
    assert_eq!(t.get_toolset_info("xserver"), None);
}

#[test]
fn alias_edge_cases() {
    let t = ts();
    // observed: an alias to nowhere is valid, resolves to nothing, and has info
    t.register_toolset_alias("ghost", "nowhere");
    assert!(t.validate_toolset("ghost"));
    assert!(t.resolve_toolset("ghost").is_empty());
    assert_eq!(
        t.get_toolset_info("ghost")
            .map(|i| (i.description, i.tool_count)),
        Some(("MCP server 'ghost' tools".to_owned(), 0))
    );
    // observed: an alias named like a declared toolset loses to the toolset
    t.register_plugin_tool("mcp-x", "m1");
    t.register_toolset_alias("terminal", "mcp-x");
    assert_eq!(
        t.resolve_toolset("terminal"),
        strings(&["process", "terminal"])
    );
    // observed: alias chains are not followed (b -> a -> mcp-a gives nothing)
    t.register_plugin_tool("mcp-a", "ma");
    t.register_toolset_alias("a", "mcp-a");
    t.register_toolset_alias("b", "a");
    assert!(t.validate_toolset("b"));
    assert!(t.resolve_toolset("b").is_empty());
    // observed: a custom toolset may include an alias
    t.create_custom_toolset("incalias", "x", &[], &["a"]);
    assert_eq!(t.resolve_toolset("incalias"), strings(&["ma"]));
    // DIFFERENCE from the reference: an alias of a declared toolset stands for
    // the whole toolset. (The reference returned only the plugin tools
    // registered into the target, e.g. alias->web gave just `web_plugin_extra`.)
    t.register_plugin_tool("web", "web_plugin_extra");
    t.register_toolset_alias("webalias", "web");
    assert_eq!(
        t.resolve_toolset("webalias"),
        strings(&["web_extract", "web_plugin_extra", "web_search"])
    );
    // run-time aliases take precedence over static ones
    t.register_toolset_alias("files", "web");
    assert_eq!(t.resolve_toolset("files"), t.resolve_toolset("web"));
    // an alias cycle through includes terminates
    t.create_custom_toolset("loop", "L", &["l"], &["loopalias"]);
    t.register_toolset_alias("loopalias", "loop");
    assert_eq!(t.resolve_toolset("loop"), strings(&["l"]));
    assert_eq!(t.resolve_toolset("loopalias"), strings(&["l"]));
}

#[test]
fn plugin_platform_bundles() {
    let t = ts();
    t.register_plugin_tool("irc", "irc_send");
    // before the platform is registered, hermes-irc is nothing
    assert!(t.resolve_toolset("hermes-irc").is_empty());
    assert!(t.register_plugin_platform("irc"));
    assert!(!t.register_plugin_platform("irc"));
    // observed: core + the platform's tools; not a valid toolset; no info
    let mut want = sorted_core();
    want.push("irc_send".to_owned());
    want.sort();
    assert_eq!(t.resolve_toolset("hermes-irc"), want);
    assert!(!t.validate_toolset("hermes-irc"));
    assert_eq!(t.get_toolset_info("hermes-irc"), None);
    // observed: bundle_non_core_tools -> the platform's tools only
    assert_eq!(
        t.bundle_non_core_tools("hermes-irc"),
        strings(&["irc_send"])
    );
    // observed: names list `irc` (plugin-only toolset), not `hermes-irc`
    let names = t.toolset_names();
    assert!(names.contains(&"irc".to_owned()));
    assert!(!names.contains(&"hermes-irc".to_owned()));
    assert!(t.resolve_toolset("all").contains(&"irc_send".to_owned()));
    // a custom toolset may include it
    t.create_custom_toolset("with_irc", "w", &[], &["hermes-irc"]);
    assert_eq!(t.resolve_toolset("with_irc"), want);
    assert!(t.remove_plugin_platform("irc"));
    assert!(t.resolve_toolset("hermes-irc").is_empty());
}

// ---------------------------------------------------------------------------
// Generation counter and threads
// ---------------------------------------------------------------------------

#[test]
fn generation_bumps_on_every_mutation_only() {
    let t = ts();
    let mut last = t.generation();
    assert_eq!(last, 0);
    let mut expect_bump = |bumped: bool, what: &str| {
        let now = t.generation();
        if bumped {
            assert_eq!(now, last + 1, "{what}");
        } else {
            assert_eq!(now, last, "{what}");
        }
        last = now;
    };
    t.create_custom_toolset("c", "c", &[], &[]);
    expect_bump(true, "create");
    t.create_custom_toolset("c", "c", &[], &[]);
    expect_bump(true, "re-create");
    t.register_plugin_tool("p", "x");
    expect_bump(true, "register");
    t.register_plugin_tool("p", "x");
    expect_bump(false, "register again");
    t.register_toolset_alias("pa", "p");
    expect_bump(true, "alias");
    let _ = t.resolve_toolset("all");
    let _ = t.get_toolset_info("p");
    expect_bump(false, "queries");
    t.remove_plugin_tool("p", "x");
    expect_bump(true, "remove");
    t.remove_plugin_tool("p", "x");
    expect_bump(false, "remove again");
    t.register_plugin_platform("irc");
    expect_bump(true, "platform");
    t.remove_plugin_platform("irc");
    expect_bump(true, "platform removed");
    t.remove_custom_toolset("c");
    expect_bump(true, "custom removed");
    t.remove_custom_toolset("c");
    expect_bump(false, "custom removed again");
}

#[test]
fn concurrent_readers_and_writers() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Toolsets>();

    let t = Arc::new(ts());
    // No writer touches `debugging`: readers see it as it was throughout.
    let debugging = t.resolve_toolset("debugging");
    assert!(!debugging.is_empty());
    let mut handles = Vec::new();
    for w in 0..4 {
        let t = Arc::clone(&t);
        handles.push(thread::spawn(move || {
            for i in 0..50 {
                let toolset = format!("plug{w}");
                let tool = format!("tool{w}_{i}");
                t.register_plugin_tool(&toolset, &tool);
                assert!(t.resolve_toolset(&toolset).contains(&tool));
                let _ = t.resolve_toolset("all");
            }
        }));
    }
    for _ in 0..2 {
        let t = Arc::clone(&t);
        let debugging = debugging.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..50 {
                assert_eq!(t.resolve_toolset("debugging"), debugging);
                let _ = t.toolset_names();
            }
        }));
    }
    for h in handles {
        assert!(h.join().is_ok());
    }
    assert_eq!(t.generation(), 200);
    // Every writer's every tool landed in its toolset, and nothing else.
    for w in 0..4 {
        let mut want: Vec<String> = (0..50).map(|i| format!("tool{w}_{i}")).collect();
        want.sort();
        assert_eq!(t.resolve_toolset(&format!("plug{w}")), want);
    }
}

// ---------------------------------------------------------------------------
// The real toolsets.toml, loaded into the run-time API
// ---------------------------------------------------------------------------

#[test]
fn real_table_at_run_time() {
    let parsed = match table::parse_table(include_str!("../fixtures/reference-toolsets.toml")) {
        Ok(t) => t,
        Err(e) => panic!("{e:?}"),
    };
    let t = Toolsets::new(static_table_from(&parsed));
    let declared: Vec<String> = parsed
        .expanded_toolsets()
        .into_iter()
        .map(|d| d.name.name)
        .collect();
    assert_eq!(t.toolset_names(), declared);
    for (name, tools) in resolve_all(&parsed) {
        assert!(!tools.is_empty(), "{name}");
        assert!(t.validate_toolset(&name));
    }
    // Disabling any bundle or posture toolset strips no core tool; with only
    // core tools in this project, they strip nothing at all.
    for name in t.toolset_names() {
        if name.starts_with("hermes-") || t.is_posture(&name) {
            assert!(t.bundle_non_core_tools(&name).is_empty(), "{name}");
        }
    }
    assert!(t.is_posture("coding"));
    assert!(t.is_instructional("skills"));
    assert_eq!(t.legacy_tools("terminal_tools"), Some(&["terminal"][..]));
    assert!(!t.validate_toolset("file_tools"));
    // Every tool of the table is core, so `all` is exactly core.
    let mut core: Vec<String> = parsed.core.iter().map(|e| e.name.clone()).collect();
    core.sort();
    assert_eq!(t.resolve_toolset("all"), core);
}

mod generated {
    //! The table `emit_rust` produced for the real `toolsets.toml` (the
    //! snapshot of tests/toolsets_table.rs), compiled.
    include!("snapshots/toolsets_table__emitted_table.snap.rs");
}

#[test]
fn generated_static_table_matches_the_parsed_file() {
    let parsed = match table::parse_table(include_str!("../fixtures/reference-toolsets.toml")) {
        Ok(t) => t,
        Err(e) => panic!("{e:?}"),
    };
    let from_generated = Toolsets::new(generated::TABLE);
    let from_parsed = Toolsets::new(static_table_from(&parsed));
    assert_eq!(generated::TABLE, static_table_from(&parsed));
    for name in from_parsed.toolset_names() {
        assert_eq!(
            from_generated.get_toolset_info(&name),
            from_parsed.get_toolset_info(&name),
            "{name}"
        );
    }
}
