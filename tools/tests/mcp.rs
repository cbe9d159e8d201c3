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

    let wrote = call(
        client,
        "write_file",
        json!({"path": "notes/hello.txt", "content": "first line\nsecond line\n"}),
    )
    .await;
    assert_ne!(wrote.is_error, Some(true), "{}", text(&wrote));
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
    let error: Value = serde_json::from_str(&text(&missing)).unwrap();
    assert!(error["error"].is_string(), "{error}");

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
