//! What an MCP server may ask the client back: `sampling/createMessage`
//! (the agent's model), `elicitation/create` (the user) and `roots/list`
//! (the session's working directory). The first two go to callbacks the
//! embedding agent installs, process-wide as `clarify`'s is
//! ([`set_sampling_callback`], [`set_elicitation_callback`]), within the
//! limits of the server's `sampling:` / `elicitation:` entry keys. Without
//! a callback, or with the entry's `enabled: false`, the server gets a
//! JSON-RPC error that says why, at once.
#![allow(deprecated)] // rmcp marks sampling and roots deprecated by SEP-2577; MCP 2025-11-25 has them.

use std::collections::VecDeque;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use hermes_procs::lock;
use hermes_runtime::config::{McpElicitation, McpSampling};
use hermes_runtime::ToolContext;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode, ErrorData,
    FormElicitationCapability, ListRootsResult, Root, RootsCapabilities, SamplingCapability,
};
use serde_json::{Map, Value};

/// A callback's answer.
pub type CallbackFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What the sampling callback is asked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The server's name in `mcp_servers`.
    pub server: String,
    /// The request's `params` as MCP sends them (`messages`,
    /// `systemPrompt`, `maxTokens`, `temperature`, `stopSequences`,
    /// `tools`, `toolChoice`, `modelPreferences`), `maxTokens` already
    /// lowered to the entry's `max_tokens_cap`.
    pub params: Value,
    /// The model to ask: the entry's `sampling.model`, else the server's
    /// first model hint; `None`: the agent's own.
    pub model: Option<String>,
    /// The most tokens to ask for.
    pub max_tokens: u32,
    /// The context of the tool call this server is running for, when one
    /// is in flight: its session, to reach the right model and user.
    pub ctx: Option<ToolContext>,
}

/// How the agent answers a server's `sampling/createMessage`: an MCP
/// `CreateMessageResult` (`role`, `content`, `model`, `stopReason`), or
/// why not. `hermes_model::sampling::create_message` is one over the
/// agent's model client.
pub type SamplingCallback =
    Arc<dyn Fn(SamplingRequest) -> CallbackFuture<Result<Value, String>> + Send + Sync>;

/// What the elicitation callback is asked (form mode).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// The server's name in `mcp_servers`.
    pub server: String,
    /// What the server wants to know.
    pub message: String,
    /// The requested schema: an object of flat properties (strings,
    /// numbers, booleans, enums), each perhaps with a `default`.
    pub schema: Value,
    /// The context of the tool call in flight, as for sampling.
    pub ctx: Option<ToolContext>,
    /// Sessions with a call of this server in flight: over 1, `ctx` (the
    /// latest call's) may not be the call the server asks for, since a
    /// request back names no call ([`ask_the_caller`] then declines).
    pub sessions: usize,
}

/// The user's answer to an elicitation: the runtime's answer to a form.
/// In `Accept`, a property of the schema left out that has a `default`
/// gets it (SEP-1034) before the server sees it.
pub use hermes_runtime::context::FormAnswer as ElicitationAnswer;

/// How the agent asks its user for an elicitation.
pub type ElicitationCallback =
    Arc<dyn Fn(ElicitationRequest) -> CallbackFuture<ElicitationAnswer> + Send + Sync>;

static SAMPLING: RwLock<Option<SamplingCallback>> = RwLock::new(None);
static ELICITATION: RwLock<Option<ElicitationCallback>> = RwLock::new(None);

fn read<T: Clone>(slot: &RwLock<Option<T>>) -> Option<T> {
    slot.read().unwrap_or_else(|e| e.into_inner()).clone()
}

fn write<T>(slot: &RwLock<Option<T>>, value: Option<T>) {
    *slot.write().unwrap_or_else(|e| e.into_inner()) = value;
}

