//! The embedding API's session handle (`hermes_tools::Session`): what one
//! conversation's calls leave (background processes, file read state, the
//! todo list) ends with the handle, and only that session's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_runtime::{Profile, ToolContext};
use hermes_tools::Session;
use serde_json::{json, Value};

fn call(rt: &tokio::runtime::Runtime, ctx: &ToolContext, name: &str, args: Value) -> Value {
    let registry = hermes_tools::registry();
    hermes_tools::install_agent_loop_executors(registry);
    let out = rt.block_on(registry.dispatch(name, args, ctx));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn alive(pid: i64) -> bool {
    // A zombie is no process: it only waits to be reaped.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// A background `sleep` of `ctx`'s session, and its pid.
fn sleeper(rt: &tokio::runtime::Runtime, ctx: &ToolContext) -> i64 {
    let v = call(
        rt,
        ctx,
        "terminal",
        json!({"command": "exec sleep 300", "background": true}),
    );
    let pid = v["pid"].as_i64().unwrap_or_else(|| panic!("{v}"));
    assert!(alive(pid), "{v}");
    pid
}

fn read(rt: &tokio::runtime::Runtime, ctx: &ToolContext, path: &Path) -> Value {
    call(
        rt,
        ctx,
        "read_file",
        json!({"path": path.to_str().unwrap()}),
    )
}

#[test]
fn dropping_a_session_ends_its_processes_and_forgets_its_state() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let notes = work.path().join("notes.txt");
    std::fs::write(&notes, "line one\nline two\n").unwrap();
    let profile = Profile::new(home.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let session = Session::new(profile.clone(), work.path());
    let other = Session::new(profile.clone(), work.path());
    let ctx = session.context();
    let mine = sleeper(&rt, &ctx);
    let theirs = sleeper(&rt, &other.context());

    // Read state: a second read of an unchanged file is answered short.
    let first = read(&rt, &ctx, &notes);
    assert!(
        first["content"].as_str().unwrap().contains("line two"),
        "{first}"
    );
    let again = read(&rt, &ctx, &notes);
    assert!(again["content"].is_null(), "{again}");
    // A todo list.
    let v = call(
        &rt,
        &ctx,
        "todo",
        json!({"todos": [{"id": "1", "content": "ship", "status": "pending"}]}),
    );
    assert_eq!(v["summary"]["total"], 1, "{v}");

    drop(session);

    // Its process is gone; the other session's runs on.
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(mine) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(mine), "the session's background process outlived it");
    assert!(alive(theirs), "another session's process was ended");
    // Calls with its ids again find nothing of it: the file is read whole,
    // the todo list is empty, the process is no longer listed.
    let v = read(&rt, &ctx, &notes);
    assert!(v["content"].as_str().unwrap().contains("line two"), "{v}");
    let v = call(&rt, &ctx, "todo", json!({}));
    assert_eq!(v["summary"]["total"], 0, "{v}");
    let v = call(&rt, &other.context(), "process", json!({"action": "list"}));
    let listed: Vec<i64> = v["processes"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .filter_map(|p| p["pid"].as_i64())
        .collect();
    assert!(!listed.contains(&mine) && listed.contains(&theirs), "{v}");

    // Ending the other inside a runtime does not stall it, and still ends
    // its process.
    rt.block_on(async move { drop(other) });
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(theirs) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(theirs),
        "a session dropped in a runtime kept its process"
    );
}
