//! `hermes-mcp-client`: tools from MCP servers, the client side, configured per profile by
//! `mcp_servers` in its `config.yaml` (see `docs/mcp-client.md`).
//!
//! [`McpClients::start`] connects every enabled server in parallel on a
//! runtime of its own, each attempt bounded by the server's
//! `connect_timeout`, and registers its tools in the registry as run-time
//! tools (`mcp__<server>__<tool>`, toolset `mcp-<server>`, alias `<server>`),
//! so they are called through `Registry::dispatch` like every tool. Per
//! server, a supervisor task keeps the connection: it re-lists the tools on
//! `notifications/tools/list_changed` (one atomic replace) and when the
//! listing's caching hint (`ttlMs`) runs out, pings every
//! `keepalive_interval` ([`KEEPALIVE_INTERVAL`]), and reconnects a dropped connection with
//! exponential backoff. Dropping [`McpClients`] removes the tools and tears
//! the stdio servers down, parent first.
//!
//! What a server asks back while it runs a tool (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`) is answered in [`callbacks`].
//!
//! Failures are [`McpError`]s: the error of [`McpClients::start`], and
//! each server's failed connection, which becomes the text of its
//! `error` in [`ServerStatus`].

pub mod auth;
pub mod callbacks;
mod error;
pub mod naming;
pub mod output;
pub mod render;
mod rounds;
pub mod stdio;
mod tls;

pub use callbacks::{
    clear_elicitation_callback, clear_sampling_callback, set_elicitation_callback,
    set_sampling_callback,
};
use error::secs;
pub use error::McpError;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use hermes_runtime::config::{McpServer, McpTransport, Severity, SslVerify};
use hermes_runtime::{Profile, Registry, RuntimeToolSpec, ToolEffects, ToolSource};
use rmcp::model::{CallToolRequestParams, ClientRequest, PaginatedRequestParams};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{watch, Notify};

use hermes_procs::child_env::ChildEnv;
use hermes_procs::teardown::Target;

pub use tls::install_tls_provider;

/// Seconds a call may take when the entry sets no `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Seconds a connection (start, `initialize`, `tools/list`) may take when
/// the entry sets no `connect_timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a connected server is pinged when the entry sets no
/// `keepalive_interval`; no answer within its `connect_timeout` counts it as
/// dead and reconnects.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(180);
/// The shortest `keepalive_interval` taken (a smaller one is raised to it).
pub const MIN_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// Reconnection attempts in a row before the server is parked.
pub const MAX_RECONNECT_ATTEMPTS: u32 = 5;
/// The longest wait between two reconnection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How often a parked server is tried again.
pub const PARKED_RETRY: Duration = Duration::from_secs(300);
/// Pages of a `*/list` answer read at most.
pub const MAX_LIST_PAGES: usize = 50;
/// Tools of one server's listing offered at most, unless its entry sets
/// `max_tools`: the rest are cut, with a note.
pub const DEFAULT_MAX_TOOLS: usize = 1000;

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// `enabled: false`.
    Disabled,
    /// Its entry in `config.yaml` is wrong; it is not started.
    Invalid,
    Connecting,
    Connected,
    /// The last attempt failed; another follows after a backoff.
    Failed,
    /// Too many failures in a row: tried again every [`PARKED_RETRY`].
    Parked,
    /// Ended ([`McpClients::ender`]): not tried again.
    Ended,
    /// An `auth: oauth` server without a usable token: `hermes-tools mcp
    /// login NAME` gets one (tried again after a backoff, which sees it).
    NeedsLogin,
}

/// One server as `hermes-tools mcp list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    pub name: String,
    /// `stdio: COMMAND ARGS` or `http: URL`.
    pub transport: String,
    pub state: State,
    /// The registered names.
    pub tools: Vec<String>,
    pub error: Option<String>,
    /// Description warnings and tools that could not be registered.
    pub warnings: Vec<String>,
    /// Tools registered under another name than `mcp__<server>__<tool>`
    /// (too long, or taken by an earlier tool of the listing).
    pub renamed: Vec<Renamed>,
    /// The last successful connection: start to `initialize` answered.
    pub connect_ms: Option<u64>,
    /// The last `tools/list` (all pages) and registration.
    pub list_ms: Option<u64>,
    pub connections: u32,
}

/// A listed tool whose registered name is not its plain one
/// ([`naming::assign_names`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    /// The tool's name as the server lists it (and is called by).
    pub tool: String,
    /// The name it is registered under.
    pub name: String,
}

/// The servers of one profile, connected and registered. Dropping it removes
/// their tools from the registry and stops the servers.
pub struct McpClients {
    runtime: Option<tokio::runtime::Runtime>,
    scope: Arc<Scope>,
    invalid: Vec<ServerStatus>,
    pass_media: Arc<std::sync::atomic::AtomicBool>,
}

/// The started servers of one profile, ended once: by dropping their
/// [`McpClients`] or by the closure of [`McpClients::ender`], whichever
/// comes first.
struct Scope {
    registry: &'static Registry,
    servers: Vec<Arc<Server>>,
    stop: watch::Sender<bool>,
    grace: Duration,
    ended: std::sync::atomic::AtomicBool,
}

impl Scope {
    /// Stops the supervisors, removes every tool, tears the stdio servers
    /// down (parent first, then its group, then SIGKILL; all at once).
    /// Once; returns how many servers it ended (0 the second time).
    fn end(&self) -> usize {
        if self.ended.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return 0;
        }
        let _ = self.stop.send_replace(true);
        let mut targets = Vec::new();
        for s in &self.servers {
            lock(&s.peer).take();
            if let Some(t) = lock(&s.child).take() {
                targets.push(t);
            }
            lock(&s.listed).clear();
            let _ = self.registry.replace_toolset_tools(&s.toolset, Vec::new());
        }
        let grace = self.grace;
        std::thread::scope(|scope| {
            for t in targets {
                scope.spawn(move || hermes_procs::teardown::teardown(t, grace));
            }
        });
        self.servers.len()
    }
}