/// Installs how servers' `sampling/createMessage` reach the agent's model
/// (process-wide). Servers connected from now on are told the client
/// samples (the `sampling` capability) unless their entry says
/// `sampling: {enabled: false}`; install it before `McpClients::start`.
pub fn set_sampling_callback(callback: SamplingCallback) {
    write(&SAMPLING, Some(callback));
}

/// Removes the sampling callback: requests are refused from now on.
pub fn clear_sampling_callback() {
    write(&SAMPLING, None);
}

/// Installs how servers' `elicitation/create` reach the user
/// (process-wide), as [`set_sampling_callback`] for the `elicitation`
/// capability.
pub fn set_elicitation_callback(callback: ElicitationCallback) {
    write(&ELICITATION, Some(callback));
}

/// Removes the elicitation callback: requests are refused from now on.
pub fn clear_elicitation_callback() {
    write(&ELICITATION, None);
}

/// The tool calls in flight on one server, each with its context: where a
/// server's request back (which names no call) finds its session.
#[derive(Default)]
pub(crate) struct InFlight {
    calls: Mutex<Vec<(u64, ToolContext)>>,
    next: std::sync::atomic::AtomicU64,
    /// The context of the last call started, for requests between calls.
    last: Mutex<Option<ToolContext>>,
}

/// Removes its call from [`InFlight`] when dropped.
pub(crate) struct CallGuard<'a> {
    flight: &'a InFlight,
    id: u64,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        lock(&self.flight.calls).retain(|(id, _)| *id != self.id);
    }
}

impl InFlight {
    /// Records a call until the guard is dropped.
    pub(crate) fn enter(&self, ctx: ToolContext) -> CallGuard<'_> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *lock(&self.last) = Some(ctx.clone());
        lock(&self.calls).push((id, ctx));
        CallGuard { flight: self, id }
    }

    /// The sessions (by id; a context without one counts alone) with a
    /// call in flight.
    fn sessions(&self) -> usize {
        let calls = lock(&self.calls);
        let mut ids: Vec<Option<&str>> = calls.iter().map(|(_, c)| c.session_id()).collect();
        let anonymous = ids.iter().filter(|i| i.is_none()).count();
        ids.retain(Option::is_some);
        ids.sort_unstable();
        ids.dedup();
        ids.len() + anonymous
    }

    /// The latest call still in flight, else the last one made.
    fn current(&self) -> Option<ToolContext> {
        lock(&self.calls)
            .last()
            .map(|(_, c)| c.clone())
            .or_else(|| lock(&self.last).clone())
    }
}

/// One server's side of the requests back: its limits and their state.
pub(crate) struct Asks {
    server: String,
    sampling: McpSampling,
    elicitation: McpElicitation,
    /// When the sampling requests of the last minute were accepted.
    window: Mutex<VecDeque<Instant>>,
    /// Tool-use answers in a row.
    tool_rounds: Mutex<u32>,
    pub(crate) flight: Arc<InFlight>,
}

/// An error for the server (credentials stripped: it may quote the
/// model's endpoint), logged.
fn refuse(code: ErrorCode, message: String) -> ErrorData {
    let message = crate::render::strip_credentials(&message);
    tracing::warn!(target: "hermes::mcp", "{message}");
    ErrorData::new(code, message, None)
}

/// The text blocks of a sampling answer with credential-looking parts
/// written `[REDACTED]`, as the reference does: the model must not hand a
/// server a secret it saw.
fn strip_answer(answer: &mut Value) {
    let blocks: Vec<&mut Value> = match answer.get_mut("content") {
        Some(Value::Array(items)) => items.iter_mut().collect(),
        Some(block @ Value::Object(_)) => vec![block],
        _ => Vec::new(),
    };
    for block in blocks {
        if let Some(Value::String(text)) = block.get_mut("text") {
            *text = crate::render::strip_credentials(text);
        }
    }
}

