//! End to end: `hermes-tools serve --mcp` as a child process, driven by
//! rmcp's own client over stdio and over streamable HTTP (with and without
//! the bearer token).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
/// Every test finishes well within this, or fails.
const LIMIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "s3cret-token-for-tests";

type Client = RunningService<RoleClient, ()>;

/// The tools `serve --mcp` exposes by default: the core list, as the server
/// defines it (a `core` toolset unless `toolsets.toml` has one).
fn core_tools(profile: &Path) -> Vec<String> {
    let registry = hermes_tools::registry();
    let toolsets = registry.toolsets();
    if !toolsets.validate_toolset("core") {
        toolsets.create_custom_toolset("core", "core", toolsets.core_tools(), &[]);
    }
    let profile = hermes_runtime::Profile::new(profile);
    let defs = registry.get_tool_definitions(Some(&["core"]), &[], &profile);
    defs.names().into_iter().map(str::to_string).collect()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name} failed at the protocol level: {e}"))
}

/// What every transport must do: list the core tools with their schemas,
/// write and read a file in the server's working directory, and answer a
/// failing call and an unknown tool with `isError`, not a crash.
async fn exercise(client: &Client, dir: &Path, profile: &Path) {
    let info = client.peer_info().expect("the server answered initialize");
    assert_eq!(info.server_info.as_ref().unwrap().name, "hermes-tools");
    assert!(info.capabilities.tools.is_some());

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, core_tools(profile));
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()));
    }
    let read = tools.iter().find(|t| t.name == "read_file").unwrap();
    assert!(read.input_schema["properties"].get("path").is_some());

    // Every tool says what it does, each hint stated, and has a title.
    for tool in &tools {
        let hints = tool
            .annotations
            .as_ref()
            .expect("annotations on every tool");
        assert!(
            hints.read_only_hint.is_some()
                && hints.destructive_hint.is_some()
                && hints.idempotent_hint.is_some()
                && hints.open_world_hint.is_some(),
            "{}: {hints:?}",
            tool.name
        );
        assert!(tool.title.as_deref().is_some_and(|t| !t.is_empty()));
    }
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        serde_json::to_value(tool).unwrap()["annotations"].clone()
    };
    let read_hints = hints("read_file");
    assert_eq!(read_hints["readOnlyHint"], json!(true), "{read_hints}");
    assert_eq!(read_hints["destructiveHint"], json!(false), "{read_hints}");
    assert_eq!(read_hints["openWorldHint"], json!(false), "{read_hints}");
    assert_eq!(read_hints["title"], json!("Read file"), "{read_hints}");
    let write_hints = hints("write_file");
    assert_eq!(write_hints["readOnlyHint"], json!(false), "{write_hints}");
    assert_eq!(write_hints["destructiveHint"], json!(true), "{write_hints}");
    let terminal_hints = hints("terminal");
    assert_eq!(terminal_hints["readOnlyHint"], json!(false));
    assert_eq!(terminal_hints["destructiveHint"], json!(true));

    let wrote = call(
        client,
        "write_file",
        json!({"path": "notes/hello.txt", "content": "first line\nsecond line\n"}),
    )
    .await;
    assert_ne!(wrote.is_error, Some(true), "{}", text(&wrote));
    // A tool whose result is a struct: its outputSchema, and the result as
    // structuredContent too, valid against it.
    let write = tools.iter().find(|t| t.name == "write_file").unwrap();
    let schema = Value::Object((**write.output_schema.as_ref().unwrap()).clone());
    assert!(
        schema["properties"].get("bytes_written").is_some(),
        "{schema}"
    );
    let structured = wrote.structured_content.clone().unwrap();
    assert_eq!(
        structured,
        serde_json::from_str::<Value>(&text(&wrote)).unwrap()
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(
        validator.is_valid(&structured),
        "{structured} against {schema}"
    );
    // A result that is not a struct (read_file's page or note) has neither.
    let read_tool = tools.iter().find(|t| t.name == "read_file").unwrap();
    assert!(read_tool.output_schema.is_none());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes/hello.txt")).unwrap(),
        "first line\nsecond line\n"
    );

    let read = call(client, "read_file", json!({"path": "notes/hello.txt"})).await;
    assert_ne!(read.is_error, Some(true), "{}", text(&read));
    let body = text(&read);
    assert!(body.contains("second line"), "{body}");
    serde_json::from_str::<Value>(&body).expect("a tool result is a JSON document");

    // Argument coercion is part of the pipeline: "1" becomes the integer 1.
    let paged = call(
        client,
        "read_file",
        json!({"path": "notes/hello.txt", "offset": "2"}),
    )
    .await;
    assert_ne!(paged.is_error, Some(true), "{}", text(&paged));
    assert!(!text(&paged).contains("first line"), "{}", text(&paged));

    let missing = call(client, "read_file", json!({"path": "no/such/file.txt"})).await;
    assert_eq!(missing.is_error, Some(true), "{}", text(&missing));
    // The error's text is the message itself, not a JSON document holding it.
    let message = text(&missing);
    assert!(
        serde_json::from_str::<Value>(&message).is_err() && message.contains("no/such/file.txt"),
        "{message}"
    );

    let unknown = call(client, "read_fil", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    let message = text(&unknown);
    assert!(message.contains("Unknown tool: read_fil"), "{message}");
    assert!(
        message.contains("read_file"),
        "suggests the near name: {message}"
    );

    let bad_args = call(client, "read_file", json!({"offset": 3})).await;
    assert_eq!(
        bad_args.is_error,
        Some(true),
        "a missing argument is an error result"
    );

    // The server is still there after every failure.
    let again = call(client, "read_file", json!({"path": "notes/hello.txt"})).await;
    assert_ne!(again.is_error, Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server_lists_and_calls_tools() {
    let dir = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    tokio::time::timeout(LIMIT, async {
        let mut command = tokio::process::Command::new(BIN);
        command
            .args(["serve", "--mcp", "--profile"])
            .arg(profile.path())
            // A token in the environment is for --http; stdio ignores it.
            .env("HERMES_MCP_TOKEN", TOKEN)
            .current_dir(dir.path());
        let transport = TokioChildProcess::new(command).unwrap();
        let client = ().serve(transport).await.unwrap();
        exercise(&client, dir.path(), profile.path()).await;
        // Closing the session closes the child's stdin; the server exits.
        client.cancel().await.unwrap();
    })
    .await
    .expect("the stdio test finished in time");
}

/// A `serve --mcp --http 127.0.0.1:0` child and the URL it reports; killed on drop.
struct HttpServer {
    child: tokio::process::Child,
    url: String,
}

impl HttpServer {
    async fn start(dir: &Path, profile: &Path) -> HttpServer {
        let mut child = tokio::process::Command::new(BIN)
            .args(["serve", "--mcp", "--http", "127.0.0.1:0", "--profile"])
            .arg(profile)
            .env("HERMES_MCP_TOKEN", TOKEN)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server reports its address before anything else");
            if let Some(at) = line.find("http://") {
                break line[at..].split_whitespace().next().unwrap().to_string();
            }
        };
        // Keep draining stderr so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        HttpServer { child, url }
    }

    async fn stop(mut self) {
        self.child.kill().await.unwrap();
    }
}

fn http_client() -> reqwest::Client {
    hermes_mcp_client::install_tls_provider();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_requires_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    tokio::time::timeout(LIMIT, async {
        let server = HttpServer::start(dir.path(), profile.path()).await;
        assert!(
            server.url.starts_with("http://127.0.0.1:"),
            "{}",
            server.url
        );
        assert!(server.url.ends_with("/mcp"), "{}", server.url);

        // Without the token, or with a wrong one: 401 before any MCP handling.
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}},
        });
        for auth in [None, Some("Bearer wrong"), Some("Basic czNjcmV0")] {
            let mut request = http_client()
                .post(&server.url)
                .header("accept", "application/json, text/event-stream")
                .json(&initialize);
            if let Some(auth) = auth {
                request = request.header("authorization", auth);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 401, "authorization {auth:?}");
            assert_eq!(response.headers()["www-authenticate"], "Bearer");
        }

        // rmcp's client without the token cannot even initialize.
        let transport = StreamableHttpClientTransport::with_client(
            http_client(),
            StreamableHttpClientTransportConfig::with_uri(server.url.clone()),
        );
        assert!(().serve(transport).await.is_err());

        // With it, everything the stdio server does.
        let transport = StreamableHttpClientTransport::with_client(
            http_client(),
            StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(TOKEN),
        );
        let client = ().serve(transport).await.unwrap();
        exercise(&client, dir.path(), profile.path()).await;
        client.cancel().await.unwrap();
        server.stop().await;
    })
    .await
    .expect("the HTTP test finished in time");
}

