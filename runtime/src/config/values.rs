//! The values settings are read into, and where each came from: what
//! the tables (`mod.rs`) declare and the readers (`load.rs`) produce.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use super::yaml::Pos;

/// The file's name in the profile's home.
pub const FILE_NAME: &str = "config.yaml";

/// A larger `config.yaml` is not read (the reference's full default file
/// is about 40 KiB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    Default,
    /// `config.yaml`, at this position.
    File(Pos),
    /// The profile's `.env`, under this name.
    Env(&'static str),
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(pos) => write!(f, "config.yaml:{}:{}", pos.line, pos.col),
            Source::Env(name) => write!(f, ".env {name}"),
            Source::Flag(name) => write!(f, "flag {name}"),
        }
    }
}

/// One value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Setting<T> {
    pub fn default(value: T) -> Self {
        Setting {
            value,
            source: Source::Default,
        }
    }

    /// Whether the value was set anywhere (not the default).
    pub fn is_set(&self) -> bool {
        self.source != Source::Default
    }
}

/// Error or warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A problem found in the file: where, which key, what.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The key's path (`platform_toolsets.cli[2]`); empty for the whole file.
    pub key: String,
    pub pos: Option<Pos>,
    pub message: String,
}

impl Diagnostic {
    /// `FILE:LINE:COL: error: KEY: MESSAGE`.
    pub fn render(&self, file: &Path) -> String {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let at = match self.pos {
            Some(p) => format!("{}:{}:{}", file.display(), p.line, p.col),
            None => file.display().to_string(),
        };
        if self.key.is_empty() {
            format!("{at}: {level}: {}", self.message)
        } else {
            format!("{at}: {level}: {}: {}", self.key, self.message)
        }
    }
}

/// A toolset name as the file writes it (in `toolsets`,
/// `platform_toolsets.NAME` or `agent.disabled_toolsets`), kept for
/// [`ProfileConfig::check_toolset_names`](super::ProfileConfig::check_toolset_names): the toolset table is the
/// registry's, which reading the file does not know.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsetMention {
    /// The item's key path (`platform_toolsets.cli[2]`).
    pub key: String,
    pub name: String,
    pub pos: Pos,
}

/// `tools.tool_search.enabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSearchMode {
    /// Defer when the program turned disclosure on and the deferrable
    /// schemas exceed `threshold_pct` of its context window.
    Auto,
    /// Defer whenever there is a deferrable tool.
    On,
    /// Never defer.
    Off,
}

/// `terminal.sandbox`: what a command may write (docs/terminal.md#sandbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// Nothing but the devices every program writes (`/dev/null`, the terminal).
    ReadOnly,
    /// The workspace, the temporary folder and the configured roots;
    /// protected paths never.
    WorkspaceWrite,
    /// No sandbox (explicit opt-in; codex's `danger-full-access`).
    Full,
}

impl SandboxMode {
    /// The name `config.yaml` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Full => "full",
        }
    }
}

/// `terminal.sandbox_network`: what a sandboxed command may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxNetwork {
    /// Unix sockets only.
    Off,
    /// A network of its own with only a loopback interface.
    Loopback,
    /// The machine's network.
    On,
}

impl SandboxNetwork {
    /// The name `config.yaml` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxNetwork::Off => "off",
            SandboxNetwork::Loopback => "loopback",
            SandboxNetwork::On => "on",
        }
    }
}

/// `terminal.sandbox_fallback`: a sandboxed mode on a kernel without Landlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxFallback {
    /// The command is refused with the reason (the default).
    Refuse,
    /// The command runs without the sandbox, with a note.
    Unsandboxed,
}

impl SandboxFallback {
    /// The name `config.yaml` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxFallback::Refuse => "refuse",
            SandboxFallback::Unsandboxed => "unsandboxed",
        }
    }
}

/// `code_execution.mode`: where an `execute_code` script runs and with
/// which `python3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeExecutionMode {
    /// In the session's working directory, with the session's active
    /// virtual environment's interpreter (`VIRTUAL_ENV`, else
    /// `CONDA_PREFIX`), else the `python3` its `PATH` finds: the default.
    Project,
    /// In a scratch folder of the execution, with the system's `python3`
    /// (found on the clean base `PATH`, whatever the session activated).
    Strict,
}

impl CodeExecutionMode {
    /// The name `config.yaml` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeExecutionMode::Project => "project",
            CodeExecutionMode::Strict => "strict",
        }
    }
}

/// `approvals.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    Manual,
    Smart,
    Off,
}

/// `approvals.cron_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CronMode {
    Deny,
    Approve,
}

