//! The rmcp `ServerHandler` over a registry: `tools/list` and `tools/call`
//! through the registry, one `Session` per MCP session, process
//! notifications forwarded to the client whose call started the process.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_procs::notify::ProcessNotification;
use hermes_runtime::dialect::{rewrite, Dialect};
use hermes_runtime::{error_json, is_error_result, MediaKind, Registry, ToolContent, ToolContext};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    CustomRequest, CustomResult, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::approval;
use crate::error::ServeError;
use crate::options::ServeOptions;

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

/// The logger name of process notifications.
pub const PROCESS_LOGGER: &str = "hermes-tools.process";

/// How long a client may keep the tool list (`tools/list`'s `ttlMs`, the
/// caching hint of SEP-2549; rmcp's default, 0, would have every client
/// re-list before each use). The list changes while the server runs when
/// a secret added to the profile makes a toolset available, or a
/// gateway's upstream server changes its tools, and this server announces
/// neither (no `list_changed`): a minute bounds how long a client keeps a
/// stale list. The scope is `private`: a host behind a bearer token, whose
/// listing no shared cache should hand to others.
pub const TOOLS_LIST_TTL: Duration = Duration::from_secs(60);
/// Background processes whose notifications have a client to go to, at most.
const MAX_WATCHED: usize = 4096;

/// Which client a background process's notifications go to, by process id.
pub(crate) type Watchers = Arc<Mutex<HashMap<String, Peer<RoleServer>>>>;

/// Sends each process notification to the client whose call started the
/// process (dropped if none is known, e.g. it was started elsewhere).
///
/// Logging is MCP's one notification a server may send unasked that
/// clients show; rmcp marks it deprecated (SEP-2577) with no successor
/// yet, hence the `allow`.
#[allow(deprecated)]
pub(crate) async fn forward_process_notifications(watchers: Watchers) {
    let queue = hermes_procs::notify::notifications();
    // A quick command can end before its call's result is back and its
    // client known (`watch`): such events wait here, a few seconds at most.
    let mut waiting: std::collections::VecDeque<(std::time::Instant, ProcessNotification)> =
        std::collections::VecDeque::new();
    loop {
        let next = tokio::time::timeout(Duration::from_millis(100), queue.next()).await;
        let now = std::time::Instant::now();
        waiting.retain(|(since, _)| now.duration_since(*since) < NOTIFICATION_WAIT);
        let mut ready = Vec::new();
        {
            let mut map = watchers.lock().unwrap_or_else(|e| e.into_inner());
            let mut still = std::collections::VecDeque::new();
            let arrived = next.ok().map(|event| (now, event));
            for (since, event) in waiting.drain(..).chain(arrived) {
                let peer = if event.kind == "completion" {
                    map.remove(&event.session_id)
                } else {
                    map.get(&event.session_id).cloned()
                };
                match peer {
                    Some(peer) => ready.push((peer, event)),
                    None if still.len() < MAX_WAITING_NOTIFICATIONS => {
                        still.push_back((since, event))
                    }
                    None => {}
                }
            }
            waiting = still;
        }
        for (peer, event) in ready {
            send_process_notification(&peer, &event).await;
        }
    }
}

/// How long an event waits for its client to become known.
const NOTIFICATION_WAIT: Duration = Duration::from_secs(5);
/// Events waiting for their client at most (the oldest are kept).
const MAX_WAITING_NOTIFICATIONS: usize = 256;

#[allow(deprecated)]
async fn send_process_notification(peer: &Peer<RoleServer>, event: &ProcessNotification) {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    let level = if event.kind == "watch_disabled" {
        LoggingLevel::Warning
    } else {
        LoggingLevel::Info
    };
    let data = serde_json::to_value(event).unwrap_or(Value::Null);
    let param = LoggingMessageNotificationParam::new(level, data).with_logger(PROCESS_LOGGER);
    if let Err(e) = peer.notify_logging_message(param).await {
        tracing::debug!(target: "hermes::mcp", "process notification not sent: {e}");
    }
}

/// The MCP handler: a registry, the toolsets it exposes, and the context
/// every call runs with. Cheap to clone (one per HTTP session).
#[derive(Clone)]
pub(crate) struct HermesServer {
    registry: &'static Registry,
    toolsets: Arc<Vec<String>>,
    disable: Arc<Vec<String>>,
    ctx: ToolContext,
    /// The MCP session's own: its calls' state ends when the last clone
    /// of this handler drops.
    session: Arc<hermes_tools::Session>,
    pub(crate) watchers: Watchers,
}