#[test]
fn http_refuses_a_public_address_without_a_token() {
    let out = std::process::Command::new(BIN)
        .args(["serve", "--mcp", "--http", "0.0.0.0:0"])
        .env_remove("HERMES_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
}

#[test]
fn serve_refuses_an_unknown_toolset() {
    let out = std::process::Command::new(BIN)
        .args(["serve", "--mcp", "--toolsets", "core,no_such_toolset"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no_such_toolset"), "{stderr}");
}

mod mcp_support;
use mcp_support::{process_gone, request, wait_until, Server};

/// A `serve --mcp` child spoken to in raw JSON lines; killed on drop.
struct RawStdio {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawStdio {
    fn start(dir: &Path, args: &[&str]) -> RawStdio {
        let mut child = std::process::Command::new(BIN)
            .args(["serve", "--mcp", "--profile"])
            .arg(dir.join("profile"))
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut raw = RawStdio {
            child,
            stdin,
            lines,
        };
        raw.send_line(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string()
            .as_bytes(),
        );
        let init = raw.recv();
        assert_eq!(init["id"], 0, "{init}");
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        raw.send_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send_line(&mut self, line: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes, as JSON (panics after 30 s).
    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the server answers within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn call(&mut self, id: u64, name: &str, args: Value) -> Value {
        self.send_line(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
            .to_string()
            .as_bytes(),
        );
        let reply = self.recv();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// Waits (bounded) for the child to exit.
    fn wait_exit(&mut self, limit: Duration) -> bool {
        wait_until(limit, || self.child.try_wait().unwrap().is_some())
    }
}

impl Drop for RawStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a tools/call reply, parsed as the tool's JSON result.
fn tool_result(reply: &Value) -> Value {
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {reply}"));
    serde_json::from_str(text).unwrap()
}

#[test]
fn stdio_answers_what_it_cannot_read_and_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "hello\n").unwrap();
    let mut server = RawStdio::start(dir.path(), &["--max-message-bytes", "4096"]);

    // Not JSON, and not text: the JSON-RPC parse error, id null.
    for line in [
        &b"{\"jsonrpc\": \"2.0\", \"id\": 3, "[..],
        b"\xff\xfe\x00garbage",
    ] {
        server.send_line(line);
        let reply = server.recv();
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        assert_eq!(reply["id"], Value::Null, "{reply}");
    }
    // JSON that is no JSON-RPC message: invalid request.
    server.send_line(br#"{"jsonrpc": "2.0", "id": 4}"#);
    let reply = server.recv();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], 4, "{reply}");

    // Arguments of tools/call that are not an object: invalid params.
    for (id, args) in [
        (5, json!("path=small.txt")),
        (6, json!([1, 2])),
        (7, json!(3)),
    ] {
        let reply = server.call(id, "read_file", args);
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("arguments"), "{message}");
    }

    // A line over --max-message-bytes: an error, and the rest of it is
    // skipped up to its newline (not read as another message).
    let mut long = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_file","arguments":{"path":""#.to_vec();
    long.extend(std::iter::repeat_n(b'a', 20_000));
    long.extend_from_slice(br#""}}}"#);
    server.send_line(&long);
    let reply = server.recv();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-message-bytes"),
        "{reply}"
    );

    // Still serving, in order.
    let reply = server.call(9, "read_file", json!({"path": "small.txt"}));
    assert!(tool_result(&reply)["content"]
        .as_str()
        .unwrap()
        .contains("hello"));

    // Stdin closed: the server ends by itself.
    drop(server.stdin.take());
    assert!(server.wait_exit(Duration::from_secs(20)), "exits at EOF");
    assert!(server.child.wait().unwrap().success());
}

/// Starts `sleep 300` in the background through `terminal`, with a child of
/// its own: returns (the process's pid, its child's pid).
fn start_sleeper(call: impl FnOnce(Value) -> Value, dir: &Path) -> (u32, u32) {
    let result = call(json!({
        "command": "sleep 300 & echo $! > grandchild.pid; sleep 301",
        "background": true,
    }));
    let pid = result["pid"].as_u64().unwrap_or_else(|| panic!("{result}")) as u32;
    let file = dir.join("grandchild.pid");
    assert!(wait_until(Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|s| s.ends_with('\n'))
    }));
    let grandchild = std::fs::read_to_string(&file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!process_gone(pid) && !process_gone(grandchild));
    (pid, grandchild)
}

fn assert_torn_down(pids: (u32, u32)) {
    for pid in [pids.0, pids.1] {
        assert!(
            wait_until(Duration::from_secs(10), || process_gone(pid)),
            "background process {pid} outlived the server"
        );
    }
}

#[test]
fn stdio_eof_tears_down_background_processes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = RawStdio::start(dir.path(), &["--toolsets", "terminal"]);
    let pids = start_sleeper(
        |args| tool_result(&server.call(1, "terminal", args)),
        dir.path(),
    );
    // A long foreground call still running must not hold the exit.
    server.send_line(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "terminal",
                          "arguments": {"command": "echo $$ > fg.pid; sleep 120", "timeout": 600}}})
        .to_string()
        .as_bytes(),
    );
    let fg = dir.path().join("fg.pid");
    assert!(wait_until(Duration::from_secs(20), || {
        std::fs::read_to_string(&fg).is_ok_and(|s| s.ends_with('\n'))
    }));
    let fg_pid: u32 = std::fs::read_to_string(&fg)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(server.stdin.take());
    assert!(
        server.wait_exit(Duration::from_secs(30)),
        "the server exits at EOF although a call is running"
    );
    assert_torn_down(pids);
    // The running foreground command goes with it.
    assert!(
        wait_until(Duration::from_secs(10), || process_gone(fg_pid)),
        "foreground command {fg_pid} outlived the server"
    );
}