/// What an entry resolves to once `${VAR}`s are filled in.
#[derive(Clone)]
enum Transport {
    Stdio(stdio::Launch),
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        ssl_verify: SslVerify,
        /// `auth: oauth`: its settings and token file.
        oauth: Option<Box<auth::OAuthServer>>,
    },
}

struct Server {
    name: String,
    toolset: String,
    transport: Transport,
    timeout: Duration,
    connect_timeout: Duration,
    keepalive: Duration,
    include: Vec<String>,
    exclude: Vec<String>,
    /// `supports_parallel_tool_calls`: its tools may run beside other calls.
    parallel: bool,
    /// `max_tools`: the listing is cut after this many tools.
    max_tools: usize,
    env: ChildEnv,
    home: PathBuf,
    registry: &'static Registry,
    handle: tokio::runtime::Handle,
    status: Mutex<ServerStatus>,
    /// The live session's peer, `None` while not connected.
    peer: Mutex<Option<Peer<RoleClient>>>,
    /// The live child, for teardown.
    child: Mutex<Option<Target>>,
    /// The specs of the last listing: registered again, hidden, while the
    /// server is down ([`Server::hide_tools`]).
    listed: Mutex<Vec<RuntimeToolSpec>>,
    relist: Arc<Notify>,
    first_done: watch::Sender<bool>,
    /// Set when the servers are ended ([`Scope::end`]).
    stop: watch::Receiver<bool>,
    /// Images and audio of results go to the caller as media
    /// ([`McpClients::pass_media`]) instead of files under the cache.
    pass_media: Arc<std::sync::atomic::AtomicBool>,
    /// Its `sampling` / `elicitation` limits and the calls in flight.
    asks: Arc<callbacks::Asks>,
}

