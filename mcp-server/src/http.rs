//! MCP over streamable HTTP (rmcp's service on a bare hyper HTTP/1 server),
//! with the limits that keep clients from holding the server:
//!
//! - a connection cap: past [`Limits::max_connections`] a new connection is
//!   answered 503 at once and closed (never queued);
//! - a header-read timeout: a connection that has not sent a whole request
//!   head within [`Limits::header_read_timeout`] (or idles that long between
//!   requests) is closed, before any token check costs anything;
//! - a session cap with idle expiry ([`BoundedSessions`]): past
//!   [`Limits::max_sessions`] an `initialize` is answered 503; a session with
//!   no request running and none for [`Limits::session_idle_timeout`] is
//!   closed;
//! - the request body cap: [`Limits::max_message_bytes`] (rmcp answers 413),
//!   and a body that stops arriving for [`Limits::header_read_timeout`] ends
//!   its request and connection ([`IdleBody`]);
//! - accept failures (out of descriptors) logged at most once per
//!   [`LOG_EVERY`], with the count of those not shown.
//!
//! Behind a proxy: `GET /ready` ([`READY_PATH`], no token needed) answers
//! 200 while the server takes new sessions and 404 once it drains
//! ([`Drain`]: SIGTERM); draining, a request that would open a session is
//! answered 503, while the sessions it holds keep being served.

use std::cell::Cell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::Display;
use std::net::{SocketAddr, ToSocketAddrs};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_core::Stream;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::error::ServeError;
use crate::options::Limits;
use crate::server::HermesServer;

/// The path the streamable HTTP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// The readiness endpoint: 200 while the server takes new sessions, 404
/// while it drains (what HAProxy's `http-check disable-on-404` reads as
/// "no new sessions, keep the stuck ones").
pub const READY_PATH: &str = "/ready";

/// The least time between two log lines about the same kind of trouble.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The header a session's requests carry (HTTP names are case-insensitive).
const SESSION_HEADER: &str = "mcp-session-id";

/// The header naming the protocol revision a request speaks.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// The header naming a request's JSON-RPC method (SEP-2243, from 2026-07-28).
const METHOD_HEADER: &str = "mcp-method";

/// The first revision without sessions: each request carries its protocol
/// version, client info and capabilities in `_meta` (SEP-2575). Revisions
/// are dates, so they compare as text.
const SESSIONLESS_REVISION: &str = "2026-07-28";

/// The methods the sessionless revision removes: asked at that revision,
/// they are answered 404 with JSON-RPC -32601 (rmcp would route an
/// `initialize` to the session handshake whatever it names, and answer the
/// others -32602).
const REMOVED_METHODS: [&str; 4] = [
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// What a POST speaking the sessionless revision gets before rmcp sees it:
/// `None` to go on to rmcp; `Some(why)` for a -32601 answer.
///
/// A server that keeps state in its sessions (`terminal`, `todo`, ...; not
/// `--stateless`) answers every such request as a server of 2025-11-25 does
/// (`server/discover` is no method of it): a 2026-07-28 client that
/// negotiates falls back to `initialize` and gets a session whose state
/// lives as long as it does; served sessionless, each request would get a
/// fresh session (a new shell, its background processes ended with the
/// request).
fn sessionless_refusal(headers: &http::HeaderMap, keeps_state: bool) -> Option<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let method = header(METHOD_HEADER).unwrap_or("");
    // A revision is a date: `YYYY-MM-DD` (anything else is rmcp's to refuse).
    let revision = |v: &str| {
        v.len() == SESSIONLESS_REVISION.len() && v.bytes().all(|b| b.is_ascii_digit() || b == b'-')
    };
    let sessionless = header(VERSION_HEADER)
        .is_some_and(|v| revision(v) && v >= SESSIONLESS_REVISION)
        || method == "server/discover";
    if !sessionless {
        return None;
    }
    if REMOVED_METHODS.contains(&method) {
        return Some(format!(
            "Method not found: {method} (the {SESSIONLESS_REVISION} protocol has no such method)"
        ));
    }
    keeps_state.then(|| {
        format!(
            "Method not found: {method} (this server keeps state per session and speaks the \
             session protocol: 2025-11-25, from `initialize`)"
        )
    })
}

