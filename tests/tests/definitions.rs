//! Tool definitions for the model (BEHAVIOUR.md §5) and the availability
//! report, through the test tools' generated registry and toolset table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use hermes_runtime::{Profile, Registry};
use serde_json::{json, Map, Value};

fn registry() -> Registry {
    Registry::new(&hermes_tests::generated::TABLES)
}

struct Profiles {
    _with: tempfile::TempDir,
    _without: tempfile::TempDir,
    with_key: Profile,
    without_key: Profile,
}

fn profiles() -> Profiles {
    let with = tempfile::tempdir().unwrap();
    let without = tempfile::tempdir().unwrap();
    std::fs::write(with.path().join(".env"), "SEARCH_API_KEY=k\n").unwrap();
    Profiles {
        with_key: Profile::new(with.path()),
        without_key: Profile::new(without.path()),
        _with: with,
        _without: without,
    }
}

fn names(reg: &Registry, enabled: Option<&[&str]>, disabled: &[&str], p: &Profile) -> Vec<String> {
    let defs = reg.get_tool_definitions(enabled, disabled, p);
    defs.names().into_iter().map(String::from).collect()
}

#[test]
fn everything_when_nothing_is_enabled_minus_failed_checks() {
    let reg = registry();
    let p = profiles();
    let without = names(&reg, None, &[], &p.without_key);
    assert!(
        !without.iter().any(|n| n.starts_with("gated_")),
        "{without:?}"
    );
    assert!(without.contains(&"echo".to_string()));
    let with = names(&reg, None, &[], &p.with_key);
    assert!(with.contains(&"gated_search".to_string()));
    assert!(with.contains(&"gated_fetch".to_string()));
    let mut sorted = with.clone();
    sorted.sort();
    assert_eq!(with, sorted, "sorted by name");
}

#[test]
fn output_is_wrapped_and_sanitized() {
    let reg = registry();
    let p = profiles();
    let defs = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    assert_eq!(defs.names(), ["notes_read", "notes_write"]);
    let first = &defs.tools[0];
    assert_eq!(first["type"], "function");
    assert_eq!(first["function"]["name"], "notes_read");
    assert_eq!(first["function"]["description"], "Reads the notes.");
    // A tool with no parameters still has `properties` (no bare object).
    assert_eq!(first["function"]["parameters"]["type"], "object");
    assert!(first["function"]["parameters"]["properties"].is_object());
}

#[test]
fn legacy_names_aliases_and_unknown_names() {
    let reg = registry();
    let p = profiles();
    let defs = reg.get_tool_definitions(Some(&["old_search", "nope"]), &[], &p.with_key);
    assert_eq!(defs.names(), ["gated_search"]);
    assert_eq!(defs.unknown, ["nope"]);
    assert_eq!(
        names(&reg, Some(&["lookup"]), &[], &p.with_key),
        ["gated_fetch", "gated_search"]
    );
}

#[test]
fn disabled_is_subtracted_last_and_bundles_keep_core() {
    let reg = registry();
    let p = profiles();
    // A bundle subtracts only its non-core tools.
    let got = names(
        &reg,
        Some(&["research", "notes"]),
        &["hermes-cli"],
        &p.with_key,
    );
    assert_eq!(got, ["echo", "notes_read", "notes_write"]);
    // So does a posture toolset.
    let got = names(&reg, Some(&["research"]), &["research"], &p.with_key);
    assert_eq!(got, ["echo", "notes_read"]);
    // A plain toolset subtracts all its tools, core ones included.
    let got = names(&reg, Some(&["research", "notes"]), &["notes"], &p.with_key);
    assert_eq!(got, ["echo", "gated_search"]);
    // Disabled wins over enabled.
    let got = names(&reg, Some(&["notes"]), &["notes"], &p.with_key);
    assert!(got.is_empty());
}

#[test]
fn cross_references_only_mention_survivors() {
    let reg = registry();
    let p = profiles();
    reg.add_cross_reference(
        "notes_read",
        "notes_write",
        "To add a note, use notes_write.",
    );
    reg.add_cross_reference(
        "notes_read",
        "gated_search",
        "To look things up, use gated_search.",
    );
    let defs = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    assert_eq!(
        defs.tools[0]["function"]["description"],
        "Reads the notes. To add a note, use notes_write."
    );
    let defs = reg.get_tool_definitions(Some(&["notes"]), &[], &p.with_key);
    assert!(!defs.tools[0]["function"]["description"]
        .as_str()
        .unwrap()
        .contains("gated_search"));
}

#[test]
fn dynamic_overrides_merge_and_a_failing_one_is_ignored() {
    let reg = registry();
    let p = profiles();
    reg.set_schema_override(
        "notes_read",
        Arc::new(|profile: &Profile| {
            let mut m = Map::new();
            m.insert(
                "description".into(),
                json!(format!("Reads the notes in {}.", profile.home().display())),
            );
            Some(m)
        }),
    );
    reg.set_schema_override(
        "notes_write",
        Arc::new(|_: &Profile| panic!("override broke")),
    );
    let defs = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    let read = defs.tools[0]["function"]["description"].as_str().unwrap();
    assert!(read.starts_with("Reads the notes in /"), "{read}");
    assert_eq!(defs.tools[1]["function"]["description"], "Writes a note.");
}