/// Held while a server's tools are named and registered ([`Server::register`]).
static NAMING: Mutex<()> = Mutex::new(());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `${VAR}` and `${env:VAR}` replaced by the profile's secret; an unknown
/// name keeps its placeholder.
pub fn interpolate(text: &str, secrets: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let body = after[..end].trim();
        let name = body.strip_prefix("env:").map_or(body, str::trim);
        match secrets.iter().find(|(k, _)| k == name) {
            Some((_, v)) if !v.is_empty() => out.push_str(v),
            _ => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn describe(transport: &McpTransport) -> String {
    match transport {
        McpTransport::Stdio { command, args, .. } => {
            let mut s = format!("stdio: {command}");
            for a in args {
                s.push(' ');
                s.push_str(a);
            }
            s
        }
        McpTransport::Http { url, .. } => format!("http: {url}"),
    }
}

fn duration_of(seconds: Option<f64>, default: Duration) -> Duration {
    seconds
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(default, Duration::from_secs_f64)
}

impl McpClients {
    /// Starts connecting every enabled server of `profile` (in the
    /// background); see [`McpClients::wait_ready`].
    pub fn start(registry: &'static Registry, profile: &Profile) -> Result<Self, McpError> {
        Self::start_only(registry, profile, |_| true)
    }

    /// [`McpClients::start`] for the servers whose name `wanted` accepts
    /// (the others are not started and not shown).
    pub fn start_only(
        registry: &'static Registry,
        profile: &Profile,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Self, McpError> {
        install_tls_provider();
        let config = profile.config();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hermes-mcp")
            .enable_all()
            .build()
            .map_err(McpError::Runtime)?;
        let (stop, _) = watch::channel(false);
        let secrets = profile.secrets();
        let base_env = ChildEnv::for_profile(profile);
        let mut servers = Vec::new();
        let mut invalid = Vec::new();
        let pass_media = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Entries the loader refused: shown with their first error.
        for d in &config.diagnostics {
            if d.severity != Severity::Error {
                continue;
            }
            let Some(rest) = d.key.strip_prefix("mcp_servers.") else {
                continue;
            };
            let name = rest.split(['.', '[']).next().unwrap_or(rest).to_string();
            if !wanted(&name)
                || config.mcp_servers.contains_key(&name)
                || invalid.iter().any(|s: &ServerStatus| s.name == name)
            {
                continue;
            }
            invalid.push(ServerStatus {
                name,
                transport: String::new(),
                state: State::Invalid,
                tools: Vec::new(),
                error: Some(d.render(&config.path)),
                warnings: Vec::new(),
                renamed: Vec::new(),
                connect_ms: None,
                list_ms: None,
                connections: 0,
            });
        }
        for (name, entry) in &config.mcp_servers {
            if !wanted(name) {
                continue;
            }
            let server = Arc::new(Server::new(
                name,
                entry,
                &secrets,
                &base_env,
                profile,
                registry,
                runtime.handle().clone(),
                stop.subscribe(),
                Arc::clone(&pass_media),
            ));
            if entry.enabled {
                runtime.spawn(supervise(Arc::clone(&server), stop.subscribe()));
            } else {
                let _ = server.first_done.send_replace(true);
            }
            servers.push(server);
        }
        let scope = Arc::new(Scope {
            registry,
            servers,
            stop,
            grace: hermes_procs::grace_for(profile),
            ended: std::sync::atomic::AtomicBool::new(false),
        });
        Ok(McpClients {
            runtime: Some(runtime),
            scope,
            invalid,
            pass_media,
        })
    }

    /// With `true`, an image or audio block of a tool's result (within
    /// [`hermes_runtime::content::MAX_MEDIA_BYTES`]) reaches the caller as
    /// media of the result (`Registry::dispatch_content`, `serve --mcp`'s
    /// image blocks) instead of a file under the profile's `cache/` named
    /// `MEDIA:<path>`; `dispatch` then names it in a note. Off by default.
    /// Applies to the calls that start after it.
    pub fn pass_media(&self, on: bool) {
        self.pass_media
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Waits until every server's first attempt is over (each bounded by its
    /// `connect_timeout`), or `limit`.
    /// Not from inside an async runtime: use [`McpClients::ready`] there.
    pub fn wait_ready(&self, limit: Duration) {
        let Some(runtime) = &self.runtime else { return };
        runtime.block_on(self.ready(limit));
    }

    /// [`McpClients::wait_ready`] for async callers.
    pub async fn ready(&self, limit: Duration) {
        let waits: Vec<_> = self
            .scope
            .servers
            .iter()
            .map(|s| {
                let mut rx = s.first_done.subscribe();
                async move {
                    let _ = rx.wait_for(|done| *done).await;
                }
            })
            .collect();
        let all = async {
            for w in waits {
                w.await;
            }
        };
        let _ = tokio::time::timeout(limit, all).await;
    }

    /// The longest `connect_timeout` of the enabled servers (a bound for
    /// [`McpClients::wait_ready`]), plus a second.
    pub fn longest_connect(&self) -> Duration {
        self.scope
            .servers
            .iter()
            .map(|s| s.connect_timeout)
            .max()
            .unwrap_or_default()
            + Duration::from_secs(1)
    }

    /// Every configured server, in name order (invalid entries included).
    pub fn status(&self) -> Vec<ServerStatus> {
        let ended = self.scope.ended.load(std::sync::atomic::Ordering::Acquire);
        let mut all: Vec<ServerStatus> = self
            .scope
            .servers
            .iter()
            .map(|s| {
                let mut status = lock(&s.status).clone();
                if ended {
                    // Whatever a supervisor last wrote, the server is gone
                    // and so are its tools.
                    status.state = State::Ended;
                    status.tools.clear();
                }
                status
            })
            .chain(self.invalid.iter().cloned())
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Registers `tools` as if server `name` had just listed them (what a
    /// `tools/list` answer costs once it has arrived); the number
    /// registered, `None` for an unknown server. For the benchmark.
    #[doc(hidden)]
    pub fn register_listed(&self, name: &str, tools: &[rmcp::model::Tool]) -> Option<usize> {
        let server = self.scope.servers.iter().find(|s| s.name == name)?;
        server.register(tools, None, Instant::now());
        Some(lock(&server.status).tools.len())
    }

    /// Whether the profile configures any server.
    pub fn is_empty(&self) -> bool {
        self.scope.servers.is_empty() && self.invalid.is_empty()
    }

    /// A closure that ends these servers as dropping this value does
    /// (tools removed, stdio servers torn down, supervisors stopped), for
    /// whoever owns the profile's lifetime: give it to
    /// `hermes_tools::ProfileSessions::end_with`. Ending is once: the
    /// closure after a drop, or a drop after the closure, does nothing.
    /// The closure returns how many servers it ended.
    pub fn ender(&self) -> impl FnOnce() -> usize + Send + 'static {
        let scope = Arc::clone(&self.scope);
        move || scope.end()
    }
}

impl Drop for McpClients {
    fn drop(&mut self) {
        self.scope.end();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// rmcp's handler: `list_changed` wakes the supervisor; the server's
/// requests back go to [`callbacks`].
#[derive(Clone)]
struct Handler {
    relist: Arc<Notify>,
    asks: Arc<callbacks::Asks>,
}

#[allow(deprecated)] // rmcp marks sampling and roots deprecated by SEP-2577.
impl ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.capabilities = self.asks.capabilities();
        info
    }
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        self.asks.create_message(params).await
    }
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.asks.create_elicitation(request).await
    }
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        Ok(self.asks.roots())
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.relist.notify_one();
    }
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {}
    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {}
}

type Session = RunningService<RoleClient, Handler>;

impl Server {
    #[allow(clippy::too_many_arguments)] // one call site, each argument shared by every server
    fn new(
        name: &str,
        entry: &McpServer,
        secrets: &[(String, String)],
        base_env: &ChildEnv,
        profile: &Profile,
        registry: &'static Registry,
        handle: tokio::runtime::Handle,
        stop: watch::Receiver<bool>,
        pass_media: Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        let fill = |s: &String| interpolate(s, secrets);
        let transport = match &entry.transport {
            McpTransport::Stdio { command, args, env } => Transport::Stdio(stdio::Launch {
                command: fill(command),
                args: args.iter().map(fill).collect(),
                env: env.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
                cwd: entry.cwd.as_ref().map(|c| PathBuf::from(fill(c))),
                max_tools: entry.max_tools.unwrap_or(DEFAULT_MAX_TOOLS),
            }),
            McpTransport::Http { url, headers } => {
                let ssl_verify = match &entry.ssl_verify {
                    SslVerify::CaFile(path) => SslVerify::CaFile(fill(path)),
                    other => other.clone(),
                };
                let oauth = entry.oauth.as_ref().map(|o| {
                    Box::new(auth::OAuthServer::new(
                        name,
                        &fill(url),
                        ssl_verify.clone(),
                        auth::fill_settings(o, &fill),
                        profile.home(),
                    ))
                });
                Transport::Http {
                    url: fill(url),
                    headers: headers.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
                    ssl_verify,
                    oauth,
                }
            }
        };
        let (first_done, _) = watch::channel(false);
        Server {
            name: name.to_string(),
            toolset: naming::toolset(name),
            transport,
            timeout: duration_of(entry.timeout, DEFAULT_TIMEOUT),
            connect_timeout: duration_of(entry.connect_timeout, DEFAULT_CONNECT_TIMEOUT),
            keepalive: duration_of(entry.keepalive_interval, KEEPALIVE_INTERVAL)
                .max(MIN_KEEPALIVE_INTERVAL),
            include: entry.include.clone(),
            exclude: entry.exclude.clone(),
            parallel: entry.parallel,
            max_tools: entry.max_tools.unwrap_or(DEFAULT_MAX_TOOLS),
            env: base_env.clone(),
            home: std::path::absolute(profile.home())
                .unwrap_or_else(|_| profile.home().to_path_buf()),
            registry,
            handle,
            status: Mutex::new(ServerStatus {
                name: name.to_string(),
                transport: describe(&entry.transport),
                state: if entry.enabled {
                    State::Connecting
                } else {
                    State::Disabled
                },
                tools: Vec::new(),
                error: None,
                warnings: Vec::new(),
                renamed: Vec::new(),
                connect_ms: None,
                list_ms: None,
                connections: 0,
            }),
            peer: Mutex::new(None),
            child: Mutex::new(None),
            listed: Mutex::new(Vec::new()),
            relist: Arc::new(Notify::new()),
            first_done,
            stop,
            pass_media,
            asks: Arc::new(callbacks::Asks::new(
                name,
                entry.sampling.clone(),
                entry.elicitation.clone(),
            )),
        }
    }

    /// Its `auth: oauth` settings, if any.
    fn oauth(&self) -> Option<&auth::OAuthServer> {
        match &self.transport {
            Transport::Http { oauth, .. } => oauth.as_deref(),
            Transport::Stdio(_) => None,
        }
    }

    fn set_state(&self, state: State, error: Option<String>) {
        let mut s = lock(&self.status);
        s.state = state;
        s.error = error.map(|e| render::strip_credentials(&e));
    }

    /// Starts the server and runs `initialize`.
    async fn open(&self) -> Result<(Session, Option<Target>), McpError> {
        let handler = Handler {
            relist: Arc::clone(&self.relist),
            asks: Arc::clone(&self.asks),
        };
        match &self.transport {
            Transport::Stdio(launch) => {
                let spawned = stdio::spawn(launch, &self.env)?;
                let target = spawned.target;
                // Recorded at once: a start that times out is torn down
                // with its whole group, not just the direct child.
                *lock(&self.child) = Some(target);
                let tail = Arc::clone(&spawned.stderr);
                let mut child = spawned.child;
                match handler.serve(spawned.transport).await {
                    Ok(session) => {
                        // The child is reaped by its own task; teardown uses `target`.
                        tokio::spawn(async move {
                            let _ = child.wait().await;
                        });
                        Ok((session, Some(target)))
                    }
                    Err(e) => {
                        let _ = child.start_kill();
                        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
                        Err(McpError::InitializeStdio {
                            error: Box::new(e),
                            stderr: stdio::tail_text(&tail),
                        })
                    }
                }
            }
            Transport::Http {
                url,
                headers,
                ssl_verify,
                oauth,
            } => {
                let session =
                    http::connect(handler, url, headers, ssl_verify, oauth.as_deref()).await?;
                Ok((session, None))
            }
        }
    }

    /// Lists the tools (all pages) and replaces the toolset's tools at
    /// once. `Some(ttl)`: how long the server says the listing stays fresh
    /// (the shortest `ttlMs` of its pages; SEP-2549), `None` when it says
    /// nothing (then only `list_changed` re-lists).
    async fn refresh(
        self: &Arc<Self>,
        peer: &Peer<RoleClient>,
    ) -> Result<Option<Duration>, McpError> {
        let started = Instant::now();
        let mut tools = Vec::new();
        let mut cursor = None;
        let mut fresh_for: Option<u64> = None;
        for _ in 0..MAX_LIST_PAGES {
            let page = peer
                .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .map_err(|e| match self.oauth() {
                    Some(o) => auth::list_failed(o, e),
                    None => McpError::ListTools(e),
                })?;
            if let Some(ttl) = page.ttl_ms {
                fresh_for = Some(fresh_for.map_or(ttl, |f| f.min(ttl)));
            }
            tools.extend(page.tools);
            cursor = page.next_cursor;
            // Past the cap nothing more is read: `register` cuts it.
            if cursor.is_none() || tools.len() > self.max_tools {
                break;
            }
        }
        let caps = peer.peer_info().map(|i| i.capabilities.clone());
        self.register(&tools, caps.as_ref(), started);
        Ok(fresh_for.map(Duration::from_millis))
    }

    /// Registers a `tools/list` answer (filtered, named, normalized, one
    /// atomic replace of the toolset), plus the utility tools `caps` offer.
    fn register(
        self: &Arc<Self>,
        tools: &[rmcp::model::Tool],
        caps: Option<&rmcp::model::ServerCapabilities>,
        started: Instant,
    ) {
        let mut warnings = Vec::new();
        let mut specs = Vec::new();
        let mut renamed = Vec::new();
        let tools = match tools.get(..self.max_tools) {
            Some(kept) if kept.len() < tools.len() => {
                warnings.push(format!(
                    "the server lists more than {} tools: only the first {} are offered (`max_tools`)",
                    self.max_tools, self.max_tools
                ));
                kept
            }
            _ => tools,
        };
        let tools: Vec<&rmcp::model::Tool> = tools
            .iter()
            .filter(|t| naming::selected(&t.name, &self.include, &self.exclude))
            .collect();
        let utilities: Vec<&str> = caps
            .map(|c| {
                let mut u = Vec::new();
                if c.resources.is_some() {
                    u.extend(["list_resources", "read_resource"]);
                }
                if c.prompts.is_some() {
                    u.extend(["list_prompts", "get_prompt"]);
                }
                u
            })
            .unwrap_or_default();
        // Naming and registering are one step across every server of the
        // process: two servers listing at once cannot both take a name.
        let _naming = lock(&NAMING);
        // Taken: this server's utility tools, and every name another
        // toolset holds. A tool of another server whose name sanitizes
        // alike (`a-b` and `a.b`; `a` + `b__c` and `a__b` + `c`) keeps
        // its tool, and this one gets a hashed name instead of replacing it.
        let mut reserved: Vec<String> = utilities
            .iter()
            .map(|u| naming::tool_name(&self.name, u))
            .collect();
        reserved.extend(
            self.registry
                .tools()
                .iter()
                .filter(|t| t.toolset() != self.toolset)
                .map(|t| t.name().to_string()),
        );
        let names = naming::assign_names(&self.name, tools.iter().map(|t| &*t.name), &reserved);
        for (tool, name) in tools.into_iter().zip(names) {
            let given = tool.description.as_deref();
            let description = naming::description(&self.name, &tool.name, given);
            let parameters = naming::normalize_object((*tool.input_schema).clone());
            // One tool's broken schema costs that tool only.
            if let Some(why) = naming::unusable(&name, &description, &parameters) {
                let w = format!(
                    "tool '{}' not registered: its inputSchema cannot be used: {why}",
                    tool.name
                );
                tracing::warn!(target: "hermes::mcp", "MCP server '{}' {w}", self.name);
                warnings.push(w);
                continue;
            }
            if name != naming::tool_name(&self.name, &tool.name) {
                renamed.push(Renamed {
                    tool: tool.name.to_string(),
                    name: name.clone(),
                });
            }
            let findings = naming::scan_description(given.unwrap_or(""));
            if !findings.is_empty() {
                let w = format!(
                    "tool '{}': suspicious description content — {}",
                    tool.name,
                    findings.join("; ")
                );
                tracing::warn!(target: "hermes::mcp", "MCP server '{}' {w}", self.name);
                warnings.push(w);
            }
            // The outputSchema, kept for the embedder and compiled to
            // check results; one that cannot be compiled checks nothing.
            let output_schema = tool
                .output_schema
                .as_ref()
                .map(|o| Value::Object((**o).clone()));
            let output = match output_schema.as_ref().map(output::OutputCheck::new) {
                Some(Err(why)) => {
                    let w = format!(
                        "tool '{}': its outputSchema cannot be used, results are not checked: {why}",
                        tool.name
                    );
                    tracing::warn!(target: "hermes::mcp", "MCP server '{}' {w}", self.name);
                    warnings.push(w);
                    None
                }
                Some(Ok(check)) => Some(check),
                None => None,
            };
            let mut spec = self.spec(
                name,
                description,
                parameters,
                Call::Tool {
                    name: tool.name.to_string(),
                    output,
                },
            );
            spec.output_schema = output_schema;
            // What the server says the tool does (MCP's defaults for what
            // it leaves out); parallel only when read-only or opted in.
            let hints = tool.annotations.as_ref();
            spec.effects = ToolEffects::from_mcp_hints(
                hints.and_then(|a| a.read_only_hint),
                hints.and_then(|a| a.destructive_hint),
                hints.and_then(|a| a.idempotent_hint),
                hints.and_then(|a| a.open_world_hint),
                self.parallel,
            );
            spec.title = tool
                .title
                .clone()
                .or_else(|| hints.and_then(|a| a.title.clone()));
            specs.push(spec);
        }
        specs.extend(self.utility_specs(&utilities));
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        *lock(&self.listed) = specs.clone();
        let errors = self.registry.replace_toolset_tools(&self.toolset, specs);
        if *self.stop.borrow() {
            // Ended while listing: `Scope::end` set `stop` before removing
            // the tools, so this replace may have come after its removal.
            lock(&self.listed).clear();
            let _ = self
                .registry
                .replace_toolset_tools(&self.toolset, Vec::new());
            return;
        }
        let mut registered = names;
        for e in &errors {
            warnings.push(format!("not registered: {e}"));
            if let hermes_runtime::RegisterError::Shadowing { name, .. }
            | hermes_runtime::RegisterError::InvalidName(name) = e
            {
                registered.retain(|n| n != name);
            }
        }
        let toolsets = self.registry.toolsets();
        if !registered.is_empty() && !toolsets.validate_toolset(&self.name) {
            toolsets.register_toolset_alias(&self.name, &self.toolset);
        }
        let mut s = lock(&self.status);
        s.tools = registered;
        s.warnings = warnings;
        s.renamed = renamed;
        s.list_ms = Some(ms(started.elapsed()));
    }

    /// Tears down the child of the last attempt, if any (1 s per step).
    async fn end_child(&self) {
        let child = lock(&self.child).take();
        if let Some(t) = child {
            let grace = Duration::from_secs(1);
            let _ = tokio::task::spawn_blocking(move || hermes_procs::teardown::teardown(t, grace))
                .await;
        }
    }

    /// The server went down: its tools stay registered (a call answers
    /// that the server is not connected) but no longer reach the model:
    /// one atomic replace by the same tools behind an availability check
    /// that says no, so definitions (and `hermes-tools list`) leave them
    /// out until a reconnection lists them again.
    fn hide_tools(&self) {
        let hidden: Vec<RuntimeToolSpec> = lock(&self.listed)
            .iter()
            .map(|spec| {
                let mut spec = spec.clone();
                spec.check = Some(server_down);
                spec
            })
            .collect();
        if !hidden.is_empty() {
            let _ = self.registry.replace_toolset_tools(&self.toolset, hidden);
        }
    }

    fn utility_specs(self: &Arc<Self>, which: &[&str]) -> Vec<RuntimeToolSpec> {
        let n = &self.name;
        which
            .iter()
            .map(|w| {
                let (description, parameters, call) = match *w {
                    "list_resources" => (
                        format!("List available resources from MCP server '{n}'"),
                        json!({"type": "object", "properties": {}}),
                        Call::ListResources,
                    ),
                    "read_resource" => (
                        format!("Read a resource by URI from MCP server '{n}'"),
                        json!({"type": "object", "properties": {"uri": {
                            "type": "string", "description": "URI of the resource to read"}},
                            "required": ["uri"]}),
                        Call::ReadResource,
                    ),
                    "list_prompts" => (
                        format!("List available prompts from MCP server '{n}'"),
                        json!({"type": "object", "properties": {}}),
                        Call::ListPrompts,
                    ),
                    _ => (
                        format!("Get a prompt by name from MCP server '{n}'"),
                        json!({"type": "object", "properties": {
                            "name": {"type": "string", "description": "Name of the prompt to retrieve"},
                            "arguments": {"type": "object", "description": "Optional arguments to pass to the prompt",
                                          "properties": {}, "additionalProperties": true}},
                            "required": ["name"]}),
                        Call::GetPrompt,
                    ),
                };
                let mut spec = self.spec(naming::tool_name(n, w), description, parameters, call);
                // Listing and reading resources and prompts changes nothing.
                spec.effects = ToolEffects::from_mcp_hints(Some(true), None, None, None, false);
                spec
            })
            .collect()
    }

    fn spec(
        self: &Arc<Self>,
        name: String,
        description: String,
        parameters: Value,
        call: Call,
    ) -> RuntimeToolSpec {
        let weak: Weak<Server> = Arc::downgrade(self);
        let call = Arc::new(call);
        let server_name = self.name.clone();
        let handler: hermes_runtime::tool::DynHandler = Arc::new(move |ctx, args| {
            let weak = weak.clone();
            let call = Arc::clone(&call);
            let server_name = server_name.clone();
            Box::pin(async move {
                let Some(server) = weak.upgrade() else {
                    return render::error(&format!("MCP server '{server_name}' is not connected"));
                };
                let handle = server.handle.clone();
                match handle
                    .spawn(async move { server.call(&call, args, ctx).await })
                    .await
                {
                    Ok(result) => result,
                    Err(_) => {
                        render::error(&format!("MCP server '{server_name}' is not connected"))
                    }
                }
            })
        });
        let mut spec =
            RuntimeToolSpec::new(name, self.toolset.clone(), description, parameters, handler);
        spec.source = ToolSource::Mcp;
        // The call's own timeout answers first, naming the server.
        spec.timeout = Some(self.timeout + Duration::from_secs(5));
        spec
    }

    /// One call on the live session, bounded by `timeout`.
    async fn call(&self, call: &Call, args: Value, ctx: hermes_runtime::ToolContext) -> String {
        let Some(peer) = lock(&self.peer).clone() else {
            let why = lock(&self.status)
                .error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            return render::error(&format!("MCP server '{}' is not connected{why}", self.name));
        };
        let what = call.method();
        // Requests back from the server during the call find its session.
        let _in_flight = self.asks.flight.enter(ctx);
        let work = async {
            match call {
                Call::Tool { name: tool, output } => {
                    let mut params = CallToolRequestParams::new(tool.clone());
                    if let Value::Object(map) = args {
                        params = params.with_arguments(map);
                    }
                    let result = rounds::call_tool(&peer, params, &self.asks, self.oauth()).await?;
                    let value = serde_json::to_value(&result).map_err(|e| e.to_string())?;
                    if let Some(why) = output.as_ref().and_then(|o| o.check(tool, &value)) {
                        return Ok(render::error(&why));
                    }
                    let pass_media = self.pass_media.load(std::sync::atomic::Ordering::Relaxed);
                    Ok(render::call_result(
                        &value, &self.name, &self.home, pass_media,
                    ))
                }
                Call::ListResources => self.list_resources(&peer).await,
                Call::ReadResource => {
                    let Some(uri) = args
                        .get("uri")
                        .and_then(Value::as_str)
                        .filter(|u| !u.is_empty())
                    else {
                        return Ok(hermes_runtime::error_json(
                            "Missing required parameter 'uri'",
                        ));
                    };
                    let params: rmcp::model::ReadResourceRequestParams =
                        serde_json::from_value(json!({"uri": uri})).map_err(|e| e.to_string())?;
                    let result = peer
                        .read_resource(params)
                        .await
                        .map_err(|e| e.to_string())?;
                    let value = serde_json::to_value(&result).map_err(|e| e.to_string())?;
                    let parts: Vec<String> = value["contents"]
                        .as_array()
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(|c| render::resource_contents(c, &self.home))
                        .collect();
                    Ok(json!({"result": parts.join("\n")}).to_string())
                }
                Call::ListPrompts => self.list_prompts(&peer).await,
                Call::GetPrompt => {
                    let Some(name) = args
                        .get("name")
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty())
                    else {
                        return Ok(hermes_runtime::error_json(
                            "Missing required parameter 'name'",
                        ));
                    };
                    let mut p = json!({"name": name});
                    if let Some(a) = args.get("arguments").filter(|a| a.is_object()) {
                        p["arguments"] = a.clone();
                    }
                    let params: rmcp::model::GetPromptRequestParams =
                        serde_json::from_value(p).map_err(|e| e.to_string())?;
                    let result = peer.get_prompt(params).await.map_err(|e| e.to_string())?;
                    let value = serde_json::to_value(&result).map_err(|e| e.to_string())?;
                    let messages: Vec<Value> = value["messages"]
                        .as_array()
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(|m| {
                            let content = &m["content"];
                            let text = content
                                .get("text")
                                .and_then(Value::as_str)
                                .map_or_else(|| content.to_string(), str::to_string);
                            json!({"role": m["role"], "content": text})
                        })
                        .collect();
                    let mut out = json!({"messages": messages});
                    if let Some(d) = value
                        .get("description")
                        .filter(|d| d.as_str().is_some_and(|s| !s.is_empty()))
                    {
                        out["description"] = d.clone();
                    }
                    Ok(out.to_string())
                }
            }
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => render::error(&format!("MCP call failed: {what}: {e}")),
            Err(_) => render::error(&format!(
                "MCP call failed: {what}: MCP server '{}' did not answer within {}",
                self.name,
                secs(self.timeout)
            )),
        }
    }

    async fn list_resources(&self, peer: &Peer<RoleClient>) -> Result<String, String> {
        let resources = all_pages(|cursor| async {
            let page = peer
                .list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .map_err(|e| e.to_string())?;
            Ok((page.resources, page.next_cursor))
        })
        .await?;
        let out: Vec<Value> = resources
            .iter()
            .map(|r| {
                Value::Object(non_empty_strings(
                    r,
                    &["uri", "name", "description", "mimeType"],
                ))
            })
            .collect();
        Ok(json!({"resources": out}).to_string())
    }

    async fn list_prompts(&self, peer: &Peer<RoleClient>) -> Result<String, String> {
        let prompts = all_pages(|cursor| async {
            let page = peer
                .list_prompts(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .map_err(|e| e.to_string())?;
            Ok((page.prompts, page.next_cursor))
        })
        .await?;
        let out: Vec<Value> = prompts
            .iter()
            .map(|p| {
                let mut entry = serde_json::Map::new();
                entry.insert("name".into(), p["name"].clone());
                entry.extend(non_empty_strings(p, &["description"]));
                if let Some(args) = p
                    .get("arguments")
                    .and_then(Value::as_array)
                    .filter(|a| !a.is_empty())
                {
                    let args: Vec<Value> = args
                        .iter()
                        .map(|a| {
                            let mut m = serde_json::Map::new();
                            m.insert("name".into(), a["name"].clone());
                            m.extend(non_empty_strings(a, &["description"]));
                            m.insert(
                                "required".into(),
                                a.get("required").cloned().unwrap_or(Value::Null),
                            );
                            Value::Object(m)
                        })
                        .collect();
                    entry.insert("arguments".into(), Value::Array(args));
                }
                Value::Object(entry)
            })
            .collect();
        Ok(json!({"prompts": out}).to_string())
    }
}

/// Every item of a paged `*/list` answer (at most [`MAX_LIST_PAGES`]
/// pages), each as JSON; `page` fetches the page at a cursor.
async fn all_pages<T, F, Fut>(mut page: F) -> Result<Vec<Value>, String>
where
    T: Serialize,
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), String>>,
{
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let (items, next) = page(cursor).await?;
        for item in &items {
            out.push(serde_json::to_value(item).map_err(|e| e.to_string())?);
        }
        cursor = next;
        if cursor.is_none() {
            break;
        }
    }
    Ok(out)
}

