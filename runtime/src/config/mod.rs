//! The profile's `config.yaml`: the reference's keys and meanings, read
//! into typed settings with defaults (see `docs/config.md` for every key).
//!
//! [`Profile::config`] reads `<home>/config.yaml` at call time, cached per
//! profile and read again when the file (or the profile's `.env`, which
//! overrides some keys) changes: its inode, size or modification time. One
//! process serves many profiles, each with its own settings.
//!
//! Precedence, for a value set in several places: a flag (or a tool
//! call's own argument) > the profile's `.env` > `config.yaml` > the
//! default. Every [`Setting`] says where its value came from.
//!
//! Nothing here fails: a file that cannot be read or parsed, a wrong type,
//! a value out of range each become a [`Diagnostic`] and leave that one
//! value at its default; the rest loads. Keys of the reference this
//! project does not use are ignored quietly; keys neither knows are
//! warnings with a did-you-mean.

mod known;
mod load;
pub mod yaml;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::Profile;

pub use yaml::Pos;

/// The file's name in the profile's home.
pub const FILE_NAME: &str = "config.yaml";
/// A larger `config.yaml` is not read (the reference's full default file
/// is about 40 KiB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The smallest result cap `tool_output.max_result_chars` may set.
pub const MIN_RESULT_CHARS: usize = 1_024;

/// `.env` keys that override `config.yaml` (kept from before the file was read).
pub mod env {
    /// `terminal.daemon_term_grace_seconds`.
    pub const KILL_GRACE_SECONDS: &str = "TERMINAL_KILL_GRACE_SECONDS";
    /// `security.allow_private_urls`: `1`, `true`, `yes` or `on`.
    pub const ALLOW_PRIVATE_URLS: &str = "HERMES_ALLOW_PRIVATE_URLS";
}

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
/// [`ProfileConfig::check_toolset_names`]: the toolset table is the
/// registry's, which reading the file does not know.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsetMention {
    /// The item's key path (`platform_toolsets.cli[2]`).
    pub key: String,
    pub name: String,
    pub pos: Pos,
}

/// `tool_output`: how much of a tool's output the model sees.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// `terminal` output kept, in bytes (head and tail around the cut).
    pub max_bytes: Setting<usize>,
    /// The most lines one `read_file` call returns.
    pub max_lines: Setting<usize>,
    /// Longer lines of `read_file` are cut, in characters.
    pub max_line_length: Setting<usize>,
    /// This project's: every tool result's cap, in characters (`None`: the
    /// program's `DispatchConfig`). Lowers a tool's own cap, never raises it.
    pub max_result_chars: Setting<Option<usize>>,
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

/// `tools.tool_search`: progressive disclosure.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolSearch {
    pub enabled: Setting<ToolSearchMode>,
    /// Share of the context window (0–100) past which `auto` defers.
    pub threshold_pct: Setting<u8>,
    /// Hits `tool_search` returns when the model gives no `limit`.
    pub search_default_limit: Setting<usize>,
    /// The largest `limit` the model may ask for.
    pub max_search_limit: Setting<usize>,
}

/// `terminal`: the settings of the local backend this project has.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Terminal {
    /// A foreground command's timeout when the call gives none, in seconds.
    pub timeout: Setting<u64>,
    /// The directory commands run in when the call names none; `None`
    /// (the default, `.`): the session's working directory.
    pub cwd: Setting<Option<PathBuf>>,
    /// Between SIGTERM and SIGKILL when a process tree is torn down, in
    /// seconds (at most 60).
    pub daemon_term_grace_seconds: Setting<f64>,
    /// Variables of the agent's own environment passed to commands.
    pub env_passthrough: Setting<Vec<String>>,
    /// `terminal.sandbox`: what commands may write.
    pub sandbox: Setting<SandboxMode>,
    /// `terminal.sandbox_network`: what commands may reach.
    pub sandbox_network: Setting<SandboxNetwork>,
    /// `terminal.sandbox_writable_roots`: folders writable beside the
    /// working directory and the temporary folder (`workspace-write`).
    pub sandbox_writable_roots: Setting<Vec<PathBuf>>,
    /// `terminal.sandbox_fallback`: what a sandboxed mode does on a kernel
    /// without Landlock.
    pub sandbox_fallback: Setting<SandboxFallback>,
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