/// How an MCP server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One `mcp_servers` entry (parsed and validated here, for the MCP client).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpServer {
    pub transport: McpTransport,
    pub enabled: bool,
    /// Seconds per call.
    pub timeout: Option<f64>,
    /// Seconds to connect.
    pub connect_timeout: Option<f64>,
    /// Seconds between keepalive pings (`keepalive_interval`).
    pub keepalive_interval: Option<f64>,
    /// A stdio server's working directory (`cwd`).
    pub cwd: Option<String>,
    /// `tools.include` / `tools.exclude`: which of its tools to offer.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// How an `https://` server's certificate is checked (`ssl_verify`).
    pub ssl_verify: SslVerify,
    /// `supports_parallel_tool_calls` (the reference's key): its tools'
    /// calls may run beside others even when the server does not say they
    /// are read-only (`ToolEffects::from_mcp_hints`).
    pub parallel: bool,
    /// `max_tools`: the most tools of its listing offered (the rest cut
    /// with a note); the MCP client's default when unset.
    pub max_tools: Option<usize>,
    /// `sampling`: whether and within what limits the server may ask the
    /// agent's model (`sampling/createMessage`).
    pub sampling: McpSampling,
    /// `elicitation`: whether the server may ask the user
    /// (`elicitation/create`).
    pub elicitation: McpElicitation,
    /// `auth: oauth` with its `oauth:` fields (an HTTP server only);
    /// `None` without `auth: oauth`.
    pub oauth: Option<McpOAuth>,
    pub pos: Pos,
}

/// `sampling` of an MCP server entry (the reference's keys). The
/// defaults are the reference's: on, 10 requests a minute, 4096 tokens.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpSampling {
    /// `enabled` (default true): offered at all (and advertised at
    /// `initialize` when the agent installed a sampling callback).
    pub enabled: bool,
    /// `model`: the model asked, whatever the server prefers.
    pub model: Option<String>,
    /// `max_tokens_cap`: the server's `maxTokens` is lowered to this.
    pub max_tokens_cap: u32,
    /// `timeout`: seconds one request to the model may take.
    pub timeout: f64,
    /// `max_rpm`: requests accepted in any 60 seconds; more are refused.
    pub max_rpm: u32,
    /// `allowed_models`: the models the server may have (empty: any).
    pub allowed_models: Vec<String>,
    /// `max_tool_rounds`: tool-use answers in a row (0: none at all).
    pub max_tool_rounds: u32,
}

impl Default for McpSampling {
    fn default() -> Self {
        McpSampling {
            enabled: true,
            model: None,
            max_tokens_cap: 4096,
            timeout: 30.0,
            max_rpm: 10,
            allowed_models: Vec::new(),
            max_tool_rounds: 5,
        }
    }
}

/// `elicitation` of an MCP server entry (the reference's keys).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpElicitation {
    /// `enabled` (default true): offered at all (and advertised at
    /// `initialize` when the agent installed an elicitation callback).
    pub enabled: bool,
    /// `timeout`: seconds the user has to answer (default 300); then the
    /// server gets `cancel`.
    pub timeout: f64,
}

impl Default for McpElicitation {
    fn default() -> Self {
        McpElicitation {
            enabled: true,
            timeout: 300.0,
        }
    }
}

/// The `oauth:` fields of an `auth: oauth` server, all optional, as the
/// reference names them; `${VAR}` in the texts is filled from `.env` and
/// the environment when the server is used, as `headers` are.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct McpOAuth {
    /// A pre-registered client (`client_id`): no registration.
    pub client_id: Option<String>,
    /// Its secret (`client_secret`), for a confidential client.
    pub client_secret: Option<String>,
    /// The scopes to ask for (`scope`, space-separated); the server's
    /// choice (its challenge, then its metadata) when unset.
    pub scope: Option<String>,
    /// The loopback port the login listens on (`redirect_port`; 0 = any
    /// free port).
    pub redirect_port: u16,
    /// The redirect URI registered with the server (`redirect_uri`),
    /// instead of `http://{redirect_host}:{port}/callback`.
    pub redirect_uri: Option<String>,
    /// The host name in the loopback redirect URI (`redirect_host`,
    /// default `127.0.0.1`); the listener is on 127.0.0.1 either way.
    pub redirect_host: Option<String>,
    /// The name given at dynamic registration (`client_name`).
    pub client_name: Option<String>,
    /// The HTTPS URL of this client's metadata document
    /// (`client_metadata_url`), used as its client ID where the server
    /// supports client ID metadata documents.
    pub client_metadata_url: Option<String>,
    /// Seconds `mcp login` waits for the browser step (`timeout`).
    pub timeout: Option<f64>,
}

/// `ssl_verify` of an MCP server, as the reference reads it: `true` (the
/// system's roots), `false` (no check), or the path of a CA bundle (PEM)
/// trusted instead of the system's roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SslVerify {
    #[default]
    SystemRoots,
    Off,
    CaFile(String),
}