/// The `keys` of `item` whose values are non-empty strings, in that order.
fn non_empty_strings(item: &Value, keys: &[&str]) -> serde_json::Map<String, Value> {
    keys.iter()
        .filter_map(|&key| {
            item.get(key)
                .filter(|x| x.as_str().is_some_and(|s| !s.is_empty()))
                .map(|x| (key.to_string(), x.clone()))
        })
        .collect()
}

/// The availability check of a down server's tools: never available.
fn server_down(_: &Profile) -> bool {
    false
}

/// What a registered tool calls.
enum Call {
    /// A listed tool, by its listed name, with its compiled `outputSchema`.
    Tool {
        name: String,
        output: Option<output::OutputCheck>,
    },
    ListResources,
    ReadResource,
    ListPrompts,
    GetPrompt,
}

impl Call {
    fn method(&self) -> &'static str {
        match self {
            Call::Tool { .. } => "tools/call",
            Call::ListResources => "resources/list",
            Call::ReadResource => "resources/read",
            Call::ListPrompts => "prompts/list",
            Call::GetPrompt => "prompts/get",
        }
    }
}

/// Resolves once `stop` is set (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// One server's life: connect, register, watch; reconnect with backoff.
async fn supervise(server: Arc<Server>, mut stop: watch::Receiver<bool>) {
    let mut failures: u32 = 0;
    loop {
        let stopping = *stop.borrow();
        if stopping {
            return;
        }
        let started = Instant::now();
        let attempt = async {
            // A child left by a failed attempt is torn down below.
            let (session, _) = server.open().await?;
            let connected = started.elapsed();
            let fresh_for = match server.refresh(session.peer()).await {
                Ok(f) => f,
                Err(e) => {
                    session.cancellation_token().cancel();
                    return Err(e);
                }
            };
            Ok::<_, McpError>((session, connected, fresh_for))
        };
        let outcome = tokio::select! {
            r = tokio::time::timeout(server.connect_timeout, attempt) => r.unwrap_or_else(|_| Err(
                McpError::ConnectTimeout(server.connect_timeout)
            )),
            () = stopped(&mut stop) => {
                // A child the interrupted attempt started.
                server.end_child().await;
                return;
            }
        };
        match outcome {
            Ok((session, connected, fresh_for)) => {
                failures = 0;
                {
                    let mut s = lock(&server.status);
                    s.state = State::Connected;
                    s.error = None;
                    s.connect_ms = Some(ms(connected));
                    s.connections += 1;
                }
                *lock(&server.peer) = Some(session.peer().clone());
                let _ = server.first_done.send_replace(true);
                let reason = watch_session(&server, session, fresh_for, &mut stop).await;
                lock(&server.peer).take();
                if reason.is_some() {
                    server.hide_tools();
                }
                server.end_child().await;
                match reason {
                    None => return,
                    Some(why) => server.set_state(State::Failed, Some(why)),
                }
            }
            Err(e) => {
                failures += 1;
                server.end_child().await;
                let parked = failures > MAX_RECONNECT_ATTEMPTS;
                let state = match e {
                    McpError::NeedsLogin { .. } => State::NeedsLogin,
                    _ if parked => State::Parked,
                    _ => State::Failed,
                };
                server.set_state(state, Some(e.to_string()));
                let _ = server.first_done.send_replace(true);
            }
        }
        let wait = if failures > MAX_RECONNECT_ATTEMPTS {
            PARKED_RETRY
        } else {
            Duration::from_secs(1u64 << failures.min(6)).min(MAX_BACKOFF)
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = stopped(&mut stop) => return,
        }
    }
}