#[test]
fn memoised_bounded_and_not_poisoned_by_callers() {
    let reg = registry();
    let p = profiles();
    let a = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    let b = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    assert!(
        Arc::ptr_eq(&a.tools, &b.tools),
        "a repeat is served from the cache"
    );

    // A caller's own copy can be changed freely.
    let mut mine = b.to_vec();
    mine[0]["function"]["description"] = Value::String("poisoned".into());
    let c = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    assert_eq!(c.tools[0]["function"]["description"], "Reads the notes.");

    // A registry change (a new run-time toolset) changes the generation.
    reg.toolsets()
        .create_custom_toolset("mine", "Mine", &["echo"], &[]);
    let d = reg.get_tool_definitions(Some(&["notes"]), &[], &p.without_key);
    assert!(!Arc::ptr_eq(&a.tools, &d.tools));

    // At most 8 entries: after 8 other inputs the first is computed anew.
    let first = reg.get_tool_definitions(Some(&["edges"]), &[], &p.without_key);
    for disabled in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        reg.get_tool_definitions(Some(&["edges"]), &[disabled], &p.without_key);
    }
    let again = reg.get_tool_definitions(Some(&["edges"]), &[], &p.without_key);
    assert!(!Arc::ptr_eq(&first.tools, &again.tools));
    assert_eq!(first, again);
}

#[test]
fn availability_report_names_what_is_missing() {
    let reg = registry();
    let p = profiles();
    let report = reg.check_tool_availability(&p.without_key);
    let search = report
        .unavailable
        .iter()
        .find(|u| u.name == "search")
        .expect("search is unavailable without the key");
    assert_eq!(search.env_vars, ["SEARCH_API_KEY"]);
    assert_eq!(search.tools, ["gated_fetch", "gated_search"]);
    assert!(report.available.contains(&"notes".to_string()));
    assert!(
        report.available.contains(&"research".to_string()),
        "one exposable tool suffices"
    );

    let report = reg.check_tool_availability(&p.with_key);
    assert!(report.available.contains(&"search".to_string()));
    let mut sorted = report.available.clone();
    sorted.sort();
    assert_eq!(report.available, sorted);
}

#[test]
fn the_webhook_boundary_never_reaches_file_or_command_tools() {
    // The real built-in table: nothing reachable from the webhook-safe list
    // or the hermes-webhook bundle may write files or run commands. Every
    // tool of the `file` and `terminal` toolsets counts as such.
    let reg = hermes_tools::registry();
    let toolsets = reg.toolsets();
    let mut reachable: Vec<String> = toolsets
        .webhook_safe_tools()
        .iter()
        .map(|t| t.to_string())
        .collect();
    reachable.extend(toolsets.resolve_toolset("hermes-webhook"));
    let dangerous: Vec<&str> = reg
        .builtin_entries()
        .into_iter()
        .filter(|e| matches!(e.toolset, "file" | "terminal" | "process"))
        .map(|e| e.name)
        .collect();
    assert!(!dangerous.is_empty(), "the file toolset exists");
    for tool in &reachable {
        assert!(
            !dangerous.contains(&tool.as_str()),
            "{tool} is reachable from webhooks"
        );
    }
}

/// Descriptions write the profile's home as `{HERMES_HOME}`; each profile's
/// definitions show its own display home there, for built-in and run-time
/// tools alike.
#[test]
fn descriptions_show_each_profiles_home() {
    let reg = registry();
    reg.register_tool(hermes_runtime::RuntimeToolSpec::new(
        "notes_sync",
        "plugin-notes",
        "Syncs {HERMES_HOME}/notes with a server.",
        json!({"type": "object", "properties": {}, "required": []}),
        Arc::new(|_, _| Box::pin(async { "{}".to_string() }) as hermes_runtime::HandlerFuture),
    ))
    .unwrap();
    let note = |home: &str| {
        let defs =
            reg.get_tool_definitions(Some(&["edges", "plugin-notes"]), &[], &Profile::new(home));
        let all = serde_json::to_string(&defs.to_vec()).unwrap();
        assert!(!all.contains("{HERMES_HOME}"), "{all}");
        let find = |name: &str| {
            defs.tools
                .iter()
                .find(|t| t["function"]["name"] == name)
                .map(|t| t["function"].clone())
                .unwrap()
        };
        let typed = find("typed_echo");
        (
            typed["parameters"]["properties"]["note"]["description"]
                .as_str()
                .unwrap()
                .to_string(),
            find("notes_sync")["description"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    let (alice, alice_sync) = note("/srv/hermes/alice");
    assert_eq!(alice, "A note, as kept in /srv/hermes/alice/notes.");
    assert_eq!(alice_sync, "Syncs /srv/hermes/alice/notes with a server.");
    let (bob, _) = note("/srv/hermes/bob");
    assert_eq!(bob, "A note, as kept in /srv/hermes/bob/notes.");
    if let Some(home) = std::env::var_os("HOME").filter(|h| h.len() > 1) {
        let (mine, _) = note(&format!("{}/.hermes", home.to_string_lossy()));
        assert_eq!(mine, "A note, as kept in ~/.hermes/notes.");
    }
}
