//! `hermes-tools serve --mcp`: the built-in tools as a Model Context Protocol
//! server (rmcp), over stdio or streamable HTTP.
//!
//! `tools/list` is `Registry::get_tool_definitions` for the selected toolsets,
//! rewritten to MCP's `{name, description, inputSchema}` by
//! `Dialect::Mcp`. `tools/call` goes through `Registry::dispatch`, the same
//! pipeline as every other caller; a result that is a JSON object with an
//! `error` key is sent as `isError: true`, with the JSON text unchanged.
//! Nothing a client sends can end the server: every failure is a result.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hermes_runtime::dialect::{rewrite, Dialect};
use hermes_runtime::{error_json, Profile, Registry, ToolContext};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

/// The environment variable holding the bearer token of `--http`.
pub const TOKEN_ENV: &str = "HERMES_MCP_TOKEN";

/// The path the streamable HTTP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// What `serve --mcp` was asked to serve. (No `Debug`: it holds the token.)
#[derive(Clone)]
pub struct ServeOptions {
    /// Toolsets (or legacy names) to expose.
    pub toolsets: Vec<String>,
    /// Toolsets to subtract.
    pub disable: Vec<String>,
    pub profile: Profile,
    /// The directory relative paths resolve against.
    pub cwd: PathBuf,
    /// `Some(ADDR)`: streamable HTTP on ADDR instead of stdio.
    pub http: Option<String>,
    /// The bearer token HTTP requests must carry.
    pub token: Option<String>,
}