/// The 404 / JSON-RPC -32601 answer to `request`, with its id (the body is
/// read, at most `limit` bytes: a request refused does not reach rmcp).
async fn method_not_found<B>(
    request: http::Request<B>,
    why: String,
    limit: usize,
) -> http::Response<Body>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let id = match http_body_util::Limited::new(request.into_body(), limit)
        .collect()
        .await
    {
        Ok(body) => serde_json::from_slice::<serde_json::Value>(&body.to_bytes())
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(serde_json::Value::Null),
        Err(_) => serde_json::Value::Null,
    };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32601, "message": why},
    });
    let mut response = http::Response::new(Full::new(Bytes::from(answer.to_string())).boxed());
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// A token as configured: surrounding whitespace dropped (a header value
/// never carries it); a blank token is refused, as it would protect nothing.
pub(super) fn vet_token(token: &str) -> Result<String, ServeError> {
    let token = token.trim();
    if token.is_empty() {
        return Err(ServeError::BlankToken);
    }
    Ok(token.to_string())
}

/// `PORT` → `127.0.0.1:PORT`; `HOST:PORT` as given (names resolved). A
/// non-loopback address needs a token.
pub(super) fn address(addr: &str, has_token: bool) -> Result<SocketAddr, ServeError> {
    let resolved: Vec<SocketAddr> = if let Ok(port) = addr.parse::<u16>() {
        vec![SocketAddr::from(([127, 0, 0, 1], port))]
    } else {
        addr.to_socket_addrs()
            .map_err(|error| ServeError::InvalidAddress {
                addr: addr.to_owned(),
                error,
            })?
            .collect()
    };
    let Some(first) = resolved.first().copied() else {
        return Err(ServeError::NoAddress {
            addr: addr.to_owned(),
        });
    };
    if !has_token && resolved.iter().any(|a| !a.ip().is_loopback()) {
        return Err(ServeError::NoToken {
            addr: addr.to_owned(),
        });
    }
    Ok(first)
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: http::StatusCode, text: impl Into<Bytes>) -> http::Response<Body> {
    let mut response = http::Response::new(Full::new(text.into()).boxed());
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

/// A warning printed at most once per [`LOG_EVERY`]; the next line says how
/// many were held back.
struct RateLimitedLog {
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimitedLog {
    const fn new() -> Self {
        RateLimitedLog {
            last: None,
            suppressed: 0,
        }
    }

    fn warn(&mut self, what: impl Display) {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < LOG_EVERY)
        {
            self.suppressed += 1;
            return;
        }
        if self.suppressed > 0 {
            eprintln!(
                "warning: {what} ({} more like it not shown)",
                self.suppressed
            );
        } else {
            eprintln!("warning: {what}");
        }
        self.last = Some(now);
        self.suppressed = 0;
    }
}

pub(super) async fn serve(
    server: HermesServer,
    addr: SocketAddr,
    token: Option<String>,
    limits: Limits,
    drain: Arc<Drain>,
    stateless: bool,
) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| ServeError::Listen { addr, error })?;
    let local = listener.local_addr().map_err(ServeError::LocalAddress)?;
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(limits.max_message_bytes);
    if stateless {
        // No sessions: each POST is answered on its own, with a fresh
        // handler (`for_new_session`), as plain JSON when nothing else
        // comes before the answer.
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
    }
    if !local.ip().is_loopback() {
        // rmcp's default Host check (DNS rebinding) only admits loopback
        // names; off loopback every request must carry the token instead.
        config = config.disable_allowed_hosts();
    }
    let keeps_state = !server.stateful_tools().is_empty();
    let sessions = Arc::new(BoundedSessions::new(
        limits.max_sessions,
        limits.session_idle_timeout,
    ));
    tokio::spawn(expire_idle_sessions(Arc::clone(&sessions)));
    let mcp = StreamableHttpService::new(
        move || Ok(server.for_new_session()),
        Arc::clone(&sessions),
        config,
    );
    let token: Option<Arc<str>> = token.map(Arc::from);
    eprintln!(
        "hermes-tools: MCP over streamable HTTP at http://{local}{HTTP_PATH}{}{}",
        if stateless { " (stateless)" } else { "" },
        if token.is_some() {
            " (bearer token required)"
        } else {
            ""
        }
    );
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let connections = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let busy = busy_response(limits.max_connections);
    let mut accept_log = RateLimitedLog::new();
    let mut refuse_log = RateLimitedLog::new();
    let sessions_full = Bytes::from(sessions_full_message(&limits));
    let body_idle = limits.header_read_timeout;
    let body_limit = limits.max_message_bytes;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _peer)) => {
                // An answer goes out in several writes (head, events,
                // the last chunk): no Nagle delay between them.
                let _ = stream.set_nodelay(true);
                stream
            }
            Err(e) => {
                // Out of descriptors and the like: wait, keep serving.
                accept_log.warn(format_args!("accept failed: {e}"));
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            // Full: a fixed answer written without waiting, then closed.
            let _ = stream.try_write(&busy);
            refuse_log.warn(format_args!(
                "refusing connections: {} are open (--max-connections)",
                limits.max_connections
            ));
            continue;
        };
        let mcp = mcp.clone();
        let token = token.clone();
        let sessions = Arc::clone(&sessions);
        let sessions_full = sessions_full.clone();
        let http1 = http1.clone();
        let drain = Arc::clone(&drain);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let mcp = mcp.clone();
                    let token = token.clone();
                    let sessions = Arc::clone(&sessions);
                    let sessions_full = sessions_full.clone();
                    let drain = Arc::clone(&drain);
                    async move {
                        if request.uri().path() == READY_PATH {
                            return Ok::<_, Infallible>(drain.readiness());
                        }
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
                        let request = request.map(|body| IdleBody::new(body, body_idle));
                        if request.method() != http::Method::POST {
                            return Ok(mcp.handle(request).await);
                        }
                        if let Some(why) = sessionless_refusal(request.headers(), keeps_state) {
                            return Ok(method_not_found(request, why, body_limit).await);
                        }
                        // A POST is a call (or its answer) until its
                        // response ends: what a drain waits for.
                        let in_flight = drain.start();
                        // A POST without a session opens one (an
                        // `initialize`): refused while draining; else it
                        // takes a session slot here, or is refused with a
                        // clear answer when none is free.
                        if !request.headers().contains_key(SESSION_HEADER) {
                            if drain.is_draining() {
                                return Ok(draining_response());
                            }
                            if stateless {
                                // Answered on its own: no session to hold.
                                return Ok(in_flight.hold(mcp.handle(request).await));
                            }
                            let Some(slot) = sessions.reserve() else {
                                let mut response = plain(
                                    http::StatusCode::SERVICE_UNAVAILABLE,
                                    sessions_full.clone(),
                                );
                                response.headers_mut().insert(
                                    http::header::RETRY_AFTER,
                                    http::HeaderValue::from_static("5"),
                                );
                                return Ok(response);
                            };
                            let handled =
                                RESERVED.scope(Cell::new(Some(slot)), mcp.handle(request));
                            return Ok(in_flight.hold(handled.await));
                        }
                        Ok(in_flight.hold(mcp.handle(request).await))
                    }
                });
            // A connection's own failure (reset, bad request, header
            // timeout) ends only that connection.
            let _ = http1.serve_connection(TokioIo::new(stream), service).await;
            drop(permit);
        });
    }
}

