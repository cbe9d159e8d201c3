//! `hermes-tools mcp conformance-client URL`: the client the MCP
//! conformance suite (`@modelcontextprotocol/conformance`) starts for its
//! `auth/*` client scenarios. The suite appends its server's URL and sets
//! `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT` (a pre-registered
//! client's `client_id` / `client_secret`) and
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`. The OAuth is the MCP client's
//! ([`hermes_mcp_client::auth`]): the tokens go to a token file in a
//! temporary profile home, and the browser step is played by an HTTP
//! request that follows the authorization URL to the loopback redirect (the
//! suite's authorization server redirects at once).
//!
//! The session: connect (without a token first, so that the server's 401
//! names the scope and the metadata), list the tools, call each with `{}`;
//! a 401 or 403 on any step logs in with its challenge and starts over, at
//! most [`MAX_AUTHORIZATIONS`] times (the scope step-up, and the retry
//! limit a server that never grants enough gets).

use std::process::ExitCode;
use std::time::Duration;

use hermes_mcp_client::{auth, McpError};
use hermes_runtime::config::{McpOAuth, SslVerify};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceError};

/// Logins one run makes at most.
pub const MAX_AUTHORIZATIONS: usize = 3;
/// The client ID metadata document URL the suite's authorization server
/// expects (`auth/basic-cimd`); used where the server supports documents.
const SUITE_CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Seconds the whole run may take (the suite's own limit is 30 s).
const RUN_LIMIT: Duration = Duration::from_secs(28);

/// Why one session ended early.
enum Stop {
    /// A 401 or 403: log in (with its `WWW-Authenticate`, when there is one).
    Auth(Option<String>),
    Failed(String),
}

pub fn run(url: &str) -> (String, ExitCode) {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    let home = match tempfile::tempdir() {
        Ok(h) => h,
        Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
    };
    let text = |key: &str| {
        context
            .get(key)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let mut settings = McpOAuth::default();
    settings.client_id = text("client_id");
    settings.client_secret = text("client_secret");
    settings.client_metadata_url = Some(SUITE_CLIENT_METADATA_URL.to_string());
    settings.timeout = Some(20.0);
    let server = auth::OAuthServer::new(
        "conformance",
        url,
        SslVerify::SystemRoots,
        settings,
        home.path(),
    );
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
    };
    let outcome = runtime.block_on(async {
        tokio::time::timeout(RUN_LIMIT, drive(&server, version.as_deref()))
            .await
            .unwrap_or_else(|_| Err("the run took too long".to_string()))
    });
    match outcome {
        Ok(report) => (format!("{scenario}: {report}\n"), ExitCode::SUCCESS),
        Err(e) => (format!("error: {scenario}: {e}\n"), ExitCode::FAILURE),
    }
}

/// Sessions and logins until a session completes or the logins run out.
async fn drive(server: &auth::OAuthServer, version: Option<&str>) -> Result<String, String> {
    let mut logins = 0;
    loop {
        match session(server, version).await {
            Ok(report) => return Ok(format!("{report} after {logins} login(s)")),
            Err(Stop::Failed(e)) => return Err(e),
            Err(Stop::Auth(challenge)) => {
                if logins == MAX_AUTHORIZATIONS {
                    return Err(format!(
                        "still refused after {MAX_AUTHORIZATIONS} logins; giving up"
                    ));
                }
                logins += 1;
                auth::login(
                    server,
                    challenge,
                    auth::Browser::Custom(Box::new(play_browser)),
                )
                .await
                .map_err(|e| e.to_string())?;
            }
        }
    }
}

/// One session: connect, list the tools, call each.
async fn session(server: &auth::OAuthServer, version: Option<&str>) -> Result<String, Stop> {
    hermes_mcp_client::install_tls_provider();
    let http = reqwest::Client::new();
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
    let lifecycle = match version {
        Some(v) if v == ProtocolVersion::V_2026_07_28.as_str() => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        _ => ClientLifecycleMode::Initialize,
    };
    let served = if server.token_file.exists() {
        let authorized = match auth::authorized_client(server, http).await {
            Ok(a) => a,
            Err(McpError::NeedsLogin { .. }) => return Err(Stop::Auth(None)),
            Err(e) => return Err(Stop::Failed(e.to_string())),
        };
        let transport = StreamableHttpClientTransport::with_client(authorized, config);
        ().serve_with_lifecycle(transport, lifecycle).await
    } else {
        // No token yet: the server's 401 says what to log in with.
        let transport = StreamableHttpClientTransport::with_client(http, config);
        ().serve_with_lifecycle(transport, lifecycle).await
    };
    let session = served.map_err(init_stop)?;
    let tools = session.peer().list_all_tools().await.map_err(call_stop)?;
    for tool in &tools {
        session
            .peer()
            .call_tool(
                CallToolRequestParams::new(tool.name.clone()).with_arguments(Default::default()),
            )
            .await
            .map_err(call_stop)?;
    }
    let _ = session.cancel().await;
    Ok(format!("listed {} tool(s) and called each", tools.len()))
}

fn init_stop(e: ClientInitializeError) -> Stop {
    if e.is_authorization_required() || e.auth_challenge().is_some() {
        return Stop::Auth(e.auth_challenge().map(str::to_string));
    }
    Stop::Failed(format!("initialize: {e}"))
}

fn call_stop(e: ServiceError) -> Stop {
    if e.is_authorization_required() || e.auth_challenge().is_some() {
        return Stop::Auth(e.auth_challenge().map(str::to_string));
    }
    Stop::Failed(e.to_string())
}

/// The browser: follows the authorization URL's redirect to the loopback
/// listener (the suite's authorization server approves at once).
fn play_browser(url: String) {
    tokio::spawn(async move {
        let client = match reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
        {
            Ok(c) => c,
            Err(_) => return,
        };
        let Ok(answer) = client.get(&url).send().await else {
            return;
        };
        let Some(location) = answer
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(str::to_string)
        else {
            eprintln!(
                "the authorization endpoint answered {} without a redirect",
                answer.status()
            );
            return;
        };
        let _ = client.get(&location).send().await;
    });
}