impl HermesServer {
    /// Checks the options: every toolset must be known, every definition
    /// must have an MCP form.
    pub(crate) fn new(
        registry: &'static Registry,
        options: &ServeOptions,
    ) -> Result<Self, ServeError> {
        let session = Arc::new(hermes_tools::Session::new(
            options.profile.clone(),
            options.cwd.clone(),
        ));
        let server = HermesServer {
            registry,
            toolsets: Arc::new(options.toolsets.clone()),
            disable: Arc::new(options.disable.clone()),
            ctx: session.context(),
            session,
            watchers: Arc::default(),
        };
        let defs = server.definitions_raw();
        if !defs.unknown.is_empty() {
            return Err(ServeError::UnknownToolsets(defs.unknown));
        }
        let (tools, problems) = server.tools();
        if !problems.is_empty() {
            return Err(ServeError::NoMcpForm(problems));
        }
        if tools.is_empty() {
            eprintln!("warning: the selected toolsets expose no tool for this profile");
        }
        Ok(server)
    }

    /// The handler of a new MCP session: the same server, its own
    /// [`hermes_tools::Session`], so one MCP session is one terminal session (its
    /// working directory and exported variables), one approval session,
    /// and owns its background processes, which end with it.
    pub(crate) fn for_new_session(&self) -> Self {
        let mut server = self.clone();
        let session = Arc::new(hermes_tools::Session::new(
            self.ctx.profile().clone(),
            self.ctx.cwd().to_path_buf(),
        ));
        server.ctx = session.context();
        server.session = session;
        server
    }

    /// The exposed tools that keep state in their session (`tool
    /// (toolset)`): those whose own toolset is not declared stateless.
    pub(crate) fn stateful_tools(&self) -> Vec<String> {
        let toolsets = self.registry.toolsets();
        self.definitions_raw()
            .names()
            .into_iter()
            .filter_map(|name| {
                let own = self.registry.tool(name).map(|t| t.toolset().to_string());
                match own {
                    Some(own) if toolsets.is_stateless(&own) => None,
                    Some(own) => Some(format!("{name} ({own})")),
                    None => Some(name.to_string()),
                }
            })
            .collect()
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
                Ok(mut tool) => {
                    self.annotate(&mut tool);
                    tools.push(tool);
                }
                Err(e) => problems.push(format!("tool `{name}` has no MCP form: {e}")),
            }
        }
        (tools, problems)
    }

    /// The tool's title and annotations (`readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`), every hint stated, from the
    /// registry's `ToolEffects` of it (a tool that declared nothing:
    /// writing, destructive, open-world), and its `outputSchema` when its
    /// result is a struct.
    fn annotate(&self, tool: &mut Tool) {
        let (effects, title) = match self.registry.tool(&tool.name) {
            // Built-in tools only: an MCP client tool's result is the
            // client's rendering, not the document its schema describes.
            Some(t) => {
                tool.output_schema = Some(&t)
                    .filter(|t| t.is_static())
                    .and_then(|t| t.output_schema())
                    .and_then(Value::as_object)
                    .map(|o| Arc::new(o.clone()));
                (t.effects().clone(), t.title())
            }
            None => (
                hermes_runtime::ToolEffects::UNDECLARED,
                hermes_runtime::effects::title_from_name(&tool.name),
            ),
        };
        tool.title = Some(title.clone());
        tool.annotations = Some(ToolAnnotations::from_raw(
            Some(title),
            Some(effects.read_only),
            Some(effects.destructive),
            Some(effects.idempotent),
            Some(effects.open_world),
        ));
    }

    /// Calls `name` if this server exposes it; every answer is a JSON
    /// string, with the images and audio of a content result beside it.
    async fn call(
        &self,
        name: &str,
        args: Value,
        call_id: String,
        peer: &rmcp::service::Peer<RoleServer>,
    ) -> ToolContent {
        let exposed: BTreeSet<String> = self
            .definitions_raw()
            .names()
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut ctx = self
            .ctx
            .clone()
            .with_tool_call_id(call_id)
            .with_enabled_tools(exposed.iter().cloned().collect());
        if let Some(approver) = approval::approver(peer) {
            ctx = ctx.with_approval_callback(approver);
        }
        // A gateway's upstream server asking a form while it runs this
        // call: passed on to this client (hermes_mcp_client::callbacks::ask_the_caller).
        if let Some(asker) = approval::form_asker(peer) {
            ctx = ctx.with_form_callback(asker);
        }
        if !exposed.contains(name) {
            // Not offered here (another toolset, an agent-loop or bridge
            // tool, or no tool at all): never dispatched.
            return ToolContent::text(self.registry.unknown_tool(name, &ctx));
        }
        self.registry.dispatch_content(name, args, &ctx).await
    }
}

