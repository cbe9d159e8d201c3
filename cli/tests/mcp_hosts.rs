//! `serve --mcp --http` as one of many hosts behind a proxy: the readiness
//! endpoint, SIGTERM's drain, and the answers a client of another host gets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_support;

use std::time::Duration;

use mcp_support::{
    call_tool, get, open_session, process_gone, start_waiting_call, tool_text, wait_until, Server,
};
use serde_json::{json, Value};

fn sigterm(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
}

/// SIGTERM: readiness turns 404 and a new session is refused with 503 at
/// once, while the call already running finishes with its real result;
/// then the server tears down its background processes and exits.
#[test]
fn sigterm_drains_running_calls_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        dir.path(),
        &["--toolsets", "terminal", "--drain-grace", "60"],
        None,
    );
    let ready = get(server.addr, "/ready");
    assert_eq!(
        (ready.status, ready.body.trim()),
        (200, "ready"),
        "{ready:?}"
    );
    let session = open_session(server.addr).unwrap();
    let background = tool_text(&call_tool(
        server.addr,
        Some(&session),
        "terminal",
        json!({"command": "sleep 300", "background": true}),
    ))
    .unwrap();
    let background: serde_json::Value = serde_json::from_str(&background.0).unwrap();
    let bg_pid = u32::try_from(background["pid"].as_u64().unwrap()).unwrap();

    // A call that runs until the marker file it waits for appears.
    let addr = server.addr;
    let running = start_waiting_call(addr, &session, dir.path());
    sigterm(server.pid());
    assert!(
        wait_until(Duration::from_secs(10), || get(addr, "/ready").status
            == 404),
        "readiness turns 404 while draining"
    );
    let refused = open_session(addr).unwrap_err();
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.body.contains("draining"), "{refused:?}");
    assert!(!process_gone(server.pid()), "the server waits for the call");
    std::fs::write(dir.path().join("go"), "").unwrap();
    let (text, is_error) = tool_text(&running.join().unwrap()).unwrap();
    assert!(!is_error && text.contains("finished-"), "{text}");
    assert!(
        wait_until(Duration::from_secs(20), || server
            .child
            .try_wait()
            .unwrap()
            .is_some()),
        "the server exits once drained"
    );
    assert!(
        wait_until(Duration::from_secs(10), || process_gone(bg_pid)),
        "the background process {bg_pid} outlived the drain"
    );
    let stderr = server.stderr().join("\n");
    assert!(stderr.contains("drained"), "{stderr}");
}

/// A call that outlasts `--drain-grace` does not hold the exit.
#[test]
fn drain_gives_up_after_its_grace() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        dir.path(),
        &["--toolsets", "terminal", "--drain-grace", "1"],
        None,
    );
    let session = open_session(server.addr).unwrap();
    let addr = server.addr;
    let running = std::thread::spawn(move || {
        call_tool(
            addr,
            Some(&session),
            "terminal",
            json!({"command": "touch started; sleep 120", "timeout": 600}),
        )
    });
    assert!(wait_until(Duration::from_secs(20), || dir
        .path()
        .join("started")
        .exists()));
    sigterm(server.pid());
    assert!(
        wait_until(Duration::from_secs(20), || server
            .child
            .try_wait()
            .unwrap()
            .is_some()),
        "the server exits after its grace"
    );
    // The client's call ends (its connection closed), without a result.
    assert!(tool_text(&running.join().unwrap()).is_none());
    let stderr = server.stderr().join("\n");
    assert!(stderr.contains("still running after 1 s"), "{stderr}");
}

/// The readiness endpoint is open to a health checker without the token;
/// nothing else is.
#[test]
fn readiness_needs_no_token() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--token", "s3cret-for-readiness"], None);
    let ready = get(server.addr, "/ready");
    assert_eq!(
        (ready.status, ready.body.trim()),
        (200, "ready"),
        "{ready:?}"
    );
    assert_eq!(get(server.addr, "/mcp").status, 401);
    assert_eq!(open_session(server.addr).unwrap_err().status, 401);
}