impl Asks {
    pub(crate) fn new(server: &str, sampling: McpSampling, elicitation: McpElicitation) -> Self {
        Asks {
            server: server.to_string(),
            sampling,
            elicitation,
            window: Mutex::new(VecDeque::new()),
            tool_rounds: Mutex::new(0),
            flight: Arc::new(InFlight::default()),
        }
    }

    /// What the client tells the server at `initialize`: roots always;
    /// sampling and elicitation when the entry has them on and a callback
    /// is installed.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        caps.roots = Some(RootsCapabilities::default());
        if self.sampling.enabled && read(&SAMPLING).is_some() {
            // Tools in a request are offered to the model (`tools`).
            let mut sampling = SamplingCapability::default();
            sampling.tools = Some(Map::new());
            caps.sampling = Some(sampling);
        }
        if self.elicitation.enabled && read(&ELICITATION).is_some() {
            let mut e = ElicitationCapability::default();
            e.form = Some(FormElicitationCapability::default());
            caps.elicitation = Some(e);
        }
        caps
    }

    /// Counts one sampling request in the last minute's window; `false`
    /// when `max_rpm` were accepted already.
    fn admit(&self) -> bool {
        let now = Instant::now();
        let mut w = lock(&self.window);
        while w
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            w.pop_front();
        }
        if w.len() >= self.sampling.max_rpm as usize {
            return false;
        }
        w.push_back(now);
        true
    }

    pub(crate) async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let s = &self.sampling;
        let name = &self.server;
        if !s.enabled {
            return Err(refuse(
                ErrorCode::METHOD_NOT_FOUND,
                format!("sampling is disabled for MCP server '{name}' (`sampling.enabled: false`)"),
            ));
        }
        let Some(callback) = read(&SAMPLING) else {
            return Err(refuse(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "sampling is not available: the agent installed no sampling callback \
                     (MCP server '{name}')"
                ),
            ));
        };
        if !self.admit() {
            return Err(refuse(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "sampling rate limit exceeded for MCP server '{name}' ({} requests/minute, \
                     `sampling.max_rpm`)",
                    s.max_rpm
                ),
            ));
        }
        let mut value = serde_json::to_value(&params).map_err(|e| {
            ErrorData::internal_error(format!("sampling request not readable: {e}"), None)
        })?;
        let hint = value
            .pointer("/modelPreferences/hints")
            .and_then(Value::as_array)
            .and_then(|h| {
                h.iter()
                    .filter_map(|x| x.get("name").and_then(Value::as_str))
                    .find(|n| !n.is_empty())
            })
            .map(str::to_string);
        let model = s.model.clone().or(hint);
        if let Some(m) = model.as_deref() {
            if !s.allowed_models.is_empty() && !s.allowed_models.iter().any(|a| a == m) {
                return Err(refuse(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "model '{m}' is not allowed for MCP server '{name}' \
                         (`sampling.allowed_models`: {})",
                        s.allowed_models.join(", ")
                    ),
                ));
            }
        }
        let max_tokens = params.max_tokens.min(s.max_tokens_cap);
        value["maxTokens"] = Value::from(max_tokens);
        tracing::info!(
            target: "hermes::mcp",
            "MCP server '{name}' sampling request: model {}, max_tokens {max_tokens}, {} message(s)",
            model.as_deref().unwrap_or("(the agent's)"),
            value["messages"].as_array().map_or(0, Vec::len)
        );
        let request = SamplingRequest {
            server: name.clone(),
            params: value,
            model,
            max_tokens,
            ctx: self.flight.current(),
        };
        let timeout = Duration::from_secs_f64(s.timeout);
        let mut answer = match tokio::time::timeout(timeout, callback(request)).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(why)) => {
                return Err(refuse(
                    ErrorCode::INTERNAL_ERROR,
                    format!("sampling for MCP server '{name}' failed: {why}"),
                ))
            }
            Err(_) => {
                return Err(refuse(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "sampling for MCP server '{name}' timed out after {} (`sampling.timeout`)",
                        crate::error::secs(timeout)
                    ),
                ))
            }
        };
        strip_answer(&mut answer);
        let result: CreateMessageResult = serde_json::from_value(answer).map_err(|e| {
            refuse(
                ErrorCode::INTERNAL_ERROR,
                format!("the sampling callback's answer is not a CreateMessageResult: {e}"),
            )
        })?;
        let tool_use = result.stop_reason.as_deref() == Some("toolUse");
        let mut rounds = lock(&self.tool_rounds);
        if !tool_use {
            *rounds = 0;
            return Ok(result);
        }
        if s.max_tool_rounds == 0 {
            return Err(refuse(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "tool use in sampling is off for MCP server '{name}' (`sampling.max_tool_rounds: 0`)"
                ),
            ));
        }
        *rounds += 1;
        if *rounds > s.max_tool_rounds {
            *rounds = 0;
            return Err(refuse(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "sampling tool rounds exceeded for MCP server '{name}' (at most {}, \
                     `sampling.max_tool_rounds`)",
                    s.max_tool_rounds
                ),
            ));
        }
        Ok(result)
    }

    pub(crate) async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let name = &self.server;
        if !self.elicitation.enabled {
            return Err(refuse(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "elicitation is disabled for MCP server '{name}' (`elicitation.enabled: false`)"
                ),
            ));
        }
        let Some(callback) = read(&ELICITATION) else {
            return Err(refuse(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "elicitation is not available: the agent installed no elicitation callback \
                     (MCP server '{name}')"
                ),
            ));
        };
        let (message, schema) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message,
                serde_json::to_value(&requested_schema).unwrap_or(Value::Null),
            ),
            // Opening a URL for the user is not offered: declined, as the
            // reference does.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        tracing::info!(target: "hermes::mcp", "MCP server '{name}' elicitation request");
        let asked = ElicitationRequest {
            server: name.clone(),
            message,
            schema: schema.clone(),
            ctx: self.flight.current(),
            sessions: self.flight.sessions(),
        };
        let timeout = Duration::from_secs_f64(self.elicitation.timeout);
        let answer = tokio::time::timeout(timeout, callback(asked))
            .await
            .unwrap_or(ElicitationAnswer::Cancel);
        Ok(match answer {
            ElicitationAnswer::Accept(mut content) => {
                with_defaults(&mut content, &schema);
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    /// The roots: the working directory of the call in flight (else of
    /// the last call; else the process's).
    pub(crate) fn roots(&self) -> ListRootsResult {
        let dir = self
            .flight
            .current()
            .map(|c| c.cwd().to_path_buf())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        let mut root = Root::new(file_uri(&dir));
        root.name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .or_else(|| Some("/".to_string()));
        ListRootsResult::new(vec![root])
    }
}

/// An elicitation callback that passes the form on to whoever made the
/// tool call the server runs: the call context's form callback
/// ([`ToolContext::with_form_callback`]; `serve --mcp` gives each call one
/// that asks its MCP client, when the client can answer forms). Declines
/// when the call has none, and when calls of several sessions are in
/// flight on the server (the request names no call: the form could reach
/// another session's user).
pub fn ask_the_caller() -> ElicitationCallback {
    Arc::new(|req: ElicitationRequest| {
        let server = req.server;
        let ask = match (&req.ctx, req.sessions) {
            (_, n) if n > 1 => Err(format!(
                "calls of {n} sessions are in flight on it, and the request names none"
            )),
            (Some(ctx), _) => ctx
                .form_callback()
                .cloned()
                .ok_or_else(|| "the caller cannot answer forms".to_string()),
            (None, _) => Err("no call is in flight on it".to_string()),
        };
        match ask {
            Ok(ask) => ask(hermes_runtime::context::FormRequest::new(
                req.message,
                req.schema,
            )),
            Err(why) => {
                tracing::info!(
                    target: "hermes::mcp",
                    "MCP server '{server}' elicitation declined: {why}"
                );
                Box::pin(std::future::ready(ElicitationAnswer::Decline))
            }
        }
    })
}

/// An elicitation callback for a run with no user to ask
/// (`hermes-tools call --elicit defaults`): accepts with each property's
/// `default` (filled in as for any accepted answer), and declines when a
/// `required` property has none.
pub fn accept_defaults() -> ElicitationCallback {
    Arc::new(|req: ElicitationRequest| {
        let props = req.schema.get("properties").and_then(Value::as_object);
        let unanswerable = req
            .schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|name| {
                props
                    .and_then(|p| p.get(name))
                    .is_none_or(|p| p.get("default").is_none())
            });
        let answer = if unanswerable {
            ElicitationAnswer::Decline
        } else {
            ElicitationAnswer::Accept(Map::new())
        };
        Box::pin(std::future::ready(answer))
    })
}

/// Each property of `schema` that `content` leaves out and that has a
/// `default` gets it (SEP-1034).
pub fn with_defaults(content: &mut Map<String, Value>, schema: &Value) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        if let Some(default) = prop.get("default") {
            if !content.contains_key(key) {
                content.insert(key.clone(), default.clone());
            }
        }
    }
}