/// When a listing that stays fresh for `fresh_for` is read again: when
/// its `ttlMs` runs out, but not sooner than the server's
/// `keepalive_interval` after it was read (a server answering `ttlMs: 0`,
/// "stale at once", as rmcp's servers do by default, is not re-listed in a
/// loop); `None` (no hint): only on `list_changed`.
fn relist_at(server: &Server, fresh_for: Option<Duration>) -> Option<tokio::time::Instant> {
    fresh_for.map(|ttl| tokio::time::Instant::now() + ttl.max(server.keepalive))
}

/// Serves one live session until it ends (`Some(reason)`) or `stop`
/// (`None`): re-lists on `list_changed` and when the listing's `ttlMs`
/// runs out ([`relist_at`]), pings every `keepalive_interval`.
async fn watch_session(
    server: &Arc<Server>,
    session: Session,
    fresh_for: Option<Duration>,
    stop: &mut watch::Receiver<bool>,
) -> Option<String> {
    let mut relist = relist_at(server, fresh_for);
    let peer = session.peer().clone();
    let ct = session.cancellation_token();
    let mut ended = tokio::spawn(session.waiting());
    let mut keepalive = tokio::time::interval_at(
        tokio::time::Instant::now() + server.keepalive,
        server.keepalive,
    );
    loop {
        tokio::select! {
            r = &mut ended => {
                return Some(match r {
                    Ok(reason) => format!("the connection ended ({reason:?}); reconnecting"),
                    Err(e) => format!("the connection ended ({e}); reconnecting"),
                });
            }
            why = relist_due(server, relist) => {
                let refreshed = tokio::time::timeout(server.connect_timeout, server.refresh(&peer)).await;
                let problem = match refreshed {
                    Ok(Ok(fresh_for)) => {
                        relist = relist_at(server, fresh_for);
                        None
                    }
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(_) => Some(format!("tools/list after {why}: no answer within {}", secs(server.connect_timeout))),
                };
                if let Some(p) = problem {
                    // Tried again after the keepalive interval, not at once.
                    if relist.is_some() {
                        relist = relist_at(server, Some(Duration::ZERO));
                    }
                    let warnings = &mut lock(&server.status).warnings;
                    // A failure that repeats (every keepalive, or on each
                    // list_changed) is noted once.
                    if !warnings.contains(&p) {
                        warnings.push(p);
                    }
                }
            }
            _ = keepalive.tick() => {
                let ping = peer.send_request(ClientRequest::PingRequest(Default::default()));
                match tokio::time::timeout(server.connect_timeout, ping).await {
                    // Any answer (even "method not found") shows it is alive.
                    Ok(Ok(_)) | Ok(Err(rmcp::ServiceError::McpError(_))) => {}
                    Ok(Err(e)) => {
                        ct.cancel();
                        return Some(format!("keepalive ping failed: {e}; reconnecting"));
                    }
                    Err(_) => {
                        ct.cancel();
                        return Some(format!("keepalive ping: no answer within {}; reconnecting", secs(server.connect_timeout)));
                    }
                }
            }
            () = stopped(stop) => {
                ct.cancel();
                return None;
            }
        }
    }
}

