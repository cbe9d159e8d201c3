//! `serve --mcp` and approvals, end to end with rmcp's own client (the
//! official Rust SDK): a client that declares elicitation is asked (its
//! answer decides: once runs the command, a decline refuses it); a client
//! that does not is refused without being asked; one MCP session is one
//! terminal session (two clients of one HTTP server do not share a working
//! directory or variables; one client's calls do).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::{
    streamable_http_client::StreamableHttpClientTransportConfig, StreamableHttpClientTransport,
};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
/// Every test finishes well within this, or fails.
const LIMIT: Duration = Duration::from_secs(60);

/// A client that can answer elicitations: with `answer` (`None`: declines).
#[derive(Clone)]
struct Approver {
    answer: Option<&'static str>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Approver {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("approval-test", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap();
        assert_eq!(
            schema["properties"]["answer"]["enum"],
            json!(["once", "session", "always", "deny"]),
            "{schema}"
        );
        self.asked.lock().unwrap().push(message);
        Ok(match self.answer {
            Some(a) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "answer": a }))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

async fn call<S: rmcp::service::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    command: &str,
) -> (bool, Value) {
    let Value::Object(args) = json!({ "command": command }) else {
        unreachable!()
    };
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new("terminal").with_arguments(args))
        .await
        .unwrap();
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    // A failure's text is its message (an MCP client wraps it itself).
    let is_error = result.is_error.unwrap_or(false);
    let value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(_) if is_error => serde_json::json!({ "error": text }),
        Err(e) => panic!("not JSON ({e}): {text}"),
    };
    (is_error, value)
}

fn stdio(dir: &Path) -> TokioChildProcess {
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["serve", "--mcp", "--toolsets", "terminal", "--profile"])
        .arg(dir.join("profile"))
        .current_dir(dir);
    TokioChildProcess::new(command).unwrap()
}

#[tokio::test]
async fn a_client_that_can_answer_is_asked_and_its_answer_decides() {
    let dir = tempfile::tempdir().unwrap();
    tokio::time::timeout(LIMIT, async {
        for (answer, runs) in [(Some("once"), true), (Some("deny"), false), (None, false)] {
            let victim = dir.path().join("victim");
            std::fs::create_dir_all(&victim).unwrap();
            let approver = Approver {
                answer,
                asked: Arc::default(),
            };
            let client = approver.clone().serve(stdio(dir.path())).await.unwrap();
            let (is_error, v) = call(&client, &format!("rm -r {}", victim.display())).await;
            assert_eq!(victim.exists(), !runs, "{answer:?}: {v}");
            assert_eq!(is_error, !runs, "{answer:?}: {v}");
            if !runs {
                assert!(v["error"].as_str().unwrap().contains("denied"), "{v}");
            }
            let asked = approver.asked.lock().unwrap().clone();
            assert_eq!(asked.len(), 1, "{asked:?}");
            assert!(
                asked[0].contains("rm -r") && asked[0].contains("terminal"),
                "{asked:?}"
            );
            // A hard line is refused without asking.
            let (is_error, v) = call(&client, "rm -rf /").await;
            assert!(
                is_error && v["error"].as_str().unwrap().contains("hard line"),
                "{v}"
            );
            assert_eq!(approver.asked.lock().unwrap().len(), 1);
            client.cancel().await.unwrap();
        }
    })
    .await
    .expect("finished in time");
}

#[tokio::test]
async fn a_client_without_elicitation_is_refused_unasked() {
    let dir = tempfile::tempdir().unwrap();
    tokio::time::timeout(LIMIT, async {
        let victim = dir.path().join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        let client = ().serve(stdio(dir.path())).await.unwrap();
        let (is_error, v) = call(&client, &format!("rm -r {}", victim.display())).await;
        assert!(is_error, "{v}");
        assert!(
            v["error"].as_str().unwrap().contains("no one can approve"),
            "{v}"
        );
        assert!(victim.exists());
        client.cancel().await.unwrap();
    })
    .await
    .expect("finished in time");
}

#[tokio::test]
async fn one_mcp_session_is_one_terminal_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    let server = mcp_support::Server::start(dir.path(), &["--toolsets", "terminal"], None);
    let url = format!("http://{}/mcp", server.addr);
    tokio::time::timeout(LIMIT, async {
        let connect = || {
            StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(url.clone()),
            )
        };
        let a = ().serve(connect()).await.unwrap();
        let b = ().serve(connect()).await.unwrap();
        let (_, v) = call(&a, "cd sub && export WHO=a").await;
        assert_eq!(v["exit_code"], 0, "{v}");
        let (_, v) = call(&a, "echo \"$WHO $(basename $(pwd))\"").await;
        assert_eq!(v["output"].as_str().unwrap().trim(), "a sub", "{v}");
        let here = std::fs::canonicalize(dir.path()).unwrap();
        let (_, v) = call(&b, "echo \"[$WHO] $(pwd -P)\"").await;
        assert_eq!(
            v["output"].as_str().unwrap().trim(),
            format!("[] {}", here.display()),
            "{v}"
        );
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
    })
    .await
    .expect("finished in time");
}
