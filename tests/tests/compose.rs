//! One registry from several tools crates: the built-in tools
//! (`hermes-tools`) and the test tools (`hermes-tests`) composed, each
//! dispatched with its own glue and coercion plans; toolsets of one name
//! merged; a name defined twice refused with both crates and files named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::{ComposeError, Profile, Registry, ToolContext};
use serde_json::{json, Value};

fn composed() -> Registry {
    Registry::compose(&[
        &hermes_tools::generated::TABLES,
        &hermes_tests::generated::TABLES,
    ])
    .unwrap()
}

fn ctx(cwd: &std::path::Path) -> ToolContext {
    ToolContext::new(Profile::new(cwd.join("home")), cwd)
}

#[tokio::test]
async fn tools_of_both_crates_dispatch() {
    let reg = composed();
    assert_eq!(reg.crates(), ["hermes-tools", "hermes-tests"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let ctx = ctx(dir.path());

    // A built-in, through its own crate's plan: "1" is coerced to 1.
    let out = reg
        .dispatch(
            "read_file",
            json!({"path": "a.txt", "offset": "1", "limit": "1"}),
            &ctx,
        )
        .await;
    assert!(out.contains("one") && !out.contains("two"), "{out}");
    // A test tool, on the direct path and the full one.
    let raw = reg
        .dispatch_json("echo", r#"{"text": "hi", "count": 2}"#, &ctx)
        .await;
    let full = reg
        .dispatch("echo", json!({"text": "hi", "count": "2"}), &ctx)
        .await;
    assert_eq!(raw, full);
    let v: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(v, json!({"text": "hi", "count": 2}));

    let names = reg.tool_names();
    for name in ["read_file", "terminal", "echo", "constrained"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    let one = Registry::new(&hermes_tools::generated::TABLES)
        .tool_names()
        .len()
        + Registry::new(&hermes_tests::generated::TABLES)
            .tool_names()
            .len();
    assert_eq!(names.len(), one, "no name lost or doubled");
}

#[test]
fn toolsets_of_one_name_are_one_toolset() {
    let reg = composed();
    let ts = reg.toolsets();
    // `search` is a toolset of both crates: the union of their tools.
    let search = ts.resolve_toolset("search");
    for tool in ["web_search", "gated_search", "gated_fetch"] {
        assert!(search.contains(&tool.to_string()), "{tool} in {search:?}");
    }
    // The built-ins' description (the first crate's) is kept.
    let builtins = Registry::new(&hermes_tools::generated::TABLES);
    assert_eq!(
        ts.get_toolset_info("search").unwrap().description,
        builtins
            .toolsets()
            .get_toolset_info("search")
            .unwrap()
            .description
    );
    // Core is the union of both core lists; the hermes-cli bundle too.
    assert!(ts.is_core("read_file") && ts.is_core("echo"));
    let cli = ts.resolve_toolset("hermes-cli");
    assert!(cli.contains(&"read_file".to_string()) && cli.contains(&"gated_search".to_string()));
    // Toolsets of only one crate are there as they were.
    assert_eq!(
        ts.resolve_toolset("edges"),
        Registry::new(&hermes_tests::generated::TABLES)
            .toolsets()
            .resolve_toolset("edges")
    );
    // Composing the same crates again gives the same table.
    assert_eq!(
        composed().toolsets().resolve_toolset("search"),
        ts.resolve_toolset("search")
    );
}

#[test]
fn a_name_defined_twice_is_refused_naming_both_crates_and_files() {
    let err = Registry::compose(&[
        &hermes_tests::generated::TABLES,
        &hermes_tests::generated::TABLES,
    ])
    .unwrap_err();
    let ComposeError::DuplicateTool {
        name,
        first,
        second,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(first.0, "hermes-tests");
    assert_eq!(second.0, "hermes-tests");
    assert!(
        first.1.contains("src/tools/") && first.1.contains(".rs:"),
        "{first:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("tool `{name}` is defined twice")) && text.contains("override"),
        "{text}"
    );
    assert!(matches!(
        Registry::compose(&[]).unwrap_err(),
        ComposeError::Empty
    ));
}