fn signal(pid: u32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
}

#[test]
fn stdio_sigterm_tears_down_background_processes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = RawStdio::start(dir.path(), &["--toolsets", "terminal"]);
    let pids = start_sleeper(
        |args| tool_result(&server.call(1, "terminal", args)),
        dir.path(),
    );
    // Stdin stays open: only the signal ends it.
    signal(server.child.id(), nix::sys::signal::Signal::SIGTERM);
    assert!(
        server.wait_exit(Duration::from_secs(30)),
        "exits on SIGTERM"
    );
    assert_torn_down(pids);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sigint_tears_down_background_processes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &["--toolsets", "terminal"], None);
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.addr)),
    );
    let client = tokio::time::timeout(LIMIT, ().serve(transport))
        .await
        .unwrap()
        .unwrap();
    let Value::Object(args) = json!({
        "command": "sleep 300 & echo $! > grandchild.pid; sleep 301",
        "background": true,
    }) else {
        unreachable!()
    };
    let result = tokio::time::timeout(
        LIMIT,
        client.call_tool(CallToolRequestParams::new("terminal").with_arguments(args)),
    )
    .await
    .unwrap()
    .unwrap();
    let result: Value = serde_json::from_str(&text(&result)).unwrap();
    let dir_path = dir.path().to_path_buf();
    let pids = tokio::task::spawn_blocking(move || start_sleeper(|_| result, &dir_path))
        .await
        .unwrap();
    signal(server.pid(), nix::sys::signal::Signal::SIGINT);
    let exited = tokio::task::spawn_blocking(move || {
        let exited = wait_until(Duration::from_secs(30), || {
            server.child.try_wait().unwrap().is_some()
        });
        (exited, server)
    })
    .await
    .unwrap();
    assert!(exited.0, "exits on SIGINT");
    assert!(exited.1.stderr().iter().any(|l| l.contains("SIGINT")));
    assert_torn_down(pids);
    drop(client);
}

