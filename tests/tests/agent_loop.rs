//! `todo` and `memory`, the agent-loop tools, through dispatch: without the
//! executors an agent registers they are refused; with
//! `install_agent_loop_executors` they work (per-session todo lists, memory
//! persisted under the profile's home).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::{Profile, Registry, ToolContext};
use serde_json::{json, Value};

fn installed() -> &'static Registry {
    let registry = hermes_tools::registry();
    hermes_tools::install_agent_loop_executors(registry);
    registry
}

async fn call(registry: &Registry, ctx: &ToolContext, name: &str, args: Value) -> Value {
    let out = registry.dispatch(name, args, ctx).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn ctx(home: &std::path::Path, session: &str) -> ToolContext {
    ToolContext::new(Profile::new(home), home).with_session_id(session)
}

#[tokio::test]
async fn without_executors_dispatch_refuses_both() {
    // A registry of its own over the real tables: nothing installed on it.
    let registry: &'static Registry =
        Box::leak(Box::new(Registry::new(&hermes_tools::generated::TABLES)));
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path(), "s");
    for name in ["todo", "memory"] {
        let v = call(registry, &ctx, name, json!({})).await;
        assert_eq!(
            v["error"],
            format!("{name} must be handled by the agent loop"),
            "{v}"
        );
        // The raw-text entry (well-typed arguments take its direct path
        // for other tools) refuses them too.
        let raw = r#"{"action": "add", "target": "memory", "content": "x", "todos": []}"#;
        let v: Value =
            serde_json::from_str(&registry.dispatch_json(name, raw, &ctx).await).unwrap();
        assert_eq!(
            v["error"],
            format!("{name} must be handled by the agent loop"),
            "{v}"
        );
    }
    // Their schemas are still offered to the model.
    let defs = registry.get_tool_definitions(None, &[], ctx.profile());
    let names = defs.names();
    assert!(
        names.contains(&"todo") && names.contains(&"memory"),
        "{names:?}"
    );
    assert!(!dir.path().join("memories").exists(), "nothing was written");
}

#[tokio::test]
async fn todo_writes_merges_and_reads_per_session() {
    let registry = installed();
    let dir = tempfile::tempdir().unwrap();
    let session_a = hermes_tools::Session::new(Profile::new(dir.path()), dir.path());
    let a = session_a.context();
    let b = ctx(dir.path(), "todo-session-b");

    let v = call(registry, &a, "todo", json!({})).await;
    assert_eq!(
        v,
        json!({"todos": [], "summary": {"total": 0, "pending": 0, "in_progress": 0, "completed": 0, "cancelled": 0}})
    );

    let v = call(
        registry,
        &a,
        "todo",
        json!({"todos": [
            {"id": "1", "content": "read the code", "status": "in_progress"},
            {"id": 2, "content": "write tests", "status": "pending"},
            {"id": "3", "content": "old", "status": "weird"},
            {"id": "3", "content": "ship it", "status": "pending"},
        ]}),
    )
    .await;
    assert_eq!(
        v["todos"],
        json!([
            {"id": "1", "content": "read the code", "status": "in_progress"},
            {"id": "2", "content": "write tests", "status": "pending"},
            {"id": "3", "content": "ship it", "status": "pending"},
        ]),
        "numeric ids are text; a duplicate id keeps the last item: {v}"
    );

    // Merge: update by id (only the fields given), append new ones. The list
    // arrives as a JSON string; coercion repairs it.
    let merge = json!([
        {"id": "1", "content": "", "status": "completed"},
        {"id": "4", "content": "celebrate", "status": "nonsense"},
    ]);
    let v = call(
        registry,
        &a,
        "todo",
        json!({"todos": merge.to_string(), "merge": "true"}),
    )
    .await;
    assert_eq!(
        v["todos"][0],
        json!({"id": "1", "content": "read the code", "status": "completed"})
    );
    assert_eq!(
        v["todos"][3],
        json!({"id": "4", "content": "celebrate", "status": "pending"})
    );
    assert_eq!(v["summary"]["total"], 4);
    assert_eq!(v["summary"]["completed"], 1);
    assert_eq!(v["summary"]["pending"], 3);

    // Another session has its own list; reading does not change ours.
    let v = call(registry, &b, "todo", json!({})).await;
    assert_eq!(v["summary"]["total"], 0);
    let v = call(registry, &a, "todo", json!({})).await;
    assert_eq!(v["summary"]["total"], 4);

    // Replace mode starts over.
    let v = call(
        registry,
        &a,
        "todo",
        json!({"todos": [{"id": "x", "content": "only", "status": "pending"}]}),
    )
    .await;
    assert_eq!(v["summary"]["total"], 1);
    // Ending the session forgets its list: a call with its ids again
    // finds none.
    session_a.end();
    let v = call(registry, &a, "todo", json!({})).await;
    assert_eq!(v["summary"]["total"], 0);
}