/// `security.website_blocklist`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WebsiteBlocklist {
    pub enabled: Setting<bool>,
    /// Host rules: `example.com` (and its subdomains) or `*.example.com`.
    pub domains: Setting<Vec<String>>,
    /// Files of more rules, one a line (`#` comments); relative to the home.
    pub shared_files: Setting<Vec<PathBuf>>,
}

/// `security`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Security {
    /// Let web tools reach loopback and private addresses.
    pub allow_private_urls: Setting<bool>,
    /// Redact secrets from tool output.
    pub redact_secrets: Setting<bool>,
    pub website_blocklist: WebsiteBlocklist,
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

/// `approvals`: honoured by `crate::approval` (and the terminal's command
/// check), read at every question.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Approvals {
    pub mode: Setting<ApprovalMode>,
    /// Seconds to wait for the user's answer.
    pub timeout: Setting<u64>,
    pub cron_mode: Setting<CronMode>,
    /// Glob patterns of commands always refused (case-insensitive).
    pub deny: Setting<Vec<String>>,
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
    pub pos: Pos,
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

/// The settings of one profile.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProfileConfig {
    pub path: PathBuf,
    /// Whether the file exists.
    pub present: bool,
    /// `toolsets`: the default toolsets when no platform is named.
    pub toolsets: Setting<Option<Vec<String>>>,
    /// `platform_toolsets`: the toolsets of each platform.
    pub platform_toolsets: BTreeMap<String, Setting<Vec<String>>>,
    /// `agent.disabled_toolsets`: withheld on every platform (the rest of
    /// the reference's `agent` section is the agent loop's).
    pub disabled_toolsets: Setting<Vec<String>>,
    pub tool_output: ToolOutput,
    pub tool_search: ToolSearch,
    pub terminal: Terminal,
    pub security: Security,
    pub approvals: Approvals,
    /// Rule keys and commands the user approved for good (`crate::approval`).
    pub command_allowlist: Setting<Vec<String>>,
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Every toolset name the file writes, where it writes it.
    pub toolset_mentions: Vec<ToolsetMention>,
    pub diagnostics: Vec<Diagnostic>,
    /// Problems past the bound on `diagnostics`: how many, and whether an
    /// error is among them.
    dropped: (usize, bool),
    /// Different for every load: definitions memoised under one load are
    /// not reused under another.
    pub stamp: u64,
}