#[test]
fn http_refuses_a_blank_token() {
    for (env, flag) in [(Some("   "), None), (None, Some("")), (None, Some(" \t "))] {
        let mut command = std::process::Command::new(BIN);
        command.args(["serve", "--mcp", "--http", "127.0.0.1:0"]);
        command.env_remove("HERMES_MCP_TOKEN");
        if let Some(env) = env {
            command.env("HERMES_MCP_TOKEN", env);
        }
        if let Some(flag) = flag {
            command.args(["--token", flag]);
        }
        let out = command.stdin(Stdio::null()).output().unwrap();
        assert!(!out.status.success(), "{env:?} {flag:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("blank"), "{stderr}");
    }
}

#[test]
fn http_closes_connections_that_send_no_headers() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--header-read-timeout", "1"], None);
    let silent = std::net::TcpStream::connect(server.addr).unwrap();
    let mut partial = std::net::TcpStream::connect(server.addr).unwrap();
    partial
        .write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\n")
        .unwrap();
    // Headers, then a body that stops coming.
    let mut trickle = std::net::TcpStream::connect(server.addr).unwrap();
    trickle
        .write_all(
            b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
              accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{\"json",
        )
        .unwrap();
    for mut stream in [silent, partial, trickle] {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut buf = Vec::new();
        // Closed by the server (EOF or a 408): never a read timeout here.
        match stream.read_to_end(&mut buf) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        }
    }
    assert_eq!(server.initialize().status, 200);
}

