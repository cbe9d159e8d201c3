//! The MCP client's costs (a benchmark, not a test: `cargo bench -p
//! hermes-tools --bench mcp_client`; it needs the Python MCP SDK, see
//! `tests/mcp_client_support`):
//!
//! 1. a call through `Registry::dispatch` to an MCP tool, beside the same
//!    call made directly with rmcp's client, against the same stdio server
//!    (the SDK's test server, one process each), in alternating batches;
//! 2. registering 100 listed tools (naming, schema normalization, the
//!    description scan, the coercion plans, one atomic replace);
//! 3. a call through `Registry::dispatch` to an `auth: oauth` server (the
//!    token read from its file and sent by rmcp's auth client) beside the
//!    same call to the same server configured with the same token as a
//!    plain `Authorization` header (the SDK's OAuth test server, one
//!    process for both), in alternating batches.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/mcp_client_support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use hermes_mcp_client::{auth, McpClients};
use hermes_runtime::ToolContext;
use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::json;

const BATCH: usize = 50;
const BATCHES: usize = 6;
const REGISTER_ROUNDS: usize = 50;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    // 2. Registration of 100 listed tools.
    let f = support::Fixture::new("  bench:\n    command: unused\n    enabled: false\n", "");
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    let tools: Vec<Tool> = (0..100)
        .map(|i| {
            serde_json::from_value(json!({
                "name": format!("tool-{i}"),
                "description": format!("Tool number {i}: does one thing to a path."),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Where"},
                        "count": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
                        "mode": {"$ref": "#/$defs/Mode"},
                        "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
                    },
                    "required": ["path"],
                    "$defs": {"Mode": {"type": "string", "enum": ["a", "b"]}}
                }
            }))
            .unwrap()
        })
        .collect();
    assert_eq!(clients.register_listed("bench", &tools), Some(100));
    let mut rounds = Vec::new();
    for _ in 0..REGISTER_ROUNDS {
        let t = Instant::now();
        clients.register_listed("bench", &tools);
        rounds.push(t.elapsed());
    }
    let max = rounds.iter().max().copied().unwrap_or_default();
    println!(
        "register 100 listed tools: median {:.0} µs, max {:.0} µs ({REGISTER_ROUNDS} rounds)",
        us(median(rounds)),
        us(max)
    );
    drop(clients);

    // 1. Dispatch vs direct rmcp, same server script, same call.
    let f = support::Fixture::new(&support::stdio_entry("b", "    connect_timeout: 60\n"), "");
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    clients.wait_ready(Duration::from_secs(70));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut cmd = tokio::process::Command::new(support::python());
        cmd.arg(support::server_script());
        let direct = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let ctx = ToolContext::new(f.profile.clone(), f.dir.path());
        let args = json!({"text": "hello"});
        let (mut d_times, mut r_times) = (Vec::new(), Vec::new());
        for batch in 0..=BATCHES {
            for _ in 0..BATCH {
                let t = Instant::now();
                let out = f.registry.dispatch("mcp__b__echo", args.clone(), &ctx).await;
                let took = t.elapsed();
                assert!(out.contains("hello"), "{out}");
                if batch > 0 {
                    r_times.push(took);
                }
                let t = Instant::now();
                let res = direct
                    .call_tool(
                        CallToolRequestParams::new("echo")
                            .with_arguments(args.as_object().unwrap().clone()),
                    )
                    .await
                    .unwrap();
                let took = t.elapsed();
                assert_ne!(res.is_error, Some(true));
                if batch > 0 {
                    d_times.push(took);
                }
            }
        }
        let (d, r) = (median(d_times), median(r_times));
        println!(
            "call echo: direct rmcp median {:.0} µs, through dispatch median {:.0} µs, ratio {:.2} ({} calls each, the first batch as warm-up)",
            us(d),
            us(r),
            r.as_secs_f64() / d.as_secs_f64(),
            BATCH * BATCHES
        );
        let _ = direct.cancel().await;
    });
    drop(clients);
    oauth_beside_header(&runtime);
}

/// 3. `auth: oauth` beside the same token as a header.
fn oauth_beside_header(runtime: &tokio::runtime::Runtime) {
    let port = support::free_port();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_client_support/oauth_server.py");
    let mut server = std::process::Command::new(support::python())
        .arg(script)
        .args([port.to_string(), "3600".to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(support::eventually(Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let f = support::Fixture::new(
        &format!(
            "  o:\n    url: {url}\n    auth: oauth\n    connect_timeout: 30\n  \
             h:\n    url: {url}\n    headers:\n      Authorization: \"Bearer ${{TOKEN}}\"\n    connect_timeout: 30\n"
        ),
        "",
    );
    // The login, the browser played here (the server consents at once).
    let login = auth::OAuthServer::new(
        "o",
        &url,
        hermes_runtime::config::SslVerify::SystemRoots,
        hermes_runtime::config::McpOAuth::default(),
        f.dir.path(),
    );
    hermes_mcp_client::install_tls_provider();
    runtime
        .block_on(auth::login(
            &login,
            None,
            auth::Browser::Custom(Box::new(|url| {
                tokio::spawn(async move {
                    let client = reqwest::Client::builder()
                        .redirect(reqwest::redirect::Policy::none())
                        .build()
                        .unwrap();
                    let answer = client.get(&url).send().await.unwrap();
                    let location = answer.headers()["location"].to_str().unwrap().to_string();
                    let _ = client.get(&location).send().await;
                });
            })),
        ))
        .unwrap();
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&login.token_file).unwrap()).unwrap();
    let token = stored["token_response"]["access_token"].as_str().unwrap();
    std::fs::write(f.dir.path().join(".env"), format!("TOKEN={token}\n")).unwrap();
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    clients.wait_ready(Duration::from_secs(40));
    runtime.block_on(async {
        let ctx = ToolContext::new(f.profile.clone(), f.dir.path());
        let args = json!({"text": "hello"});
        let (mut o_times, mut h_times) = (Vec::new(), Vec::new());
        for batch in 0..=BATCHES {
            for (tool, times) in [("mcp__o__echo", &mut o_times), ("mcp__h__echo", &mut h_times)] {
                for _ in 0..BATCH {
                    let t = Instant::now();
                    let out = f.registry.dispatch(tool, args.clone(), &ctx).await;
                    let took = t.elapsed();
                    assert!(out.contains("hello"), "{tool}: {out}");
                    if batch > 0 {
                        times.push(took);
                    }
                }
            }
        }
        let (o, h) = (median(o_times), median(h_times));
        println!(
            "call echo over HTTP: token as a header median {:.0} µs, auth: oauth median {:.0} µs, ratio {:.2} ({} calls each, the first batch as warm-up)",
            us(h),
            us(o),
            o.as_secs_f64() / h.as_secs_f64(),
            BATCH * BATCHES
        );
    });
    drop(clients);
    let _ = server.kill();
    let _ = server.wait();
}