/// The drain SIGTERM starts: readiness turns to 404, requests that would
/// open a session are refused (503, so a proxy retries them on another
/// host), and the POSTs in flight are counted so the server can exit once
/// they have answered.
#[derive(Debug, Default)]
pub(super) struct Drain {
    draining: AtomicBool,
    in_flight: Arc<AtomicUsize>,
}

impl Drain {
    /// Stops taking new sessions.
    pub(super) fn begin(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// POSTs whose response has not ended.
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Resolves once no POST is in flight, or after `grace`; says which.
    pub(super) async fn settled(&self, grace: Duration) -> bool {
        let until = Instant::now() + grace;
        // Polled: bounded by `grace`, and cheap at this period.
        while self.in_flight() > 0 {
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }

    fn start(&self) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(&self.in_flight))
    }

    fn readiness(&self) -> http::Response<Body> {
        if self.is_draining() {
            plain(http::StatusCode::NOT_FOUND, "draining\n")
        } else {
            plain(http::StatusCode::OK, "ready\n")
        }
    }
}

/// One POST counted by [`Drain`] until dropped.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl InFlight {
    /// The response, counted until its body ends or is dropped.
    fn hold(self, response: http::Response<Body>) -> http::Response<Body> {
        response.map(|inner| {
            Counted {
                inner,
                _in_flight: self,
            }
            .boxed()
        })
    }
}