#[test]
fn http_answers_wrong_params_with_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[], None);
    let init = server.initialize();
    assert_eq!(init.status, 200, "{init:?}");
    let id = init.header("mcp-session-id").unwrap();
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = request(server.addr, "POST", &headers, &initialized.to_string());
    assert_eq!(accepted.status, 202, "{accepted:?}");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "read_file", "arguments": "path=x"}});
    let reply = request(server.addr, "POST", &headers, &call.to_string());
    assert!(reply.body.contains("-32602"), "{reply:?}");
    assert!(reply.body.contains("arguments"), "{reply:?}");
}

#[test]
fn http_refuses_a_body_over_the_message_limit() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--max-message-bytes", "2048"], None);
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "x".repeat(5000), "version": "0"}}});
    let refused = request(server.addr, "POST", &[], &big.to_string());
    assert_eq!(refused.status, 413, "{refused:?}");
    assert_eq!(server.initialize().status, 200);
}

#[test]
fn http_caps_connections() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--max-connections", "4"], None);
    let idle: Vec<std::net::TcpStream> = (0..4)
        .map(|_| std::net::TcpStream::connect(server.addr).unwrap())
        .collect();
    // Once the server has taken those four, another connection is refused
    // at once: a 503, or closed before the answer could be read.
    let mut refused = None;
    assert!(
        wait_until(Duration::from_secs(10), || {
            let response = server.initialize();
            let over = response.status != 200;
            refused = Some(response);
            over
        }),
        "a connection over the cap is refused"
    );
    let refused = refused.unwrap();
    assert!(
        refused.status == 503 || refused.status == 0,
        "over the cap: 503 or closed, got {refused:?}"
    );
    if refused.status == 503 {
        assert!(refused.body.contains("--max-connections"), "{refused:?}");
    }
    assert!(wait_until(Duration::from_secs(10), || server
        .stderr()
        .iter()
        .any(|l| l.contains("refusing connections"))));
    drop(idle);
    assert!(
        wait_until(Duration::from_secs(10), || server.initialize().status
            == 200),
        "a freed slot serves again"
    );
}

