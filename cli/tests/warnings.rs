//! The runtime's warnings are `tracing` events; the binary prints them on
//! stderr. Here: a blocking call (`web_extract` of a server that never
//! answers) cancelled by the MCP client is abandoned, then finishes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

/// Sends each line of `from` on a channel, until it ends.
fn lines_of(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// The first line from `rx` containing `want`, within `limit`.
fn wait_for(rx: &mpsc::Receiver<String>, want: &str, limit: Duration, seen: &mut Vec<String>) {
    let end = Instant::now() + limit;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(want);
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(_) => break,
        }
    }
    panic!("no line with {want:?} within {limit:?}; got {seen:#?}");
}

#[test]
fn an_abandoned_blocking_call_is_reported_on_stderr() {
    // Accepts connections and never answers them.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let (accepted, connected) = mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().take(4).flatten() {
            held.push(stream);
            let _ = accepted.send(());
        }
        std::thread::sleep(Duration::from_secs(60));
    });
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".env"),
        "HERMES_ALLOW_PRIVATE_URLS=true\nWEB_EXTRACT_TIMEOUT=2\n",
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .arg("--profile")
        .arg(home.path())
        .args(["serve", "--mcp"])
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = lines_of(child.stdout.take().unwrap());
    let stderr = lines_of(child.stderr.take().unwrap());
    let mut send = |message: serde_json::Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut seen = Vec::new();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "warnings-test", "version": "0"}}}),
    );
    wait_for(&stdout, "\"id\":1", Duration::from_secs(30), &mut seen);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "web_extract", "arguments": {"urls": [url]}}}),
    );
    // The page is being fetched: cancel the call.
    connected
        .recv_timeout(Duration::from_secs(30))
        .expect("web_extract connected");
    send(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}}),
    );
    let mut warnings = Vec::new();
    wait_for(
        &stderr,
        "blocking call is over",
        Duration::from_secs(30),
        &mut warnings,
    );
    // The fetch gives up after WEB_EXTRACT_TIMEOUT; its thread then ends.
    wait_for(
        &stderr,
        "abandoned blocking call has finished",
        Duration::from_secs(30),
        &mut warnings,
    );
    let _ = child.kill();
    let _ = child.wait();
    let text = warnings.join("\n");
    assert!(
        text.contains("WARN") && text.contains("tool=web_extract abandoned=1"),
        "{text}"
    );
    assert!(text.contains("still_running=0"), "{text}");
}
