//! The MCP client's costs (a benchmark, not a test: `cargo bench -p
//! hermes-tools --bench mcp_client`; it needs the Python MCP SDK, see
//! `tests/mcp_client_support`):
//!
//! 1. a call through `Registry::dispatch` to an MCP tool, beside the same
//!    call made directly with rmcp's client, against the same stdio server
//!    (the SDK's test server, one process each), in alternating batches;
//! 2. registering 100 listed tools (naming, schema normalization, the
//!    description scan, the coercion plans, one atomic replace).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/mcp_client_support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use hermes_mcp_client::McpClients;
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
}