/// `file://` and the absolute path, percent-encoded but for the
/// characters a path keeps as they are (RFC 3986 `pchar` and `/`).
pub fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A form reaches the caller of the one call in flight, and no one
    /// when calls of two sessions are in flight (it names no call).
    #[test]
    fn a_form_reaches_the_caller_only_when_the_call_is_known() {
        let asked = Arc::new(Mutex::new(0));
        let counter = Arc::clone(&asked);
        let caller: hermes_runtime::context::FormCallback = Arc::new(move |_| {
            *lock(&counter) += 1;
            Box::pin(std::future::ready(ElicitationAnswer::Accept(Map::new())))
        });
        let ctx = |session: &str| {
            ToolContext::new(hermes_runtime::Profile::new("/nonexistent"), "/")
                .with_session_id(session)
                .with_form_callback(Arc::clone(&caller))
        };
        let flight = InFlight::default();
        let request = |flight: &InFlight| ElicitationRequest {
            server: "s".into(),
            message: "?".into(),
            schema: Value::Null,
            ctx: flight.current(),
            sessions: flight.sessions(),
        };
        let ask = ask_the_caller();
        let run = |r| {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(ask(r))
        };
        let one = flight.enter(ctx("a"));
        let same = flight.enter(ctx("a"));
        assert_eq!(flight.sessions(), 1);
        assert!(matches!(
            run(request(&flight)),
            ElicitationAnswer::Accept(_)
        ));
        let other = flight.enter(ctx("b"));
        assert_eq!(flight.sessions(), 2);
        assert_eq!(run(request(&flight)), ElicitationAnswer::Decline);
        drop((one, same, other));
        assert_eq!(*lock(&asked), 1);
        // A call whose caller cannot answer forms: declined.
        let _plain = flight.enter(ToolContext::new(
            hermes_runtime::Profile::new("/nonexistent"),
            "/",
        ));
        assert_eq!(run(request(&flight)), ElicitationAnswer::Decline);
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(file_uri(Path::new("/a b/ü")), "file:///a%20b/%C3%BC");
        assert_eq!(file_uri(Path::new("/x/y_z.1")), "file:///x/y_z.1");
    }

    #[test]
    fn defaults_fill_only_what_is_missing() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "d"}, "b": {"type": "integer", "default": 3},
            "c": {"type": "boolean"}}});
        let mut content = Map::new();
        content.insert("b".into(), Value::from(7));
        with_defaults(&mut content, &schema);
        assert_eq!(
            Value::Object(content),
            serde_json::json!({"a": "d", "b": 7})
        );
    }
}
