//! Hostile-input cases of the process layer: a fork bomb, output floods on
//! a pipe and on a pseudo-terminal, and bad `process` input, through
//! `call` under the memory limit.

use std::time::Duration;

use hermes_procs::contain::{containment, Containment};
use serde_json::json;

use crate::harness;

/// The bomb stays under the profile's bound, and what it left is torn down
/// and reported, with the bound it reached. Its shell waits until the
/// call's timeout, so the bomb has those seconds to reach the bound by
/// construction, whatever the machine's speed (a shell that returned at
/// once left the verdict to a race between the bomb and the teardown). Only with a cgroup per command: the
/// fallback (`RLIMIT_NPROC`) counts the whole user, and root has none.
#[test]
fn a_fork_bomb_is_bounded_and_torn_down() {
    if !matches!(containment(), Containment::Cgroup { .. }) {
        eprintln!("skipped: containment is {}", containment().name());
        return;
    }
    let (cwd, profile) = harness::dirs();
    std::fs::write(profile.path().join(".env"), "TERMINAL_MAX_PROCESSES=48\n").expect("env");
    let out = harness::call(
        "terminal",
        // A fork bomb written in the command is a hard line under any name
        // (never run); sourced from a file, unread, it is what the process
        // bound must hold.
        &json!({"command": "printf '%s\\n' 'b(){ b|b& };b' > bomb.sh; . ./bomb.sh; sleep 30", "timeout": 3}),
        cwd.path(),
        profile.path(),
        &[],
        Duration::from_secs(60),
    );
    let v = &out.json;
    let note = v["note"].as_str().unwrap_or("");
    assert!(note.contains("limit of 48 processes"), "{note}");
    // Torn down at the timeout, the bomb's processes with the shell.
    let error = v["error"].as_str().unwrap_or("");
    assert!(
        error.contains("every process it started were terminated"),
        "{v:.400}"
    );
    assert!(out.elapsed < Duration::from_secs(30), "{:?}", out.elapsed);
}

/// A command that writes without end: the output kept is capped, on a pipe
/// and on a pseudo-terminal alike.
#[test]
fn output_floods_are_capped() {
    let (cwd, profile) = harness::dirs();
    for pty in [false, true] {
        let out = harness::call(
            "terminal",
            &json!({"command": "yes 0123456789abcdef", "timeout": 2, "pty": pty}),
            cwd.path(),
            profile.path(),
            &[],
            Duration::from_secs(60),
        );
        let v = &out.json;
        assert_eq!(v["exit_code"], 124, "{v:.300}");
        let text = v["output"].as_str().expect("output");
        assert!(text.len() < 60_000, "{} bytes kept", text.len());
        assert!(text.contains("OUTPUT TRUNCATED"), "{:.300}", text);
    }
}

/// Bad `process` input gets an error that names the problem.
#[test]
fn bad_process_input_is_named() {
    let (cwd, profile) = harness::dirs();
    let call = |args: serde_json::Value| {
        harness::call(
            "process",
            &args,
            cwd.path(),
            profile.path(),
            &[],
            Duration::from_secs(60),
        )
    };
    let out = call(json!({"action": "frobnicate", "session_id": "x"}));
    assert!(out.error().contains("action"), "{}", out.json);
    let out = call(json!({"action": "write", "data": "x"}));
    assert!(out.error().contains("session_id"), "{}", out.json);
    let out = call(json!({"action": "submit", "session_id": "proc_000000000000", "data": "x"}));
    assert_eq!(out.json["status"], "not_found", "{}", out.json);
    let out = harness::call(
        "terminal",
        &json!({"command": "true", "pty": "maybe"}),
        cwd.path(),
        profile.path(),
        &[],
        Duration::from_secs(60),
    );
    assert!(out.error().contains("'pty'"), "{}", out.json);
}