#[test]
fn http_caps_sessions_and_expires_idle_ones() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &["--max-sessions", "3", "--session-idle-timeout", "1"],
        None,
    );
    let mut ids = Vec::new();
    for _ in 0..3 {
        let response = server.initialize();
        assert_eq!(response.status, 200, "{response:?}");
        ids.push(response.header("mcp-session-id").unwrap());
    }
    let full = server.initialize();
    assert_eq!(full.status, 503, "{full:?}");
    assert!(full.body.contains("--max-sessions"), "{full:?}");
    assert!(full.header("retry-after").is_some(), "{full:?}");

    // Closing one frees a slot at once.
    let close = |id: &str| {
        request(
            server.addr,
            "DELETE",
            &[
                ("mcp-session-id", id),
                ("mcp-protocol-version", "2025-06-18"),
            ],
            "",
        )
    };
    let closed = close(&ids[0]);
    assert!(closed.status < 300, "{closed:?}");
    assert_eq!(server.initialize().status, 200);

    // Idle ones expire: after a while every slot is free again. (A probe
    // closes the sessions it opened, so probing never fills the slots.)
    assert!(
        wait_until(Duration::from_secs(20), || {
            let opened: Vec<_> = (0..3).map(|_| server.initialize()).collect();
            for response in &opened {
                if let Some(id) = response.header("mcp-session-id") {
                    close(&id);
                }
            }
            opened.iter().all(|r| r.status == 200)
        }),
        "idle sessions expire"
    );
    // An expired session is gone.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let gone = request(
        server.addr,
        "POST",
        &[
            ("mcp-session-id", &ids[1]),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        &ping,
    );
    assert_eq!(gone.status, 404, "{gone:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_session_with_a_running_call_does_not_expire() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &["--toolsets", "terminal", "--session-idle-timeout", "1"],
        None,
    );
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.addr)),
    );
    tokio::time::timeout(LIMIT, async {
        let client = ().serve(transport).await.unwrap();
        // Longer than the idle timeout, twice over.
        let slow = call(
            &client,
            "terminal",
            json!({"command": "sleep 3; echo finished"}),
        )
        .await;
        assert_ne!(slow.is_error, Some(true), "{}", text(&slow));
        assert!(text(&slow).contains("finished"), "{}", text(&slow));
        client.cancel().await.unwrap();
    })
    .await
    .expect("finished in time");
}

#[test]
fn http_accept_failures_are_logged_at_most_once_per_window() {
    let dir = tempfile::tempdir().unwrap();
    // Few descriptors: past them, accept fails (EMFILE) again and again.
    let server = Server::start(
        dir.path(),
        &["--max-connections", "1000"],
        Some("ulimit -n 40;"),
    );
    let held: Vec<std::net::TcpStream> = (0..60)
        .filter_map(|_| std::net::TcpStream::connect(server.addr).ok())
        .collect();
    assert!(wait_until(Duration::from_secs(10), || server
        .stderr()
        .iter()
        .any(|l| l.contains("accept failed"))));
    // Failures go on every 100 ms; the log stays at one line per 10 s.
    std::thread::sleep(Duration::from_secs(2));
    let logged = server
        .stderr()
        .iter()
        .filter(|l| l.contains("accept failed"))
        .count();
    assert!(logged <= 1, "{:?}", server.stderr());
    drop(held);
    assert!(
        wait_until(Duration::from_secs(20), || server.initialize().status
            == 200),
        "serves again once descriptors are free"
    );
}
