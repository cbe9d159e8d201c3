//! Cancel means stop: a call that is over before its command (the
//! runtime's timeout, the caller dropping the future, the embedder's own
//! signal, an MCP client's `notifications/cancelled`) ends every process
//! the command started within 2 s. Real processes, real teardown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_runtime::{Cancellation, DispatchConfig, Profile, Registry, ToolContext};
use serde_json::{json, Value};

mod mcp_support;
use mcp_support::{process_gone, wait_until};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
/// The contract: every process of a cancelled call is gone within this.
const STOPPED_WITHIN: Duration = Duration::from_secs(2);

/// A command with a child of its own: the shell records its pid and its
/// child's, then waits on a long sleep.
const SLEEPER: &str = "sleep 300 & echo $! > child.pid; echo $BASHPID > shell.pid; wait";

/// The pids `SLEEPER` wrote in `dir`, once both are there (bounded).
fn sleeper_pids(dir: &Path) -> Vec<u32> {
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse::<u32>().ok())
    };
    assert!(
        wait_until(Duration::from_secs(30), || read("child.pid").is_some()
            && read("shell.pid").is_some()),
        "the command started"
    );
    let pids = vec![read("shell.pid").unwrap(), read("child.pid").unwrap()];
    for pid in &pids {
        assert!(!process_gone(*pid), "{pid} runs before the cancel");
    }
    pids
}

fn assert_stopped(pids: &[u32], since: Instant, how: &str) {
    for pid in pids {
        let left = STOPPED_WITHIN.saturating_sub(since.elapsed());
        assert!(
            wait_until(left, || process_gone(*pid)),
            "{how}: process {pid} still runs {:?} after the cancel",
            since.elapsed()
        );
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn scratch() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    let ctx = ToolContext::new(Profile::new(profile), dir.path());
    (dir, ctx)
}

#[test]
fn a_dropped_call_stops_its_command() {
    let (dir, ctx) = scratch();
    let rt = runtime();
    let registry = hermes_tools::registry();
    let args = json!({"command": SLEEPER, "timeout": 600}).to_string();
    let call = registry.dispatch_json("terminal", &args, &ctx);
    let dropped = rt.block_on(async {
        let call = std::pin::pin!(call);
        let started = async {
            let dir = dir.path().to_path_buf();
            tokio::task::spawn_blocking(move || sleeper_pids(&dir))
                .await
                .unwrap()
        };
        tokio::select! {
            answer = call => panic!("the command ended early: {answer}"),
            pids = started => pids,
        }
        // `call` is dropped here, at the end of the block.
    });
    assert_stopped(&dropped, Instant::now(), "dropped future");
    rt.shutdown_background();
}

#[test]
fn the_runtime_timeout_stops_the_command() {
    let (dir, ctx) = scratch();
    let rt = runtime();
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    registry.set_dispatch_config(
        DispatchConfig::default().with_tool_timeout("terminal", Duration::from_secs(3)),
    );
    let args = json!({"command": SLEEPER, "timeout": 600});
    let answer = rt.block_on(registry.dispatch("terminal", args, &ctx));
    let answered = Instant::now();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{answer}"
    );
    let pids = sleeper_pids(dir.path());
    assert_stopped(&pids, answered, "runtime timeout");
    assert!(
        wait_until(Duration::from_secs(5), || registry
            .blocking_work()
            .abandoned()
            == 0),
        "the handler gave its thread back"
    );
    rt.shutdown_background();
}

#[test]
fn the_embedders_signal_stops_the_command_and_says_so() {
    let (dir, ctx) = scratch();
    let rt = runtime();
    let signal = Cancellation::new();
    let ctx = ctx.with_cancellation(signal.clone());
    let registry = hermes_tools::registry();
    let args = json!({"command": SLEEPER, "timeout": 600}).to_string();
    let (answer, pids, cancelled_at) = rt.block_on(async {
        let call = registry.dispatch_json("terminal", &args, &ctx);
        let dir = dir.path().to_path_buf();
        let cancel = tokio::task::spawn_blocking(move || {
            let pids = sleeper_pids(&dir);
            signal.cancel();
            (pids, Instant::now())
        });
        let answer = call.await;
        let (pids, at) = cancel.await.unwrap();
        (answer, pids, at)
    });
    assert_stopped(&pids, cancelled_at, "embedder's signal");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|e| e.contains("cancelled")),
        "{answer}"
    );
    // The signal is the context's: the next call with it stops at once,
    // and a fresh context runs normally.
    let next = rt.block_on(registry.dispatch_json(
        "terminal",
        &json!({"command": "sleep 5; echo late"}).to_string(),
        &ctx,
    ));
    assert!(!next.contains("late"), "{next}");
    let (_dir2, fresh) = scratch();
    let ok = rt.block_on(registry.dispatch_json(
        "terminal",
        &json!({"command": "echo fine"}).to_string(),
        &fresh,
    ));
    assert!(ok.contains("fine"), "{ok}");
    rt.shutdown_background();
}

#[test]
fn an_mcp_cancel_notification_stops_the_command() {
    use std::io::{BufRead, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(BIN)
        .args(["serve", "--mcp", "--toolsets", "terminal", "--profile"])
        .arg(dir.path().join("profile"))
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |message: Value| {
        stdin.write_all(message.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "cancel-test", "version": "0"}}}));
    let init: Value =
        serde_json::from_str(&lines.recv_timeout(Duration::from_secs(30)).unwrap()).unwrap();
    assert_eq!(init["id"], 0, "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "terminal",
                           "arguments": {"command": SLEEPER, "timeout": 600}}}));
    let pids = sleeper_pids(dir.path());
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 7, "reason": "the user pressed stop"}}),
    );
    assert_stopped(&pids, Instant::now(), "notifications/cancelled");
    // The server keeps serving.
    send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                "params": {"name": "terminal", "arguments": {"command": "echo still-here"}}}));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut served = false;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(line) = lines.recv_timeout(left) else {
            break;
        };
        let reply: Value = serde_json::from_str(&line).unwrap();
        if reply["id"] == 8 {
            served = reply.to_string().contains("still-here");
            break;
        }
    }
    assert!(served, "the server answers the next call");
    let _ = child.kill();
    let _ = child.wait();
}
