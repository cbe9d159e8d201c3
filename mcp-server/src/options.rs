//! What [`serve`](crate::serve) is asked to serve, and the limits one
//! client is held to.

use std::path::PathBuf;
use std::time::Duration;

use hermes_runtime::Profile;

/// The environment variable holding the bearer token of `--http`.
pub const TOKEN_ENV: &str = "HERMES_MCP_TOKEN";

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
    /// What one client may hold of the server.
    pub limits: Limits,
    /// With `http`: how long SIGTERM's drain waits for running calls
    /// (`--drain-grace`).
    pub drain_grace: Duration,
    /// With `http`: no sessions; every request is answered on its own, by
    /// any host (`--stateless`). Only for tools whose own toolset is
    /// declared stateless (`stateless = true` in `toolsets.toml`).
    pub stateless: bool,
}

impl ServeOptions {
    /// The default of `--drain-grace`, in seconds.
    pub const DEFAULT_DRAIN_GRACE_SECS: u64 = 30;
}

/// What one client may make the server hold. Every field has a `serve` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest incoming message: one line of stdin, one HTTP request body
    /// (`--max-message-bytes`).
    pub max_message_bytes: usize,
    /// HTTP connections open at once; more are answered 503 and closed
    /// (`--max-connections`).
    pub max_connections: usize,
    /// MCP sessions alive at once; another `initialize` is answered 503
    /// (`--max-sessions`).
    pub max_sessions: usize,
    /// A session with no request for this long (and none running) is closed
    /// (`--session-idle-timeout`).
    pub session_idle_timeout: Duration,
    /// A connection that has not sent a whole request head within this long,
    /// or pauses this long between two requests or within a request body, is
    /// closed (`--header-read-timeout`).
    pub header_read_timeout: Duration,
}

impl Limits {
    pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 4 * 1024 * 1024;
    pub const DEFAULT_MAX_CONNECTIONS: u64 = 256;
    pub const DEFAULT_MAX_SESSIONS: u64 = 500;
    pub const DEFAULT_SESSION_IDLE_SECS: u64 = 300;
    pub const DEFAULT_HEADER_READ_SECS: u64 = 30;
}
