//! [`ServeError`]: why [`serve`](crate::serve) did not start, or stopped.

use crate::options::TOKEN_ENV;

/// Why [`serve`](crate::serve) did not start, or stopped: bad options, a failed start,
/// or a session that ended abnormally. `Display` is the message
/// `hermes-tools serve --mcp` prints after `error: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// `--toolsets` or `--disable` names toolsets the registry does not know.
    #[error("unknown toolset: {}", .0.join(", "))]
    UnknownToolsets(Vec<String>),
    /// Tools of the selection have no MCP form; one line per tool.
    #[error("{}", .0.join("\n"))]
    NoMcpForm(Vec<String>),
    /// The bearer token is blank.
    #[error(
        "the bearer token (--token or {TOKEN_ENV}) is blank: set a real token, \
         or unset it to serve on loopback without one"
    )]
    BlankToken,
    /// The `--http` address does not parse or resolve.
    #[error("invalid --http address `{addr}` (expected PORT or HOST:PORT): {error}")]
    InvalidAddress { addr: String, error: std::io::Error },
    /// The `--http` address resolves to no address.
    #[error("--http address `{addr}` resolves to nothing")]
    NoAddress { addr: String },
    /// A non-loopback `--http` address without a token.
    #[error(
        "refusing to serve on the non-loopback address `{addr}` without a token: \
         set {TOKEN_ENV} (or --token)"
    )]
    NoToken { addr: String },
    /// The async runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// A stop signal's handler could not be installed.
    #[error("cannot handle {signal}: {error}")]
    Signal {
        signal: &'static str,
        error: std::io::Error,
    },
    /// The stdio session did not start.
    #[error("MCP session over stdio failed to start: {0}")]
    StdioStart(Box<rmcp::service::ServerInitializeError>),
    /// The stdio session's task ended abnormally.
    #[error("MCP session over stdio ended abnormally: {0}")]
    StdioEnded(tokio::task::JoinError),
    /// `--stateless` with tools that keep state in their session; one
    /// `tool (toolset)` per entry.
    #[error(
        "--stateless serves only tools that keep no session state (their toolset says \
         `stateless = true`); these need their session's host: {}. Withhold them \
         (--disable) or serve with sessions",
        .0.join(", ")
    )]
    StatefulTools(Vec<String>),
    /// `--stateless` without `--http` (stdio is one session).
    #[error("--stateless applies to --http only (stdio is one session)")]
    StatelessStdio,
    /// The HTTP address cannot be listened on.
    #[error("cannot listen on {addr}: {error}")]
    Listen {
        addr: std::net::SocketAddr,
        error: std::io::Error,
    },
    /// The listening socket's address cannot be read.
    #[error("cannot read the listening address: {0}")]
    LocalAddress(std::io::Error),
}