impl ProfileConfig {
    /// Every setting at its default, for a profile whose file is at `path`.
    pub fn defaults(path: PathBuf) -> Self {
        static STAMP: AtomicU64 = AtomicU64::new(1);
        ProfileConfig {
            path,
            present: false,
            toolsets: Setting::default(None),
            platform_toolsets: BTreeMap::new(),
            toolset_mentions: Vec::new(),
            dropped: (0, false),
            disabled_toolsets: Setting::default(Vec::new()),
            tool_output: ToolOutput {
                max_bytes: Setting::default(50_000),
                max_lines: Setting::default(2_000),
                max_line_length: Setting::default(2_000),
                max_result_chars: Setting::default(None),
            },
            tool_search: ToolSearch {
                enabled: Setting::default(ToolSearchMode::Auto),
                threshold_pct: Setting::default(10),
                search_default_limit: Setting::default(5),
                max_search_limit: Setting::default(20),
            },
            terminal: Terminal {
                timeout: Setting::default(180),
                cwd: Setting::default(None),
                daemon_term_grace_seconds: Setting::default(2.0),
                env_passthrough: Setting::default(Vec::new()),
                sandbox: Setting::default(SandboxMode::WorkspaceWrite),
                sandbox_network: Setting::default(SandboxNetwork::On),
                sandbox_writable_roots: Setting::default(Vec::new()),
                sandbox_fallback: Setting::default(SandboxFallback::Refuse),
            },
            security: Security {
                allow_private_urls: Setting::default(false),
                redact_secrets: Setting::default(true),
                website_blocklist: WebsiteBlocklist {
                    enabled: Setting::default(false),
                    domains: Setting::default(Vec::new()),
                    shared_files: Setting::default(Vec::new()),
                },
            },
            approvals: Approvals {
                mode: Setting::default(ApprovalMode::Smart),
                timeout: Setting::default(60),
                cron_mode: Setting::default(CronMode::Deny),
                deny: Setting::default(Vec::new()),
            },
            command_allowlist: Setting::default(Vec::new()),
            mcp_servers: BTreeMap::new(),
            diagnostics: Vec::new(),
            stamp: STAMP.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Reads the settings of `profile` now (no cache): `config.yaml`, then
    /// the `.env` keys that override it.
    pub fn load(profile: &Profile) -> Self {
        load::load(profile)
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// Adds an error diagnostic for each toolset name the file writes that
    /// `known` does not know and that is not left out of a platform's list
    /// ([`ProfileConfig::names_mcp_server`]), with near names from
    /// `candidates` (within the bound on diagnostics).
    /// `hermes-tools config check` runs it with the registry's answer, the
    /// one `schema` and `serve` refuse a name by.
    pub fn check_toolset_names<'c>(
        &mut self,
        known: impl Fn(&str) -> bool,
        candidates: impl IntoIterator<Item = &'c str> + Clone,
    ) {
        load::check_toolset_names(self, known, candidates);
    }

    /// Whether a toolset list's `name` is the reference's word for an MCP
    /// server (a configured server's name, or `no_mcp`), which
    /// [`ProfileConfig::platform_toolsets`] leaves out.
    pub fn names_mcp_server(&self, name: &str) -> bool {
        name == "no_mcp" || self.mcp_servers.contains_key(name)
    }

    /// The toolsets of `platform`: `platform_toolsets.NAME` when the file
    /// sets it, else the platform's bundle `hermes-NAME` (`_` written `-`),
    /// as the reference defaults. MCP server names and the reference's
    /// `no_mcp` are left out ([`ProfileConfig::names_mcp_server`]): a
    /// server's tools are in toolset `mcp-<server>`, offered when the list
    /// names that.
    pub fn platform_toolsets(&self, platform: &str) -> Setting<Vec<String>> {
        match self.platform_toolsets.get(platform) {
            Some(set) => Setting {
                value: set
                    .value
                    .iter()
                    .filter(|t| !self.names_mcp_server(t))
                    .cloned()
                    .collect(),
                source: set.source.clone(),
            },
            None => Setting::default(vec![format!(
                "{}{}",
                hermes_tool_facts::BUNDLE_PREFIX,
                platform.replace('_', "-")
            )]),
        }
    }

    /// The toolsets a front end (`schema`, `serve`) offers: the flag's,
    /// else the platform's (see [`ProfileConfig::platform_toolsets`]), else
    /// the file's `toolsets`; `None` when none of them says (the front end's
    /// own default then applies).
    pub fn select_toolsets(
        &self,
        flag: Option<Vec<String>>,
        platform: Option<&str>,
    ) -> Option<Setting<Vec<String>>> {
        if let Some(names) = flag {
            return Some(Setting {
                value: names,
                source: Source::Flag("--toolsets"),
            });
        }
        if let Some(platform) = platform {
            return Some(self.platform_toolsets(platform));
        }
        let t = &self.toolsets;
        t.value.clone().map(|value| Setting {
            value,
            source: t.source.clone(),
        })
    }

    /// Every setting as `(key, value, source)`, in file order of sections,
    /// for `hermes-tools config show`.
    pub fn entries(&self) -> Vec<(String, String, Source)> {
        fn list<T: fmt::Display>(items: &[T]) -> String {
            let shown: Vec<String> = items.iter().map(ToString::to_string).collect();
            format!("[{}]", shown.join(", "))
        }
        fn shown<T: fmt::Display>(s: &Setting<T>) -> (String, &Source) {
            (s.value.to_string(), &s.source)
        }
        fn listed<T: fmt::Display>(s: &Setting<Vec<T>>) -> (String, &Source) {
            (list(&s.value), &s.source)
        }
        let mut out = Vec::new();
        let mut put = |key: &str, (value, source): (String, &Source)| {
            out.push((key.to_string(), value, source.clone()));
        };
        let t = &self.toolsets;
        put(
            "toolsets",
            (t.value.as_deref().map_or("(unset)".into(), list), &t.source),
        );
        for (name, set) in &self.platform_toolsets {
            put(&format!("platform_toolsets.{name}"), listed(set));
        }
        put("agent.disabled_toolsets", listed(&self.disabled_toolsets));
        let o = &self.tool_output;
        put("tool_output.max_bytes", shown(&o.max_bytes));
        put("tool_output.max_lines", shown(&o.max_lines));
        put("tool_output.max_line_length", shown(&o.max_line_length));
        put(
            "tool_output.max_result_chars",
            (
                o.max_result_chars
                    .value
                    .map_or("(the program's, 100000 unless it says)".into(), |v| {
                        v.to_string()
                    }),
                &o.max_result_chars.source,
            ),
        );
        let s = &self.tool_search;
        let mode = match s.enabled.value {
            ToolSearchMode::Auto => "auto",
            ToolSearchMode::On => "on",
            ToolSearchMode::Off => "off",
        };
        put(
            "tools.tool_search.enabled",
            (mode.into(), &s.enabled.source),
        );
        put("tools.tool_search.threshold_pct", shown(&s.threshold_pct));
        put(
            "tools.tool_search.search_default_limit",
            shown(&s.search_default_limit),
        );
        put(
            "tools.tool_search.max_search_limit",
            shown(&s.max_search_limit),
        );
        let term = &self.terminal;
        put("terminal.timeout", shown(&term.timeout));
        put(
            "terminal.cwd",
            (
                term.cwd
                    .value
                    .as_ref()
                    .map_or("(the session's)".into(), |p| p.display().to_string()),
                &term.cwd.source,
            ),
        );
        put(
            "terminal.daemon_term_grace_seconds",
            shown(&term.daemon_term_grace_seconds),
        );
        put("terminal.env_passthrough", listed(&term.env_passthrough));
        put(
            "terminal.sandbox",
            (term.sandbox.value.as_str().into(), &term.sandbox.source),
        );
        put(
            "terminal.sandbox_network",
            (
                term.sandbox_network.value.as_str().into(),
                &term.sandbox_network.source,
            ),
        );
        let roots: Vec<String> = term
            .sandbox_writable_roots
            .value
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        put(
            "terminal.sandbox_writable_roots",
            (
                format!("[{}]", roots.join(", ")),
                &term.sandbox_writable_roots.source,
            ),
        );
        put(
            "terminal.sandbox_fallback",
            (
                term.sandbox_fallback.value.as_str().into(),
                &term.sandbox_fallback.source,
            ),
        );
        let sec = &self.security;
        put(
            "security.allow_private_urls",
            shown(&sec.allow_private_urls),
        );
        put("security.redact_secrets", shown(&sec.redact_secrets));
        let wb = &sec.website_blocklist;
        put("security.website_blocklist.enabled", shown(&wb.enabled));
        put("security.website_blocklist.domains", listed(&wb.domains));
        let files: Vec<String> = wb
            .shared_files
            .value
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        put(
            "security.website_blocklist.shared_files",
            (list(&files), &wb.shared_files.source),
        );
        let a = &self.approvals;
        let mode = match a.mode.value {
            ApprovalMode::Manual => "manual",
            ApprovalMode::Smart => "smart",
            ApprovalMode::Off => "off",
        };
        put("approvals.mode", (mode.into(), &a.mode.source));
        put("approvals.timeout", shown(&a.timeout));
        let cron = match a.cron_mode.value {
            CronMode::Deny => "deny",
            CronMode::Approve => "approve",
        };
        put("approvals.cron_mode", (cron.into(), &a.cron_mode.source));
        put("approvals.deny", listed(&a.deny));
        put("command_allowlist", listed(&self.command_allowlist));
        for (name, server) in &self.mcp_servers {
            let how = match &server.transport {
                McpTransport::Stdio { command, args, .. } => {
                    format!("command {command} {}", args.join(" "))
                }
                McpTransport::Http { url, .. } => format!("url {url}"),
            };
            let state = if server.enabled { "" } else { " (disabled)" };
            put(
                &format!("mcp_servers.{name}"),
                (
                    format!("{}{state}", how.trim_end()),
                    &Source::File(server.pos),
                ),
            );
        }
        out
    }
}

/// What identifies a version of a file: inode, size, modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: Option<std::time::SystemTime>,
}

fn stamp_of(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(FileStamp {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        mtime: meta.modified().ok(),
    })
}

struct Cached {
    files: [Option<FileStamp>; 2],
    /// When `files` were last compared with the disk.
    checked: Instant,
    config: Arc<ProfileConfig>,
}

/// How old a look at `config.yaml` and `.env` may be for the definitions
/// memo, whose hit must cost no system call: an edited file changes the
/// definitions within twice this time. Tools read the configuration
/// exactly ([`Profile::config`](crate::Profile::config)).
pub(crate) const RECHECK: Duration = Duration::from_millis(250);

/// Profiles remembered at once; past it the cache starts over.
const MAX_CACHED_PROFILES: usize = 256;

fn cache() -> &'static Mutex<HashMap<PathBuf, Cached>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Cached>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The profile's `.env` entries, sorted by name (a later line wins; empty
/// values left out): parsed again only when the file changed (its stamp:
/// one `stat`).
pub(crate) fn secrets_of(profile: &Profile) -> Arc<Vec<(String, String)>> {
    type Entry = (FileStamp, Arc<Vec<(String, String)>>);
    static SECRETS: OnceLock<Mutex<HashMap<PathBuf, Entry>>> = OnceLock::new();
    let path = profile.home().join(".env");
    let Some(stamp) = stamp_of(&path) else {
        return Arc::default();
    };
    let secrets = SECRETS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some((known, parsed)) = secrets
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(profile.home())
    {
        if *known == stamp {
            return parsed.clone();
        }
    }
    let parsed: Arc<Vec<(String, String)>> = Arc::new(match dotenvy::from_path_iter(&path) {
        Ok(iter) => {
            let all: std::collections::BTreeMap<String, String> = iter.flatten().collect();
            all.into_iter().filter(|(_, v)| !v.is_empty()).collect()
        }
        Err(_) => Vec::new(),
    });
    let mut map = secrets.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= MAX_CACHED_PROFILES && !map.contains_key(profile.home()) {
        map.clear();
    }
    map.insert(profile.home().to_path_buf(), (stamp, parsed.clone()));
    parsed
}

/// The settings of `profile`: from the cache when its files were looked at
/// less than `max_age` ago or are unchanged now (two `stat` calls), else
/// read again. With a zero `max_age` every change is seen.
pub(crate) fn cached(profile: &Profile, max_age: Duration) -> Arc<ProfileConfig> {
    let now = Instant::now();
    let known = {
        let map = cache().lock().unwrap_or_else(|e| e.into_inner());
        match map.get(profile.home()) {
            Some(hit) if now.saturating_duration_since(hit.checked) < max_age => {
                return hit.config.clone();
            }
            Some(hit) => Some(hit.files),
            None => None,
        }
    };
    let files = [
        stamp_of(&profile.home().join(FILE_NAME)),
        stamp_of(&profile.home().join(".env")),
    ];
    if known == Some(files) {
        let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = map.get_mut(profile.home()) {
            if hit.files == files {
                hit.checked = now;
                return hit.config.clone();
            }
        }
    }
    // Read outside the lock: another profile's reader does not wait.
    let config = Arc::new(ProfileConfig::load(profile));
    let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= MAX_CACHED_PROFILES && !map.contains_key(profile.home()) {
        map.clear();
    }
    map.insert(
        profile.home().to_path_buf(),
        Cached {
            files,
            checked: now,
            config: config.clone(),
        },
    );
    config
}