impl HermesServer {
    /// Remembers the client of a background command that asked for
    /// notifications (its result names `session_id` and the flags).
    fn watch(&self, result: &str, peer: &Peer<RoleServer>) {
        let Ok(v) = serde_json::from_str::<Value>(result) else {
            return;
        };
        let wants = v["notify_on_complete"] == Value::Bool(true) || v["watch_patterns"].is_array();
        if let (true, Some(id)) = (wants, v["session_id"].as_str()) {
            let mut map = self.watchers.lock().unwrap_or_else(|e| e.into_inner());
            if map.len() >= MAX_WATCHED {
                // Processes the table forgot (killed, or finished long ago)
                // will not report again.
                let table = hermes_procs::table();
                map.retain(|id, _| table.contains(id));
            }
            if map.len() < MAX_WATCHED {
                map.insert(id.to_string(), peer.clone());
            }
        }
    }
}

/// A failure is sent as `isError` with the message itself as its text (an
/// MCP client wraps that text in its own error form; a JSON document here
/// would reach its model wrapped twice). A success is the JSON unchanged;
/// for a tool with an `outputSchema` (`structured`), the same document as
/// `structuredContent` too, when it is an object. The images and audio of a
/// content result follow the text as image and audio blocks.
fn to_call_result(result: ToolContent, structured: bool) -> CallToolResult {
    let ToolContent {
        text: result,
        media,
    } = result;
    if is_error_result(&result) {
        let message = match serde_json::from_str::<Value>(&result) {
            Ok(Value::Object(mut map)) => match map.remove("error") {
                Some(Value::String(message)) => message,
                _ => result,
            },
            _ => result,
        };
        CallToolResult::error(vec![ContentBlock::text(message)])
    } else {
        let value = structured
            .then(|| serde_json::from_str::<Value>(&result).ok())
            .flatten()
            .filter(Value::is_object);
        let mut blocks = vec![ContentBlock::text(result)];
        blocks.extend(media.into_iter().map(|m| match m.kind {
            MediaKind::Image => ContentBlock::image(m.data, m.mime_type),
            _ => ContentBlock::audio(m.data, m.mime_type),
        }));
        let mut answer = CallToolResult::success(blocks);
        answer.structured_content = value;
        answer
    }
}

impl ServerHandler for HermesServer {
    // `enable_logging`: see `forward_process_notifications`.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
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
        Ok(ListToolsResult::with_all_items(tools)
            .with_ttl_ms(TOOLS_LIST_TTL.as_millis().try_into().unwrap_or(u64::MAX))
            .with_cache_scope(CacheScope::Private))
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
        let call = self.call(&request.name, args, context.id.to_string(), &context.peer);
        let result = tokio::select! {
            result = call => result,
            () = context.ct.cancelled() => ToolContent::text(error_json(format!(
                "Tool '{}' was cancelled by the client", request.name
            ))),
        };
        if request.name == "terminal" {
            self.watch(&result.text, &context.peer);
        }
        let structured = self
            .registry
            .tool(&request.name)
            .is_some_and(|t| t.is_static() && t.output_schema().is_some());
        Ok(to_call_result(result, structured).into())
    }

    /// Process notifications go out as logging notifications whatever the
    /// level asked for (they are few and the reason the client asked for
    /// them); the request is accepted.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    /// rmcp reads a request whose params do not fit its method (e.g.
    /// `tools/call` with string `arguments`) as a custom request; for a method
    /// of MCP that is wrong params (-32602), not an unknown method (-32601).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(custom_request_error(&request))
    }
}

/// The request methods of MCP (client to server); a custom request with one
/// of these names had params rmcp could not read.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "resources/directory/read",
    "skills/get",
    "skills/list",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

fn custom_request_error(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    if !MCP_METHODS.contains(&method) {
        return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_string(), None);
    }
    let detail = match (method, &request.params) {
        (_, None) => "params are missing".to_string(),
        ("tools/call", Some(params)) => match params.get("arguments") {
            Some(args) if !args.is_object() && !args.is_null() => {
                format!("`arguments` must be a JSON object, got {}", json_kind(args))
            }
            _ => serde_json::from_value::<CallToolRequestParams>(params.clone())
                .err()
                .map_or_else(|| "params do not fit".to_string(), |e| e.to_string()),
        },
        (_, Some(params)) if !params.is_object() => {
            format!("params must be a JSON object, got {}", json_kind(params))
        }
        _ => "params do not fit the method".to_string(),
    };
    ErrorData::invalid_params(format!("invalid params for `{method}`: {detail}"), None)
}

/// "a string", "an array", ... for messages about a JSON value's type.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