/// Runs the server until stdin closes (stdio) or the process is stopped
/// (HTTP). `Err` is a message for stderr: bad options or a failed start.
pub fn run(registry: &'static Registry, options: ServeOptions) -> Result<(), String> {
    define_core_toolset(registry);
    let server = HermesServer::new(registry, &options)?;
    let token = options.token.filter(|t| !t.is_empty());
    // Resolve and vet the address before starting anything.
    let http = match &options.http {
        Some(addr) => Some(http_address(addr, token.is_some())?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    match http {
        None => runtime.block_on(serve_stdio(server)),
        Some(addr) => runtime.block_on(serve_http(server, addr, token)),
    }
}

/// The name of the default toolset: the core list of `toolsets.toml`.
pub const CORE: &str = "core";

/// Makes `core` (the core list, which every `hermes-*` bundle starts from) a
/// toolset of this process, so `--toolsets core,...` and `--disable core`
/// work, unless `toolsets.toml` declares a `core` toolset of its own.
pub fn define_core_toolset(registry: &Registry) {
    let toolsets = registry.toolsets();
    if !toolsets.validate_toolset(CORE) {
        toolsets.create_custom_toolset(
            CORE,
            "The core tools every platform bundle starts from",
            toolsets.core_tools(),
            &[],
        );
    }
}

/// The MCP handler: a registry, the toolsets it exposes, and the context
/// every call runs with. Cheap to clone (one per HTTP session).
#[derive(Clone)]
struct HermesServer {
    registry: &'static Registry,
    toolsets: Arc<Vec<String>>,
    disable: Arc<Vec<String>>,
    ctx: ToolContext,
}

impl HermesServer {
    /// Checks the options: every toolset must be known, every definition
    /// must have an MCP form.
    fn new(registry: &'static Registry, options: &ServeOptions) -> Result<Self, String> {
        let server = HermesServer {
            registry,
            toolsets: Arc::new(options.toolsets.clone()),
            disable: Arc::new(options.disable.clone()),
            ctx: ToolContext::new(options.profile.clone(), options.cwd.clone()),
        };
        let defs = server.definitions_raw();
        if !defs.unknown.is_empty() {
            return Err(format!("unknown toolset: {}", defs.unknown.join(", ")));
        }
        let (tools, problems) = server.tools();
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        if tools.is_empty() {
            eprintln!("warning: the selected toolsets expose no tool for this profile");
        }
        Ok(server)
    }

    fn definitions_raw(&self) -> hermes_runtime::definitions::Definitions {
        let enabled: Vec<&str> = self.toolsets.iter().map(String::as_str).collect();
        let disabled: Vec<&str> = self.disable.iter().map(String::as_str).collect();
        self.registry
            .get_tool_definitions(Some(&enabled), &disabled, self.ctx.profile())
    }

    /// The exposed tools in MCP form, and what kept any out. Computed per
    /// request: definitions are memoised by the registry, and availability
    /// (a secret added to the profile) may change while the server runs.
    fn tools(&self) -> (Vec<Tool>, Vec<String>) {
        let defs = self.definitions_raw();
        let mut tools = Vec::with_capacity(defs.tools.len());
        let mut problems = Vec::new();
        for def in defs.tools.iter() {
            let name = def["function"]["name"].as_str().unwrap_or("?");
            let converted = rewrite(&def["function"], Dialect::Mcp)
                .map_err(|issues| {
                    issues
                        .into_iter()
                        .map(|i| i.message)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .and_then(|v| serde_json::from_value::<Tool>(v).map_err(|e| e.to_string()));
            match converted {
                Ok(tool) => tools.push(tool),
                Err(e) => problems.push(format!("tool `{name}` has no MCP form: {e}")),
            }
        }
        (tools, problems)
    }

    /// Calls `name` if this server exposes it; every answer is a JSON string.
    async fn call(&self, name: &str, args: Value, call_id: String) -> String {
        let exposed: BTreeSet<String> = self
            .definitions_raw()
            .names()
            .into_iter()
            .map(str::to_string)
            .collect();
        let ctx = self
            .ctx
            .clone()
            .with_tool_call_id(call_id)
            .with_enabled_tools(exposed.iter().cloned().collect());
        if !exposed.contains(name) {
            // Not offered here (another toolset, an agent-loop or bridge
            // tool, or no tool at all): never dispatched.
            return self.registry.unknown_tool(name, &ctx);
        }
        self.registry.dispatch(name, args, &ctx).await
    }
}

/// A result that is a JSON object with an `error` key is a failure.
fn is_error(result: &str) -> bool {
    result.trim_start().starts_with('{')
        && matches!(
            serde_json::from_str::<Value>(result),
            Ok(Value::Object(map)) if map.contains_key("error")
        )
}

fn to_call_result(result: String) -> CallToolResult {
    if is_error(&result) {
        CallToolResult::error(vec![ContentBlock::text(result)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(result)])
    }
}

impl ServerHandler for HermesServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "hermes-tools",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(format!(
                "The hermes built-in tools of the toolsets: {}. Every result is a JSON document; \
                 a failure is {{\"error\": \"...\"}} with isError set.",
                self.toolsets.join(", ")
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (tools, problems) = self.tools();
        for p in problems {
            eprintln!("warning: {p}");
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().0.into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let call = self.call(&request.name, args, context.id.to_string());
        let result = tokio::select! {
            result = call => result,
            () = context.ct.cancelled() => error_json(format!(
                "Tool '{}' was cancelled by the client", request.name
            )),
        };
        Ok(to_call_result(result).into())
    }
}

async fn serve_stdio(server: HermesServer) -> Result<(), String> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP session over stdio failed to start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("MCP session over stdio ended abnormally: {e}"))
}

/// `PORT` → `127.0.0.1:PORT`; `HOST:PORT` as given (names resolved). A
/// non-loopback address needs a token.
fn http_address(addr: &str, has_token: bool) -> Result<SocketAddr, String> {
    let resolved: Vec<SocketAddr> = if let Ok(port) = addr.parse::<u16>() {
        vec![SocketAddr::from(([127, 0, 0, 1], port))]
    } else {
        addr.to_socket_addrs()
            .map_err(|e| {
                format!("invalid --http address `{addr}` (expected PORT or HOST:PORT): {e}")
            })?
            .collect()
    };
    let Some(first) = resolved.first().copied() else {
        return Err(format!("--http address `{addr}` resolves to nothing"));
    };
    if !has_token && resolved.iter().any(|a| !a.ip().is_loopback()) {
        return Err(format!(
            "refusing to serve on the non-loopback address `{addr}` without a token: \
             set {TOKEN_ENV} (or --token)"
        ));
    }
    Ok(first)
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: http::StatusCode, text: &'static str) -> http::Response<Body> {
    let mut response = http::Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Whether the request carries `Authorization: Bearer <token>`. Compared in
/// constant time, so timing does not reveal how much of a guess was right.
fn authorized(headers: &http::HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, given)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

/// Equality whose time depends on the lengths only, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn serve_http(
    server: HermesServer,
    addr: SocketAddr,
    token: Option<String>,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    let mut config = StreamableHttpServerConfig::default();
    if !local.ip().is_loopback() {
        // rmcp's default Host check (DNS rebinding) only admits loopback
        // names; off loopback every request must carry the token instead.
        config = config.disable_allowed_hosts();
    }
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token: Option<Arc<str>> = token.map(Arc::from);
    eprintln!(
        "hermes-tools: MCP over streamable HTTP at http://{local}{HTTP_PATH}{}",
        if token.is_some() {
            " (bearer token required)"
        } else {
            ""
        }
    );
    loop {
        let (stream, _peer) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                // Out of descriptors and the like: wait, keep serving.
                eprintln!("warning: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let mcp = mcp.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let mcp = mcp.clone();
                    let token = token.clone();
                    async move {
                        if let Some(token) = &token {
                            if !authorized(request.headers(), token) {
                                let mut response = plain(
                                    http::StatusCode::UNAUTHORIZED,
                                    "missing or wrong bearer token\n",
                                );
                                response.headers_mut().insert(
                                    http::header::WWW_AUTHENTICATE,
                                    http::HeaderValue::from_static("Bearer"),
                                );
                                return Ok::<_, Infallible>(response);
                            }
                        }
                        if request.uri().path() != HTTP_PATH {
                            return Ok(plain(
                                http::StatusCode::NOT_FOUND,
                                "not found; MCP is at /mcp\n",
                            ));
                        }
                        Ok(mcp.handle(request).await)
                    }
                });
            // A connection's own failure (reset, bad request) ends only that connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