/// `--stateless`: no session is needed or given; a file written through
/// one host is read through another, each request on its own.
#[test]
fn stateless_hosts_answer_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--toolsets", "file,web,skills,memory", "--stateless"];
    let a = Server::start(dir.path(), &args, None);
    let b = Server::start(dir.path(), &args, None);
    let init = a.initialize();
    assert_eq!(init.status, 200, "{init:?}");
    assert_eq!(init.header("mcp-session-id"), None, "{init:?}");
    let written = call_tool(
        a.addr,
        None,
        "write_file",
        json!({"path": "shared.txt", "content": "written through host a\n"}),
    );
    let (text, is_error) = tool_text(&written).unwrap_or_else(|| panic!("{written:?}"));
    assert!(!is_error, "{text}");
    let read = call_tool(b.addr, None, "read_file", json!({"path": "shared.txt"}));
    let (text, is_error) = tool_text(&read).unwrap_or_else(|| panic!("{read:?}"));
    assert!(
        !is_error && text.contains("written through host a"),
        "{text}"
    );
}

/// `--stateless` with a toolset that keeps session state refuses to start,
/// naming each such tool and its toolset.
#[test]
fn stateless_refuses_tools_that_keep_session_state() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(mcp_support::BIN)
        .args(["serve", "--mcp", "--http", "127.0.0.1:0", "--stateless"])
        .args(["--toolsets", "file,terminal,todo", "--profile"])
        .arg(dir.path().join("profile"))
        .env_remove("HERMES_MCP_TOKEN")
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for named in ["terminal (terminal)", "process (terminal)", "todo (todo)"] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
    assert!(!stderr.contains("read_file"), "{stderr}");
}

/// A session this host does not hold (its host died, or it ended) is
/// answered 404, MCP's "session ended"; a new session works.
#[test]
fn an_unknown_session_is_404_and_a_new_one_works() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--toolsets", "file"], None);
    let gone = call_tool(
        server.addr,
        Some("0123456789abcdef-of-another-host"),
        "read_file",
        json!({"path": "x"}),
    );
    assert_eq!(gone.status, 404, "{gone:?}");
    let session = open_session(server.addr).unwrap();
    std::fs::write(dir.path().join("x"), "fresh\n").unwrap();
    let read = call_tool(
        server.addr,
        Some(&session),
        "read_file",
        json!({"path": "x"}),
    );
    let (text, is_error) = tool_text(&read).unwrap_or_else(|| panic!("{read:?}"));
    assert!(!is_error && text.contains("fresh"), "{text}");
}

/// A JSON-RPC request of the sessionless revision (2026-07-28): its
/// version, client and capabilities in `_meta`, with the headers SEP-2243
/// asks for.
fn sessionless(
    addr: std::net::SocketAddr,
    id: u64,
    method: &str,
    params: serde_json::Value,
) -> mcp_support::Response {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    mcp_support::request(
        addr,
        "POST",
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ],
        &body.to_string(),
    )
}

/// The JSON-RPC error code of an answer, and its id.
fn error_of(response: &mcp_support::Response) -> (Option<i64>, serde_json::Value) {
    let body = result_of(response);
    (body["error"]["code"].as_i64(), body["id"].clone())
}

/// The JSON-RPC message of an answer, sent as JSON or as one SSE event.
fn result_of(response: &mcp_support::Response) -> serde_json::Value {
    let body = response.body.trim();
    let json = if body.starts_with('{') {
        body
    } else {
        body.lines()
            .find_map(|l| l.strip_prefix("data:"))
            .unwrap_or_default()
    };
    serde_json::from_str(json.trim()).unwrap_or_default()
}

/// A host whose tools keep session state answers the sessionless revision
/// as a 2025-11-25 server does (`server/discover` is no method: 404,
/// -32601, the request's id), so a client that negotiates falls back to a
/// session; `initialize` then opens one.
#[test]
fn a_stateful_host_is_a_session_server_to_sessionless_clients() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--toolsets", "file,terminal"], None);
    let discover = sessionless(server.addr, 7, "server/discover", json!({}));
    assert_eq!(discover.status, 404, "{discover:?}");
    assert_eq!(
        error_of(&discover),
        (Some(-32601), json!(7)),
        "{discover:?}"
    );
    let listed = sessionless(server.addr, 8, "tools/list", json!({}));
    assert_eq!(error_of(&listed), (Some(-32601), json!(8)), "{listed:?}");
    let init = server.initialize();
    assert_eq!(init.status, 200, "{init:?}");
    assert!(init.header("mcp-session-id").is_some(), "{init:?}");
}

