//! A resident shell that stops answering (here: stopped by a signal, as a
//! command of the same user could do to it) costs a call a bounded wait,
//! never a lost or a doubled command. Its own test binary: it stops every
//! resident shell of its process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_procs::scan;
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

#[tokio::test]
async fn a_stopped_resident_shell_delays_the_call_but_runs_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(dir.path()), dir.path());
    let call = |command: String| {
        let ctx = ctx.clone();
        async move {
            let out = hermes_tools::registry()
                .dispatch("terminal", json!({ "command": command }), &ctx)
                .await;
            serde_json::from_str::<Value>(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
        }
    };
    // Two concurrent calls leave two idle resident shells (where commands
    // are forked from them at all).
    let (a, b) = tokio::join!(call("echo a".into()), call("echo b".into()));
    assert_eq!(
        (a["output"].as_str(), b["output"].as_str()),
        (Some("a\n"), Some("b\n"))
    );
    let stopped = hermes_procs::resident::pids();
    if stopped.is_empty() {
        eprintln!("skipped: commands are not forked from resident shells here");
        return;
    }
    for &pid in &stopped {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGSTOP,
        )
        .unwrap();
    }
    let log = dir.path().join("runs.log");
    let started = Instant::now();
    let v = call(format!("echo run >> '{}'; echo done", log.display())).await;
    assert!(started.elapsed() < Duration::from_secs(30), "{v}");
    assert_eq!(v["output"], "done\n", "{v}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "run\n", "ran once");
    // The stopped shells are gone; the next call is served as usual.
    for pid in stopped {
        assert!(!scan::is_alive(pid, None), "{pid} still there");
    }
    let v = call("echo again".into()).await;
    assert_eq!(v["output"], "again\n", "{v}");
}