#[tokio::test]
async fn todo_caps_content() {
    let registry = installed();
    let dir = tempfile::tempdir().unwrap();
    let a = ctx(dir.path(), "todo-session-cap");
    let long = "y".repeat(5000);
    let v = call(
        registry,
        &a,
        "todo",
        json!({"todos": [{"id": "1", "content": long, "status": "pending"}]}),
    )
    .await;
    let content = v["todos"][0]["content"].as_str().unwrap();
    assert_eq!(content.chars().count(), 4000);
    assert!(content.ends_with("[truncated]"));
}

fn memory_file(home: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(home.join("memories").join(name)).unwrap_or_default()
}

#[tokio::test]
async fn memory_adds_replaces_removes_under_the_profiles_home() {
    let registry = installed();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("profile-home");
    let c = ToolContext::new(Profile::new(&home), dir.path());

    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "add", "content": "User prefers tabs"}),
    )
    .await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["target"], "memory");
    assert_eq!(v["entry_count"], 1);
    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "add", "content": "Repo uses cargo xtask"}),
    )
    .await;
    assert_eq!(v["entry_count"], 2);
    assert_eq!(
        memory_file(&home, "MEMORY.md"),
        "User prefers tabs\n§\nRepo uses cargo xtask"
    );

    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "add", "content": "  User prefers tabs "}),
    )
    .await;
    assert!(
        v["message"].as_str().unwrap().contains("already exists"),
        "{v}"
    );

    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "replace", "old_text": "tabs", "content": "User prefers 4 spaces"}),
    )
    .await;
    assert_eq!(v["success"], true, "{v}");
    assert!(memory_file(&home, "MEMORY.md").starts_with("User prefers 4 spaces\n§\n"));

    // Ambiguous and unmatched substrings are refused, with what to do next.
    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "remove", "old_text": "e"}),
    )
    .await;
    assert_eq!(v["success"], false);
    let both = json!(["User prefers 4 spaces", "Repo uses cargo xtask"]);
    assert_eq!(v["matches"], both, "{v}");
    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "remove", "old_text": "nope"}),
    )
    .await;
    assert_eq!(v["current_entries"], both, "{v}");
    let v = call(registry, &c, "memory", json!({"action": "remove"})).await;
    assert!(v["error"].as_str().unwrap().contains("old_text"), "{v}");
    let v = call(registry, &c, "memory", json!({"action": "add"})).await;
    assert!(v["error"].as_str().unwrap().contains("content"), "{v}");

    let v = call(
        registry,
        &c,
        "memory",
        json!({"action": "remove", "old_text": "xtask"}),
    )
    .await;
    assert_eq!(v["entry_count"], 1, "{v}");

    // The user store is its own file.
    let v = call(
        registry,
        &c,
        "memory",
        json!({"target": "user", "action": "add", "content": "Name: Ada"}),
    )
    .await;
    assert_eq!(v["target"], "user", "{v}");
    assert_eq!(memory_file(&home, "USER.md"), "Name: Ada");

    let snapshot = hermes_tools::tools::memory::snapshot(c.profile());
    assert!(snapshot.contains("User prefers 4 spaces") && snapshot.contains("Name: Ada"));
    assert!(snapshot.contains("USER PROFILE"));
}

#[tokio::test]
async fn memory_batches_apply_all_or_nothing_against_the_final_budget() {
    let registry = installed();
    let dir = tempfile::tempdir().unwrap();
    let c = ToolContext::new(Profile::new(dir.path()), dir.path());
    let big = "a".repeat(1300);
    let v = call(
        registry,
        &c,
        "memory",
        json!({"target": "user", "action": "add", "content": big}),
    )
    .await;
    assert_eq!(v["success"], true, "{v}");

    // Alone, the add overflows the user budget (1375) and is refused with
    // the entries shown.
    let add = json!({"action": "add", "content": "b".repeat(200)});
    let v = call(
        registry,
        &c,
        "memory",
        json!({"target": "user", "operations": [add]}),
    )
    .await;
    assert_eq!(v["success"], false, "{v}");
    assert!(v["usage"].as_str().unwrap().contains("/1375"), "{v}");
    assert_eq!(v["current_entries"], json!([big]), "{v}");

    // A failing operation leaves the store untouched.
    let v = call(
        registry,
        &c,
        "memory",
        json!({"target": "user", "operations": [
            {"action": "add", "content": "kept?"},
            {"action": "remove", "old_text": "missing"},
        ]}),
    )
    .await;
    assert!(
        v["error"].as_str().unwrap().starts_with("Operation 2:"),
        "{v}"
    );
    assert_eq!(memory_file(dir.path(), "USER.md"), "a".repeat(1300));

    // Freeing room in the same batch makes it fit.
    let v = call(
        registry,
        &c,
        "memory",
        json!({"target": "user", "operations": [
            {"action": "remove", "old_text": "aaaa"},
            add,
        ]}),
    )
    .await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(memory_file(dir.path(), "USER.md"), "b".repeat(200));
}