/// A `--stateless` host speaks the sessionless revision: `server/discover`
/// names it, tools are listed and called without a session, and the
/// methods that revision removes are answered 404 with -32601 and the
/// request's id.
#[test]
fn a_stateless_host_speaks_the_sessionless_revision() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--toolsets", "file", "--stateless"], None);
    let discover = sessionless(server.addr, 1, "server/discover", json!({}));
    assert_eq!(discover.status, 200, "{discover:?}");
    assert!(discover.body.contains("2026-07-28"), "{discover:?}");
    let listed = sessionless(server.addr, 2, "tools/list", json!({}));
    assert!(listed.body.contains("read_file"), "{listed:?}");
    // The caching hints the revision requires: fresh for a while (not
    // stale at once), for this client only.
    let result = &result_of(&listed)["result"];
    assert!(result["ttlMs"].as_u64().is_some_and(|t| t > 0), "{result}");
    assert_eq!(result["cacheScope"], "private", "{result}");
    for (id, method) in [
        (3, "initialize"),
        (4, "logging/setLevel"),
        (5, "resources/subscribe"),
        (6, "resources/unsubscribe"),
    ] {
        let removed = sessionless(
            server.addr,
            id,
            method,
            json!({"level": "info", "uri": "x"}),
        );
        assert_eq!(removed.status, 404, "{method}: {removed:?}");
        assert_eq!(
            error_of(&removed),
            (Some(-32601), json!(id)),
            "{method}: {removed:?}"
        );
    }
    // A client of 2025-11-25 still gets its handshake.
    let init = server.initialize();
    assert_eq!(init.status, 200, "{init:?}");
}

/// The text of a tool result's first block.
fn first_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// Connects rmcp's negotiating client (`server/discover`, else
/// `initialize`) to `addr`.
async fn negotiating_client(
    addr: std::net::SocketAddr,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::{ClientLifecycleMode, ClientServiceExt};
    hermes_mcp_client::install_tls_provider();
    let transport = StreamableHttpClientTransport::with_client(
        reqwest::Client::builder().no_proxy().build().unwrap(),
        StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp")),
    );
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    };
    tokio::time::timeout(
        Duration::from_secs(30),
        ().serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .expect("connects in time")
    .expect("connects")
}

/// A client that would speak 2026-07-28 gets a session from a host whose
/// tools keep state, and the state lasts from one call to the next; from
/// a `--stateless` host it gets 2026-07-28.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiating_clients_get_state_where_tools_keep_it() {
    use rmcp::model::{CallToolRequestParams, ProtocolVersion};
    let dir = tempfile::tempdir().unwrap();
    let stateful = Server::start(dir.path(), &["--toolsets", "terminal"], None);
    let client = negotiating_client(stateful.addr).await;
    let version = client.peer_info().map(|i| i.protocol_version.clone());
    assert_ne!(version, Some(ProtocolVersion::V_2026_07_28), "{version:?}");
    for (command, expect) in [
        ("export HERMES_PROBE=kept-between-calls", ""),
        ("echo \"probe=$HERMES_PROBE\"", "probe=kept-between-calls"),
    ] {
        let Value::Object(args) = json!({"command": command}) else {
            unreachable!()
        };
        let result = tokio::time::timeout(
            Duration::from_secs(30),
            client.call_tool(CallToolRequestParams::new("terminal").with_arguments(args)),
        )
        .await
        .unwrap()
        .unwrap();
        assert!(first_text(&result).contains(expect), "{result:?}");
    }
    let _ = client.cancel().await;

    let stateless = Server::start(dir.path(), &["--toolsets", "file", "--stateless"], None);
    let client = negotiating_client(stateless.addr).await;
    let version = client.peer_info().map(|i| i.protocol_version.clone());
    assert_eq!(version, Some(ProtocolVersion::V_2026_07_28));
    std::fs::write(dir.path().join("said.txt"), "sessionless\n").unwrap();
    let Value::Object(args) = json!({"path": "said.txt"}) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("read_file").with_arguments(args))
        .await
        .unwrap();
    assert!(first_text(&result).contains("sessionless"), "{result:?}");
    let _ = client.cancel().await;
}
