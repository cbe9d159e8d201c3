//! [`McpError`]: why the MCP servers could not be started, or one server
//! not connected. Its `Display` is the text the user reads: the error of
//! [`McpClients::start`](crate::McpClients::start), or a server's `error` in
//! [`ServerStatus`](crate::ServerStatus) (where it becomes a string, its
//! credentials stripped).

use std::time::Duration;

/// Why starting the MCP servers, or connecting one of them, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The runtime the servers run on could not be built.
    #[error("cannot start the MCP runtime: {0}")]
    Runtime(std::io::Error),
    /// A stdio server's command could not be started.
    #[error("cannot start `{command}`: {error}")]
    Spawn {
        command: String,
        error: std::io::Error,
    },
    /// A stdio server exited before its process id could be read.
    #[error("the server exited at once")]
    ExitedAtOnce,
    /// A stdio server's stdin, stdout or stderr could not be opened.
    #[error("the server's pipes could not be opened")]
    Pipes,
    /// A stdio server did not complete `initialize`; `stderr` is the tail of
    /// what it wrote there (empty when nothing).
    #[error("initialize failed: {error}{}", stderr_text(stderr))]
    InitializeStdio {
        error: Box<rmcp::service::ClientInitializeError>,
        stderr: String,
    },
    /// An HTTP server did not complete `initialize`. The text names the
    /// causes of `error`, and `connecting`: why a request of our own could
    /// not connect, when that is what failed.
    #[error(
        "initialize failed: {error}{}{}",
        causes_text(&**error),
        connecting.as_ref().map_or_else(String::new, |why| format!(" (connecting: {why})"))
    )]
    InitializeHttp {
        error: Box<rmcp::service::ClientInitializeError>,
        connecting: Option<String>,
    },
    /// `tools/list` failed.
    #[error("tools/list failed: {0}")]
    ListTools(rmcp::ServiceError),
    /// Starting, `initialize` and `tools/list` took longer than the entry's
    /// `connect_timeout`.
    #[error("no answer within connect_timeout ({})", secs(*.0))]
    ConnectTimeout(Duration),
    /// The CA bundle `ssl_verify` names cannot be read.
    #[error("ssl_verify: cannot read the CA bundle {path}: {error}")]
    CaBundleRead { path: String, error: std::io::Error },
    /// The CA bundle `ssl_verify` names is not PEM.
    #[error("ssl_verify: {path} is no PEM CA bundle: {error}")]
    CaBundleNotPem { path: String, error: reqwest::Error },
    /// The CA bundle `ssl_verify` names holds no certificate.
    #[error("ssl_verify: {path} holds no certificate")]
    CaBundleEmpty { path: String },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(reqwest::Error),
    /// A name of the entry's `headers` is not a valid header name.
    #[error("header `{name}`: {error}")]
    HeaderName {
        name: String,
        error: http::header::InvalidHeaderName,
    },
    /// An `auth: oauth` server without a usable token: a connection never
    /// waits on a login, it says how to log in.
    #[error("needs login ({why}): run `hermes-tools mcp login {server}`")]
    NeedsLogin { server: String, why: String },
    /// The OAuth exchange with an `auth: oauth` server (or its
    /// authorization server) failed.
    #[error("OAuth: {error}")]
    OAuth { server: String, error: String },
    /// A value of the entry's `headers` is not a valid header value.
    #[error("header `{name}`: {error}")]
    HeaderValue {
        name: String,
        error: http::header::InvalidHeaderValue,
    },
}

/// A duration as the messages write it: `60s`, `1.5s`.
pub(crate) fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

/// The stderr tail as [`McpError::InitializeStdio`] ends.
fn stderr_text(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr: {stderr}")
    }
}

/// `: cause` for each source of `e`, outermost first.
pub(crate) fn causes_text(e: &dyn std::error::Error) -> String {
    let mut text = String::new();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        assert_eq!(
            McpError::ConnectTimeout(Duration::from_secs(60)).to_string(),
            "no answer within connect_timeout (60s)"
        );
        assert_eq!(
            McpError::ConnectTimeout(Duration::from_millis(1500)).to_string(),
            "no answer within connect_timeout (1.5s)"
        );
        assert_eq!(
            McpError::CaBundleEmpty {
                path: "/etc/ca.pem".into()
            }
            .to_string(),
            "ssl_verify: /etc/ca.pem holds no certificate"
        );
        assert_eq!(stderr_text(""), "");
        assert_eq!(stderr_text("boom"), "; its stderr: boom");
        let refused = std::io::Error::other("connection refused");
        assert_eq!(causes_text(&Wrapped(refused)), ": connection refused");
        assert_eq!(causes_text(&std::io::Error::other("alone")), "");
    }

    /// An error whose source is `.0`.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
}
