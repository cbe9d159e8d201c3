//! `hermes-tools call --elicit`: how a run with no user to ask answers an
//! MCP server's `elicitation/create`; and `serve --mcp` as a gateway,
//! which passes the form on to the client that made the call (rmcp's own
//! client); against a real server of the official Python SDK
//! (`mcp-client/tests/support/asking_server.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client_support;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use mcp_client_support::python;
use serde_json::{json, Value};

/// A profile whose one server (`form`) is the asking server.
fn asking_profile() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/support/asking_server.py");
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "mcp_servers:\n  form:\n    command: {:?}\n    args: [{:?}]\n    timeout: 60\n",
            python().display().to_string(),
            script.display().to_string()
        ),
    )
    .unwrap();
    home
}

/// Runs `call mcp__form__ask_user ARGS` (plus `extra`) in a profile whose
/// one server is the asking server; the tool's own JSON answer.
fn ask(args: Value, extra: &[&str]) -> Value {
    let home = asking_profile();
    let out = Command::new(env!("CARGO_BIN_EXE_hermes-tools"))
        .arg("--profile")
        .arg(home.path())
        .args(["call", "mcp__form__ask_user", &args.to_string()])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
    let text = result["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn elicit_defaults_accepts_the_form_s_defaults_or_declines() {
    let r = ask(
        json!({"question": "Who?", "name_default": "Bob"}),
        &["--elicit", "defaults"],
    );
    assert_eq!(r["action"], "accept", "{r}");
    assert_eq!(r["content"], json!({"name": "Bob", "age": 30}), "{r}");
    // The required name has no default: nothing to accept.
    let r = ask(json!({"question": "Who?"}), &["--elicit", "defaults"]);
    assert_eq!(r["action"], "decline", "{r}");
    let r = ask(
        json!({"question": "Who?", "name_default": "Bob"}),
        &["--elicit", "decline"],
    );
    assert_eq!(r["action"], "decline", "{r}");
    // Without the flag the server is told why, and the call ends.
    let r = ask(json!({"question": "Who?"}), &[]);
    let error = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(error.contains("no elicitation callback"), "{r}");
}

/// A client of the gateway that answers forms with `answer`.
#[derive(Clone)]
struct FormClient {
    answer: Value,
    asked: Arc<Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for FormClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("form-test", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(
            rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(self.answer.clone()),
        )
    }
}

/// `serve --mcp` over the asking server's profile, as a child.
fn gateway(home: &Path) -> rmcp::transport::TokioChildProcess {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hermes-tools"));
    cmd.arg("--profile")
        .arg(home)
        .args(["serve", "--mcp", "--toolsets", "mcp-form"])
        .stderr(std::process::Stdio::null());
    rmcp::transport::TokioChildProcess::new(cmd).unwrap()
}

/// The asking server's own answer to `ask_user`, through the gateway.
async fn ask_through<S: rmcp::service::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
    question: &str,
) -> Value {
    let Value::Object(args) = json!({ "question": question }) else {
        unreachable!()
    };
    let result = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("mcp__form__ask_user").with_arguments(args),
        )
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    let outer: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let inner = outer["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{outer}"));
    serde_json::from_str(inner).unwrap_or_else(|e| panic!("{e}: {inner}"))
}

/// A gateway passes an upstream server's form on to the client that made
/// the call: that client is asked, and its answer (defaults filled in)
/// reaches the server; a client that cannot answer forms gets its call's
/// form declined, and is never sent one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_passes_a_form_on_to_the_client_of_the_call() {
    use rmcp::ServiceExt;
    let home = asking_profile();
    tokio::time::timeout(std::time::Duration::from_secs(90), async {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let answering = FormClient {
            answer: json!({"name": "Ada"}),
            asked: Arc::clone(&asked),
        };
        let client = answering.serve(gateway(home.path())).await.unwrap();
        let r = ask_through(&client, "Who is calling?").await;
        assert_eq!(r["action"], "accept", "{r}");
        assert_eq!(r["content"], json!({"name": "Ada", "age": 30}), "{r}");
        assert_eq!(*asked.lock().unwrap(), vec!["Who is calling?".to_string()]);
        let _ = client.cancel().await;

        let silent = ().serve(gateway(home.path())).await.unwrap();
        let r = ask_through(&silent, "Anyone?").await;
        assert_eq!(r["action"], "decline", "{r}");
        let _ = silent.cancel().await;
    })
    .await
    .expect("the gateway answered in time");
}