/// A response body that keeps its request counted as in flight.
struct Counted {
    inner: Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Counted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The answer to a request that would open a session on a draining server.
fn draining_response() -> http::Response<Body> {
    let mut response = plain(
        http::StatusCode::SERVICE_UNAVAILABLE,
        "this server is draining (SIGTERM) and takes no new session; retry on another \
         host (a proxy does)\n",
    );
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    response
}

/// A request body that fails once no byte of it has arrived for `idle`: a
/// client that sends its headers and then trickles (or withholds) the body
/// does not hold its connection for ever.
struct IdleBody {
    inner: hyper::body::Incoming,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl IdleBody {
    fn new(inner: hyper::body::Incoming, idle: Duration) -> Self {
        IdleBody {
            inner,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
        }
    }
}

impl hyper::body::Body for IdleBody {
    type Data = Bytes;
    type Error = String;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, String>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + self.idle;
                self.deadline.as_mut().reset(next);
                Poll::Ready(frame.map(|f| f.map_err(|e| e.to_string())))
            }
            Poll::Pending => match std::future::Future::poll(self.deadline.as_mut(), cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(format!(
                    "no byte of the request body for {} s (--header-read-timeout)",
                    self.idle.as_secs()
                )))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The whole answer to a connection over the cap.
fn busy_response(max: usize) -> Vec<u8> {
    let body = format!(
        "too many connections: the server holds its maximum of {max} (--max-connections); \
         retry shortly\n"
    );
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn sessions_full_message(limits: &Limits) -> String {
    format!(
        "too many MCP sessions: the server holds its maximum of {} (--max-sessions); \
         close one (HTTP DELETE with its Mcp-Session-Id) or retry once idle ones expire \
         (after {} s without a request, --session-idle-timeout)\n",
        limits.max_sessions,
        limits.session_idle_timeout.as_secs()
    )
}

/// Closes, every so often, the sessions idle past the timeout.
async fn expire_idle_sessions(sessions: Arc<BoundedSessions>) {
    let period = (sessions.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
    loop {
        tokio::time::sleep(period).await;
        for id in sessions.idle_sessions() {
            // Closing an already closed session is fine.
            let _ = sessions.close_session(&id).await;
        }
    }
}

tokio::task_local! {
    /// The session slot an `initialize` took before rmcp handles it, for
    /// [`BoundedSessions::create_session`] to fill (rmcp calls it inline,
    /// in the same task).
    static RESERVED: Cell<Option<SessionSlot>>;
}

/// A place among the `max_sessions`, held while a session is being created;
/// given back on drop.
struct SessionSlot {
    state: Arc<Mutex<SessionTable>>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let mut table = lock(&self.state);
        table.creating = table.creating.saturating_sub(1);
    }
}

/// rmcp's in-memory sessions, counted and capped, with idle expiry that
/// knows about running requests (rmcp's own keep-alive would close a session
/// in the middle of a long tool call, so it is turned off).
pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    idle: Duration,
    state: Arc<Mutex<SessionTable>>,
}

#[derive(Default)]
struct SessionTable {
    sessions: HashMap<SessionId, Activity>,
    /// Sessions being created (counted against the cap already).
    creating: usize,
}

struct Activity {
    last: Instant,
    /// Requests of this session whose answer is still streaming.
    running: usize,
}

fn lock(state: &Mutex<SessionTable>) -> MutexGuard<'_, SessionTable> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug)]
pub(super) enum SessionError {
    Full(usize),
    Local(LocalSessionManagerError),
}

impl Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Full(max) => write!(
                f,
                "too many MCP sessions: the server holds its maximum of {max} (--max-sessions)"
            ),
            SessionError::Local(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionError {}

impl From<LocalSessionManagerError> for SessionError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionError::Local(e)
    }
}

impl BoundedSessions {
    fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = None;
        BoundedSessions {
            inner,
            max,
            idle,
            state: Arc::default(),
        }
    }