/// Waits for the next reason to re-list: `list_changed` or the listing's
/// freshness running out at `relist` (never, when `None`); says which.
async fn relist_due(server: &Server, relist: Option<tokio::time::Instant>) -> &'static str {
    let expiry = async {
        match relist {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = server.relist.notified() => "list_changed",
        () = expiry => "the listing's ttlMs ran out",
    }
}

mod http {
    //! A streamable HTTP server: rmcp's client transport over reqwest, with
    //! the entry's `headers` on every request.
    use std::collections::{BTreeMap, HashMap};

    use rmcp::model::ProtocolVersion;
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::{
        StreamableHttpClient, StreamableHttpClientTransportConfig,
    };
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};

    use super::{auth, Handler, McpError, Session, SslVerify};

    pub(super) async fn connect(
        handler: Handler,
        url: &str,
        headers: &BTreeMap<String, String>,
        ssl_verify: &SslVerify,
        oauth: Option<&auth::OAuthServer>,
    ) -> Result<Session, McpError> {
        let mut custom = HashMap::new();
        for (k, v) in headers {
            let name = http::HeaderName::from_bytes(k.as_bytes()).map_err(|error| {
                McpError::HeaderName {
                    name: k.clone(),
                    error,
                }
            })?;
            let value = http::HeaderValue::from_str(v).map_err(|error| McpError::HeaderValue {
                name: k.clone(),
                error,
            })?;
            custom.insert(name, value);
        }
        let config =
            StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(custom);
        let client = crate::tls::http_client(ssl_verify)?;
        let served = match oauth {
            None => negotiate(handler, client.clone(), config).await,
            Some(server) => {
                let authorized = auth::authorized_client(server, client.clone()).await?;
                match negotiate(handler, authorized, config).await {
                    // The token refused (and not refreshed), or too
                    // little scope: a login is needed, not a retry.
                    Err(error)
                        if error.is_authorization_required()
                            || error.auth_challenge().is_some() =>
                    {
                        return Err(auth::refused(server, error.auth_challenge()));
                    }
                    other => other,
                }
            }
        };
        match served {
            Ok(session) => Ok(session),
            // rmcp keeps only reqwest's "error sending request": a
            // request of our own names why it could not connect (a
            // certificate refused, a connection refused).
            Err(error) => Err(McpError::InitializeHttp {
                error: Box::new(error),
                connecting: connect_problem(&client, url).await,
            }),
        }
    }

    /// The session over `client`: the sessionless revision first
    /// (`server/discover`); a server that does not know it (an error for
    /// the probe) gets the `initialize` handshake of the session revisions
    /// on the same transport. One that answers the probe with something
    /// else (a result of another kind, only older versions) gets the
    /// handshake on a fresh one.
    async fn negotiate<C: StreamableHttpClient + Sync>(
        handler: Handler,
        client: C,
        config: StreamableHttpClientTransportConfig,
    ) -> Result<Session, ClientInitializeError> {
        let transport = StreamableHttpClientTransport::with_client(client.clone(), config.clone());
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        };
        let first = handler
            .clone()
            .serve_with_lifecycle(transport, lifecycle)
            .await;
        match first {
            Err(
                ClientInitializeError::ExpectedInitResult(_)
                | ClientInitializeError::ExpectedInitResponse(_)
                | ClientInitializeError::NoCompatibleProtocolVersion { .. },
            ) => {
                let transport = StreamableHttpClientTransport::with_client(client, config);
                handler.serve(transport).await
            }
            other => other,
        }
    }

    /// Why a request to `url` cannot connect, when that is what fails
    /// (within a few seconds); `None` when it connects.
    async fn connect_problem(client: &reqwest::Client, url: &str) -> Option<String> {
        let result = client
            .head(url)
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await;
        let e = result.err().filter(reqwest::Error::is_connect)?;
        let text = crate::error::causes_text(&e);
        Some(text.trim_start_matches(": ").to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_from_secrets() {
        let secrets = vec![
            ("KEY".to_string(), "v1".to_string()),
            ("E".to_string(), String::new()),
        ];
        assert_eq!(interpolate("a ${KEY} b ${env:KEY}", &secrets), "a v1 b v1");
        assert_eq!(interpolate("${MISSING}-${E}", &secrets), "${MISSING}-${E}");
        assert_eq!(interpolate("${unclosed", &secrets), "${unclosed");
    }
}