    /// A slot for a new session, unless every one is taken.
    fn reserve(&self) -> Option<SessionSlot> {
        let mut table = lock(&self.state);
        if table.sessions.len() + table.creating >= self.max {
            return None;
        }
        table.creating += 1;
        Some(SessionSlot {
            state: Arc::clone(&self.state),
        })
    }

    /// Marks activity on a session (no-op for an unknown id).
    fn touch(&self, id: &SessionId) {
        if let Some(activity) = lock(&self.state).sessions.get_mut(id) {
            activity.last = Instant::now();
        }
    }

    /// Sessions with nothing running and no request for the idle timeout.
    fn idle_sessions(&self) -> Vec<SessionId> {
        let now = Instant::now();
        lock(&self.state)
            .sessions
            .iter()
            .filter(|(_, a)| a.running == 0 && now.duration_since(a.last) >= self.idle)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Counts a request as running until the returned guard is dropped.
    fn start_request(&self, id: &SessionId) -> RunningRequest {
        if let Some(activity) = lock(&self.state).sessions.get_mut(id) {
            activity.running += 1;
            activity.last = Instant::now();
        }
        RunningRequest {
            state: Arc::clone(&self.state),
            id: id.clone(),
        }
    }
}

/// A request whose answer is streaming; dropped when the stream ends or the
/// client goes away.
struct RunningRequest {
    state: Arc<Mutex<SessionTable>>,
    id: SessionId,
}

impl Drop for RunningRequest {
    fn drop(&mut self) {
        if let Some(activity) = lock(&self.state).sessions.get_mut(&self.id) {
            activity.running = activity.running.saturating_sub(1);
            activity.last = Instant::now();
        }
    }
}

/// A response stream that keeps its session counted as busy.
struct Tracked<S> {
    inner: Pin<Box<S>>,
    _running: RunningRequest,
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The slot the HTTP layer took for this request, else one now.
        let slot = RESERVED.try_with(Cell::take).ok().flatten();
        let Some(slot) = slot.or_else(|| self.reserve()) else {
            return Err(SessionError::Full(self.max));
        };
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.state).sessions.insert(
            id.clone(),
            Activity {
                last: Instant::now(),
                running: 0,
            },
        );
        drop(slot);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _running = self.start_request(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.touch(id);
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        lock(&self.state).sessions.remove(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let running = self.start_request(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(Tracked {
            inner: Box::pin(stream),
            _running: running,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option errors `serve --mcp` prints after `error: `, exactly.
    #[test]
    fn option_errors_say_what_they_said() {
        assert_eq!(
            vet_token("  ").unwrap_err().to_string(),
            "the bearer token (--token or HERMES_MCP_TOKEN) is blank: set a real token, \
             or unset it to serve on loopback without one"
        );
        assert_eq!(vet_token(" t0k ").ok().as_deref(), Some("t0k"));
        let open = address("0.0.0.0:8080", false);
        assert!(matches!(&open, Err(ServeError::NoToken { addr }) if addr == "0.0.0.0:8080"));
        assert_eq!(
            open.map_err(|e| e.to_string()),
            Err(
                "refusing to serve on the non-loopback address `0.0.0.0:8080` without a \
                 token: set HERMES_MCP_TOKEN (or --token)"
                    .to_string()
            )
        );
        assert_eq!(
            address("8080", false).ok(),
            Some(SocketAddr::from(([127, 0, 0, 1], 8080)))
        );
        assert_eq!(
            address("0.0.0.0:8080", true).ok(),
            Some(SocketAddr::from(([0, 0, 0, 0], 8080)))
        );
    }
}
