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
//!
//! Each section's keys are one `section!` declaration: a key is one
//! entry there (its doc, type, default, reader, how `config show` prints
//! it, an example value), from which come the struct's field, its default,
//! the section's `Table` by which `load.rs` reads it and warns about
//! unknown keys, and its rows of [`ProfileConfig::entries`]. A top-level
//! key or section is a row of `ROOT` with its [`ProfileConfig`] field
//! and default. `table_tests.rs` holds every declared key to that: read,
//! shown, accepted by the check, a misspelling reported.

mod known;
mod load;
#[cfg(test)]
mod table_tests;
mod values;
pub mod yaml;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::Profile;

use known::{REFERENCE_APPROVALS, REFERENCE_ROOT, REFERENCE_SECURITY, REFERENCE_TERMINAL};
#[cfg(test)]
use load::Declared;
use load::{
    did_you_mean, join, read_table, read_text, Key, Others, Reader, Section, Table, MAX_DIAGNOSTICS,
};
use yaml::Node;

pub use values::{
    ApprovalMode, CodeExecutionMode, CronMode, Diagnostic, McpElicitation, McpOAuth, McpSampling,
    McpServer, McpTransport, SandboxFallback, SandboxMode, SandboxNetwork, Setting, Severity,
    Source, SslVerify, ToolSearchMode, ToolsetMention, FILE_NAME, MAX_FILE_BYTES,
};
pub use yaml::Pos;

/// The smallest result cap `tool_output.max_result_chars` may set.
pub const MIN_RESULT_CHARS: usize = 1_024;

/// The [`Key`] of `$s`'s field `$field: Setting<$t>`, whose key is the
/// field's name: `read` takes `(&mut Reader, key path, node)` to an
/// `Option<$t>` (`None`: a problem, reported), `show` the value to its
/// text; `example` is a YAML value that reads.
macro_rules! value_key {
    ($s:ty, $field:ident: $t:ty,
        read $read:expr, show $show:expr, example $example:literal) => {
        Key::<$s> {
            name: stringify!($field),
            read: |r, s, key, node| {
                let read: fn(&mut Reader, &str, &Node) -> Option<$t> = $read;
                let value = read(r, key, node);
                load::set(&mut s.$field, value, node.pos);
            },
            show: |s, key, out| {
                let show: fn(&$t) -> String = $show;
                let setting = &s.$field;
                out.push((
                    key.to_string(),
                    show(&setting.value),
                    setting.source.clone(),
                ));
            },
            #[cfg(test)]
            declared: |path, checked, out| {
                out.push(Declared {
                    path: path.to_string(),
                    example: $example,
                    checked,
                })
            },
        }
    };
}

/// The [`Key`] of `$s`'s field `$field`, a [`Section`] of type `$t`, whose
/// key is the field's name.
macro_rules! section_key {
    ($s:ty, $field:ident: $t:ty) => {
        Key::<$s> {
            name: stringify!($field),
            read: |r, s, key, node| {
                load::read_table(r, &mut s.$field, &<$t as Section>::TABLE, key, node)
            },
            show: |s, key, out| <$t as Section>::TABLE.entries(&s.$field, key, out),
            #[cfg(test)]
            declared: |path, _, out| <$t as Section>::TABLE.declared(path, out),
        }
    };
}

/// Declares a section of the file from one list of its keys: the struct
/// (each key a `pub` field), its defaults and its [`Table`]. A key is
/// either a value,
///
/// ```text
/// /// Doc of the field.
/// name: Type = default, read READER, show SHOW, example "YAML";
/// ```
///
/// (the field is a `Setting<Type>`; see [`value_key!`] for the rest), or a
/// section of its own, `name: section Type;`. After the keys come the
/// reference's other keys of the section (`reference: LIST;`, accepted
/// quietly) and optionally `check: FN;`, run once the keys are read.
macro_rules! section {
    (
        $(#[$attr:meta])*
        pub struct $name:ident { $($keys:tt)* }
        reference: $reference:expr;
        $(check: $check:expr;)?
    ) => {
        section!(@keys [$(#[$attr])* pub struct $name] [$reference] [$($check)?] [] $($keys)*);
    };
    // Every key seen: the struct, its defaults and its table.
    (@keys [$(#[$attr:meta])* pub struct $name:ident] [$reference:expr] [$($check:expr)?]
        [$( [$(#[$doc:meta])*] $field:ident: $fty:ty = $default:expr, ($key:expr); )*]
    ) => {
        $(#[$attr])*
        pub struct $name {
            $( $(#[$doc])* pub $field: $fty, )*
        }

        impl Section for $name {
            const TABLE: Table<Self> = Table {
                rows: &[$($key),*],
                others: Others::Unknown($reference),
                check: section!(@check $($check)?),
            };

            fn defaults() -> Self {
                $name { $($field: $default),* }
            }
        }
    };
    (@check $check:expr) => { Some($check) };
    (@check) => { None };
    // A section of its own.
    (@keys $head:tt $reference:tt $check:tt [$($done:tt)*]
        $(#[$doc:meta])* $field:ident: section $t:ty;
        $($rest:tt)*
    ) => {
        section!(@keys $head $reference $check [$($done)*
            [$(#[$doc])*] $field: $t = <$t as Section>::defaults(),
                (section_key!(Self, $field: $t));
        ] $($rest)*);
    };
    // A value.
    (@keys $head:tt $reference:tt $check:tt [$($done:tt)*]
        $(#[$doc:meta])* $field:ident: $t:ty = $default:expr,
            read $read:expr, show $show:expr, example $example:literal;
        $($rest:tt)*
    ) => {
        section!(@keys $head $reference $check [$($done)*
            [$(#[$doc])*] $field: Setting<$t> = Setting::default($default),
                (value_key!(Self, $field: $t,
                    read $read, show $show, example $example));
        ] $($rest)*);
    };
}

/// `show` of a value: its text.
fn display<T: fmt::Display>(value: &T) -> String {
    value.to_string()
}

/// `show` of a list: `[a, b]`.
fn list<T: fmt::Display>(items: &[T]) -> String {
    let shown: Vec<String> = items.iter().map(ToString::to_string).collect();
    format!("[{}]", shown.join(", "))
}

/// `show` of a list of paths: `[/a, /b]`.
fn paths(items: &[PathBuf]) -> String {
    let shown: Vec<String> = items.iter().map(|p| p.display().to_string()).collect();
    format!("[{}]", shown.join(", "))
}

/// `.env` keys that override `config.yaml` (kept from before the file was read).
pub mod env {
    /// `terminal.daemon_term_grace_seconds`.
    pub const KILL_GRACE_SECONDS: &str = "TERMINAL_KILL_GRACE_SECONDS";
    /// `security.allow_private_urls`: `1`, `true`, `yes` or `on`.
    pub const ALLOW_PRIVATE_URLS: &str = "HERMES_ALLOW_PRIVATE_URLS";
}

section! {
    /// `tool_output`: how much of a tool's output the model sees.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct ToolOutput {
        /// `terminal` output kept, in bytes (head and tail around the cut).
        max_bytes: usize = 50_000,
            read |r, key, v| r.int(key, v, 1_000, 10_000_000).map(load::usize_of),
            show display, example "20000";
        /// The most lines one `read_file` call returns.
        max_lines: usize = 2_000,
            read |r, key, v| r.int(key, v, 1, 100_000).map(load::usize_of),
            show display, example "300";
        /// Longer lines of `read_file` are cut, in characters.
        max_line_length: usize = 2_000,
            read |r, key, v| r.int(key, v, 16, 1_000_000).map(load::usize_of),
            show display, example "500";
        /// This project's: every tool result's cap, in characters (`None`: the
        /// program's `DispatchConfig`). Lowers a tool's own cap, never raises it.
        max_result_chars: Option<usize> = None,
            read |r, key, v| {
                let min = MIN_RESULT_CHARS as i64;
                r.int(key, v, min, 100_000_000).map(|n| Some(load::usize_of(n)))
            },
            show |n| n.map_or("(the program's, 100000 unless it says)".into(), |n| n.to_string()),
            example "9000";
        /// This project's: the characters all the results of one turn's
        /// batch may take together (`None`: the program's `DispatchConfig`,
        /// 200000 unless it says); the longest beyond it are saved and
        /// previewed. Lowers the program's budget, never raises it.
        max_turn_chars: Option<usize> = None,
            read |r, key, v| {
                let min = MIN_RESULT_CHARS as i64;
                r.int(key, v, min, 1_000_000_000).map(|n| Some(load::usize_of(n)))
            },
            show |n| n.map_or("(the program's, 200000 unless it says)".into(), |n| n.to_string()),
            example "50000";
    }
    reference: &[];
}

section! {
    /// `model`: the model an agent talks to. The reference writes it as a
    /// name (`model: gpt-4o`, read as `model.default`) or as this mapping.
    /// The crate `hermes-model` resolves it to an endpoint.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct Model {
        /// The model's name (`model.model` is read as the same key, as in the reference).
        default: String = String::new(),
            read Reader::string, show display, example "gpt-4o";
        /// `model.default` written as `model.model`.
        model: String = String::new(),
            read Reader::string, show display, example "gpt-4o";
        /// `openrouter` (the reference's default), `openai`, `custom` (or
        /// any other name: then `base_url` is required).
        provider: String = String::new(),
            read Reader::string, show display, example "openrouter";
        /// The OpenAI-compatible endpoint, up to `/v1` (`/chat/completions` is added).
        base_url: String = String::new(),
            read Reader::string, show display, example "'http://127.0.0.1:8080/v1'";
        /// The key itself (prefer the provider's key in `.env`).
        api_key: String = String::new(),
            read Reader::string,
            show |k| if k.is_empty() { String::new() } else { "(set)".into() },
            example "sk-test";
        /// This project's: seconds one request may take, answer included.
        timeout: u64 = 120,
            read |r, key, v| r.int(key, v, 1, 3_600).map(|n| n as u64),
            show display, example "60";
        /// This project's: retries of a request answered 429 or 5xx, or
        /// refused on the way, with backoff (`Retry-After` honoured).
        max_retries: u32 = 3,
            read |r, key, v| r.int(key, v, 0, 10).map(|n| n as u32),
            show display, example "5";
        /// This project's: how tool definitions are written for this
        /// provider (`openai`, `openai-strict`, `gemini`, `llamacpp`).
        tool_dialect: String = String::new(),
            read Reader::string, show display, example "openai";
    }
    reference: &["api", "api_mode", "context_length", "name"];
}

section! {
    /// `delegation`: what `delegate_task`'s children may do.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct Delegation {
        /// Model requests one child may make.
        max_iterations: usize = 50,
            read |r, key, v| r.int(key, v, 1, 10_000).map(load::usize_of),
            show display, example "20";
        /// Seconds one child may run (0: no limit, as in the reference).
        child_timeout_seconds: u64 = 0,
            read |r, key, v| r.int(key, v, 0, 86_400).map(|n| n as u64),
            show display, example "600";
        /// Tasks one call may give (and children running at once).
        max_concurrent_children: usize = 3,
            read |r, key, v| r.int(key, v, 1, 64).map(load::usize_of),
            show display, example "4";
        /// Levels of agents below the top one: 1, children only; 2 lets an
        /// orchestrator child spawn its own.
        max_spawn_depth: usize = 1,
            read |r, key, v| r.int(key, v, 1, 16).map(load::usize_of),
            show display, example "2";
        /// Whether a child may be an orchestrator (keeps `delegate_task`).
        orchestrator_enabled: bool = true,
            read Reader::bool, show display, example "false";
    }
    reference: known::REFERENCE_DELEGATION;
}

section! {
    /// `code_execution`: what `execute_code`'s scripts may do.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct CodeExecution {
        /// Seconds one script may run before it and what it started are
        /// terminated (the dispatch timeout, 300 s by default, bounds it too).
        timeout: u64 = 300,
            read |r, key, v| r.int(key, v, 1, 86_400).map(|n| n as u64),
            show display, example "60";
        /// Tool calls one script may make; the next one raises in the script.
        max_tool_calls: usize = 50,
            read |r, key, v| r.int(key, v, 1, 100_000).map(load::usize_of),
            show display, example "20";
        /// This project's: bytes of the script's stdout the model gets (the
        /// start and the end kept, the cut marked).
        max_stdout_bytes: usize = 50_000,
            read |r, key, v| r.int(key, v, 100, 10_000_000).map(load::usize_of),
            show display, example "20000";
        /// This project's: the tools a script may call (never `execute_code`,
        /// `delegate_task`, `clarify` or the other tools of the agent loop).
        allowed_tools: Vec<String> = CODE_EXECUTION_DEFAULT_TOOLS.iter().map(|t| t.to_string()).collect(),
            read Reader::strings, show |v| list(v), example "[read_file, search_files, patch]";
        /// Where a script runs and with which interpreter: `project` (the
        /// session's directory and active virtual environment) or `strict`
        /// (a scratch folder and the system's `python3`).
        mode: CodeExecutionMode = CodeExecutionMode::Project,
            read load::code_execution_mode, show |m| m.as_str().into(), example "strict";
    }
    reference: &[];
}

/// `code_execution.allowed_tools` unless set: the reference's set.
pub const CODE_EXECUTION_DEFAULT_TOOLS: &[&str] = &[
    "web_search",
    "web_extract",
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "terminal",
];

section! {
    /// `tools.tool_search`: progressive disclosure.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct ToolSearch {
        enabled: ToolSearchMode = ToolSearchMode::Auto,
            read load::tool_search_mode,
            show |mode| match mode {
                ToolSearchMode::Auto => "auto",
                ToolSearchMode::On => "on",
                ToolSearchMode::Off => "off",
            }.into(),
            example "on";
        /// Share of the context window (0–100) past which `auto` defers.
        threshold_pct: u8 = 10,
            read |r, key, v| r.int(key, v, 0, 100).map(|n| n as u8),
            show display, example "25";
        /// Hits `tool_search` returns when the model gives no `limit`.
        search_default_limit: usize = 5,
            read |r, key, v| r.int(key, v, 1, 50).map(load::usize_of),
            show display, example "3";
        /// The largest `limit` the model may ask for.
        max_search_limit: usize = 20,
            read |r, key, v| r.int(key, v, 1, 50).map(load::usize_of),
            show display, example "7";
    }
    reference: &[];
    check: search_limits;
}

/// `tools.tool_search`, once read: the default limit is at most the largest.
fn search_limits(r: &mut Reader, s: &mut ToolSearch, key: &str, node: &Node) {
    if s.search_default_limit.value > s.max_search_limit.value {
        let pos = match &s.search_default_limit.source {
            Source::File(p) => *p,
            _ => node.pos,
        };
        r.error(
            &join(key, "search_default_limit"),
            pos,
            format!(
                "{} is more than max_search_limit ({}); max_search_limit is used",
                s.search_default_limit.value, s.max_search_limit.value
            ),
        );
        s.search_default_limit.value = s.max_search_limit.value;
    }
}

section! {
    /// `terminal`: the settings of the local backend this project has.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct Terminal {
        /// A foreground command's timeout when the call gives none, in seconds.
        timeout: u64 = 180,
            read |r, key, v| r.int(key, v, 1, 86_400).map(|n| n as u64),
            show display, example "90";
        /// The directory commands run in when the call names none; `None`
        /// (the default, `.`): the session's working directory.
        cwd: Option<PathBuf> = None,
            read load::cwd,
            show |p| p.as_ref().map_or("(the session's)".into(), |p| p.display().to_string()),
            example "/tmp";
        /// Between SIGTERM and SIGKILL when a process tree is torn down, in
        /// seconds (at most 60).
        daemon_term_grace_seconds: f64 = 2.0,
            read |r, key, v| r.float(key, v, 0.0, 60.0),
            show display, example "0.5";
        /// Variables of the agent's own environment passed to commands.
        env_passthrough: Vec<String> = Vec::new(),
            read load::env_names, show |v| list(v), example "[LANGUAGE, SSH_AUTH_SOCK]";
        /// `terminal.sandbox`: what commands may write.
        sandbox: SandboxMode = SandboxMode::WorkspaceWrite,
            read load::sandbox_mode, show |m| m.as_str().into(), example "read-only";
        /// `terminal.sandbox_network`: what commands may reach.
        sandbox_network: SandboxNetwork = SandboxNetwork::On,
            read load::sandbox_network, show |n| n.as_str().into(), example "loopback";
        /// `terminal.sandbox_writable_roots`: folders writable beside the
        /// working directory and the temporary folder (`workspace-write`).
        sandbox_writable_roots: Vec<PathBuf> = Vec::new(),
            read load::writable_roots, show |v| paths(v), example "[/tmp]";
        /// `terminal.sandbox_fallback`: what a sandboxed mode does on a kernel
        /// without Landlock.
        sandbox_fallback: SandboxFallback = SandboxFallback::Refuse,
            read load::sandbox_fallback, show |f| f.as_str().into(), example "unsandboxed";
        /// `terminal.backend`: the machine commands and file tools run on, a
        /// name of the tools' backend table (`local`, `ssh`, `docker`);
        /// `config check` holds it to that table.
        backend: String = "local".to_string(),
            read load::backend_name, show |b| b.clone(), example "ssh";
        /// `terminal.ssh_host`: the host of the `ssh` backend.
        ssh_host: String = String::new(),
            read load::plain_text, show |h| h.clone(), example "build.example.com";
        /// `terminal.ssh_user`: the user it logs in as (empty: ssh's default).
        ssh_user: String = String::new(),
            read load::plain_text, show |u| u.clone(), example "deploy";
        /// `terminal.ssh_port`.
        ssh_port: u16 = 22,
            read |r, key, v| r.int(key, v, 1, 65_535).map(|n| n as u16),
            show display, example "2222";
        /// `terminal.ssh_key`: the private key file (empty: ssh's defaults).
        ssh_key: Option<PathBuf> = None,
            read load::cwd,
            show |p| p.as_ref().map_or("(ssh's default keys)".into(), |p| p.display().to_string()),
            example "~/.ssh/id_ed25519";
        /// `terminal.docker_image`: the image of the `docker` backend's
        /// container (the reference's default).
        docker_image: String = "nikolaik/python-nodejs:python3.11-nodejs20".to_string(),
            read load::plain_text, show |i| i.clone(), example "debian:stable-slim";
        /// `terminal.docker_volumes`: `HOST:CONTAINER[:OPTIONS]` bind mounts.
        docker_volumes: Vec<String> = Vec::new(),
            read load::volumes, show |v| list(v), example "['/srv/data:/data:ro']";
        /// `terminal.docker_mount_cwd_to_workspace`: mount the session's
        /// working directory at `/workspace` (off by default, as in the
        /// reference).
        docker_mount_cwd_to_workspace: bool = false,
            read Reader::bool, show display, example "true";
        /// `terminal.docker_network`: `false` runs the container without a
        /// network (`--network none`).
        docker_network: bool = true,
            read Reader::bool, show display, example "false";
        /// `terminal.container_cpu`: CPUs the container may use (`--cpus`;
        /// `None`: no limit asked).
        container_cpu: Option<f64> = None,
            read |r, key, v| r.float(key, v, 0.01, 1024.0).map(Some),
            show |c| c.map_or("(no limit)".into(), |c| c.to_string()),
            example "1.5";
        /// `terminal.container_memory`: memory the container may use, in MB
        /// (`--memory`; `None`: no limit asked).
        container_memory: Option<u64> = None,
            read |r, key, v| r.int(key, v, 6, 16_777_216).map(|n| Some(n as u64)),
            show |m| m.map_or("(no limit)".into(), |m| format!("{m} MB")),
            example "2048";
    }
    reference: REFERENCE_TERMINAL;
}

section! {
    /// `security.website_blocklist`.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct WebsiteBlocklist {
        enabled: bool = false, read Reader::bool, show display, example "true";
        /// Host rules: `example.com` (and its subdomains) or `*.example.com`.
        domains: Vec<String> = Vec::new(),
            read Reader::strings, show |v| list(v), example "[example.com, '*.ads.test']";
        /// Files of more rules, one a line (`#` comments); relative to the home.
        shared_files: Vec<PathBuf> = Vec::new(),
            read load::shared_files, show |v| paths(v), example "[blocklist.txt]";
    }
    reference: &[];
}

section! {
    /// `security`.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct Security {
        /// Let web tools reach loopback and private addresses.
        allow_private_urls: bool = false, read Reader::bool, show display, example "true";
        /// Redact secrets from tool output.
        redact_secrets: bool = true, read Reader::bool, show display, example "false";
        website_blocklist: section WebsiteBlocklist;
    }
    reference: REFERENCE_SECURITY;
}

section! {
    /// `approvals`: honoured by `crate::approval` (and the terminal's command
    /// check), read at every question.
    #[derive(Debug, Clone, PartialEq)]
    #[non_exhaustive]
    pub struct Approvals {
        mode: ApprovalMode = ApprovalMode::Smart,
            read load::approval_mode,
            show |mode| match mode {
                ApprovalMode::Manual => "manual",
                ApprovalMode::Smart => "smart",
                ApprovalMode::Off => "off",
            }.into(),
            example "manual";
        /// Seconds to wait for the user's answer.
        timeout: u64 = 60,
            read |r, key, v| r.int(key, v, 1, 86_400).map(|n| n as u64),
            show display, example "30";
        cron_mode: CronMode = CronMode::Deny,
            read load::cron_mode,
            show |mode| match mode {
                CronMode::Deny => "deny",
                CronMode::Approve => "approve",
            }.into(),
            example "approve";
        /// Glob patterns of commands always refused (case-insensitive).
        deny: Vec<String> = Vec::new(),
            read Reader::strings, show |v| list(v), example "['git push --force*']";
    }
    reference: REFERENCE_APPROVALS;
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
    pub model: Model,
    pub delegation: Delegation,
    pub code_execution: CodeExecution,
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
    /// Every setting at its default, for a profile whose file is at `path`
    /// (a section's defaults are in its declaration).
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
            tool_output: ToolOutput::defaults(),
            model: Model::defaults(),
            delegation: Delegation::defaults(),
            code_execution: CodeExecution::defaults(),
            tool_search: ToolSearch::defaults(),
            terminal: Terminal::defaults(),
            security: Security::defaults(),
            approvals: Approvals::defaults(),
            command_allowlist: Setting::default(Vec::new()),
            mcp_servers: BTreeMap::new(),
            diagnostics: Vec::new(),
            stamp: STAMP.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Reads the settings of `profile` now (no cache): `config.yaml`, then
    /// the `.env` keys that override it.
    pub fn load(profile: &Profile) -> Self {
        let path = profile.home().join(FILE_NAME);
        let mut config = ProfileConfig::defaults(path.clone());
        let mut r = Reader::new(profile.home());
        match read_text(&path) {
            Ok(None) => {}
            Ok(Some(text)) => {
                config.present = true;
                let doc = yaml::parse(&text);
                if let Some(e) = doc.error {
                    let message = if doc.root.is_some() {
                        format!("{}; the sections after this point are not read", e.message)
                    } else {
                        e.message
                    };
                    r.push(Severity::Error, "", Some(e.pos), message);
                }
                match doc.root {
                    Some(root) if !root.is_null() => {
                        read_table(&mut r, &mut config, &ROOT, "", &root)
                    }
                    _ => {}
                }
            }
            Err(message) => {
                config.present = true;
                r.push(Severity::Error, "", None, message);
            }
        }
        config.toolset_mentions = std::mem::take(&mut r.mentions);
        apply_env(&mut config, profile, &mut r);
        (config.diagnostics, config.dropped) = r.finish();
        config
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
        let mentions = std::mem::take(&mut self.toolset_mentions);
        let home = self
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut r = Reader::resume(std::mem::take(&mut self.diagnostics), self.dropped, home);
        for m in &mentions {
            // A platform's list leaves the reference's MCP words out
            // (`ProfileConfig::platform_toolsets`); the other lists do not.
            let left_out =
                m.key.starts_with("platform_toolsets.") && self.names_mcp_server(&m.name);
            if left_out || known(&m.name) {
                continue;
            }
            let hint = if r.diags.len() < MAX_DIAGNOSTICS {
                did_you_mean(&m.name, candidates.clone())
            } else {
                String::new()
            };
            r.error(&m.key, m.pos, format!("unknown toolset `{}`{hint}", m.name));
        }
        (self.diagnostics, self.dropped) = r.finish();
        self.toolset_mentions = mentions;
    }

    /// Holds `terminal.backend` to the backends the program has (`known`,
    /// the tools' backend table; `candidates` its names): an unknown one is
    /// an error at its position, with a did-you-mean.
    pub fn check_backend_name<'c>(
        &mut self,
        known: impl Fn(&str) -> bool,
        candidates: impl IntoIterator<Item = &'c str> + Clone,
    ) {
        let setting = &self.terminal.backend;
        if known(&setting.value) {
            return;
        }
        let Source::File(pos) = setting.source else {
            return;
        };
        let name = setting.value.clone();
        let home = self
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut r = Reader::resume(std::mem::take(&mut self.diagnostics), self.dropped, home);
        let hint = did_you_mean(&name, candidates.clone());
        let names: Vec<&str> = candidates.into_iter().collect();
        r.error(
            "terminal.backend",
            pos,
            format!(
                "unknown backend `{name}`{hint}; this agent has: {}",
                names.join(", ")
            ),
        );
        (self.diagnostics, self.dropped) = r.finish();
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
    /// for `hermes-tools config show`: the rows of the top level's table and
    /// of the sections' tables.
    pub fn entries(&self) -> Vec<(String, String, Source)> {
        let mut out = Vec::new();
        ROOT.entries(self, "", &mut out);
        out
    }
}

/// The `.env` keys that existed before `config.yaml` was read keep working
/// and win over the file. An unreadable value is a warning and ignored.
fn apply_env(c: &mut ProfileConfig, profile: &Profile, r: &mut Reader) {
    let secrets = profile.secrets();
    let get = |name: &str| {
        secrets
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_string())
    };
    let note = |name: &str, value: &str| {
        format!("the .env value {name}={value} is not understood and is ignored")
    };
    if let Some(v) = get(env::KILL_GRACE_SECONDS) {
        match v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0) {
            Some(secs) => {
                c.terminal.daemon_term_grace_seconds = Setting {
                    value: secs.min(60.0),
                    source: Source::Env(env::KILL_GRACE_SECONDS),
                }
            }
            None => r.push(
                Severity::Warning,
                "",
                None,
                note(env::KILL_GRACE_SECONDS, &v),
            ),
        }
    }
    if let Some(v) = get(env::ALLOW_PRIVATE_URLS) {
        // As before the file was read: these words allow, anything else does not.
        let allow = matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on");
        c.security.allow_private_urls = Setting {
            value: allow,
            source: Source::Env(env::ALLOW_PRIVATE_URLS),
        };
    }
}

/// The top level of the file, in `config show` order. A section is one
/// row here (its keys are its own table's, declared with `section!`); the
/// field it is read into, and that field's default, are
/// [`ProfileConfig`]'s.
const ROOT: Table<ProfileConfig> = Table {
    rows: &[
        value_key!(ProfileConfig, toolsets: Option<Vec<String>>,
            read |r, key, v| r.toolset_names(key, v).map(Some),
            show |t| t.as_deref().map_or("(unset)".into(), list),
            example "[file]"),
        Key {
            name: "platform_toolsets",
            read: |r, c, key, node| load::platform_toolsets(r, &mut c.platform_toolsets, key, node),
            show: |c, key, out| {
                for (name, set) in &c.platform_toolsets {
                    out.push((load::join(key, name), list(&set.value), set.source.clone()));
                }
            },
            #[cfg(test)]
            declared: |path, _, out| {
                out.push(Declared {
                    path: load::join(path, "cli"),
                    example: "[terminal, web]",
                    checked: false,
                })
            },
        },
        Key {
            name: "agent",
            read: |r, c, key, node| load::read_table(r, c, &AGENT, key, node),
            show: |c, key, out| AGENT.entries(c, key, out),
            #[cfg(test)]
            declared: |path, _, out| AGENT.declared(path, out),
        },
        section_key!(ProfileConfig, tool_output: ToolOutput),
        Key {
            name: "model",
            // A name alone, or the mapping.
            read: |r, c, key, node| match node.scalar() {
                Some(_) if !node.is_null() => {
                    let name = r.string(key, node);
                    load::set(&mut c.model.default, name, node.pos);
                }
                _ => load::read_table(r, &mut c.model, &Model::TABLE, key, node),
            },
            show: |c, key, out| Model::TABLE.entries(&c.model, key, out),
            #[cfg(test)]
            declared: |path, _, out| Model::TABLE.declared(path, out),
        },
        section_key!(ProfileConfig, delegation: Delegation),
        section_key!(ProfileConfig, code_execution: CodeExecution),
        Key {
            name: "tools",
            read: |r, c, key, node| load::read_table(r, c, &TOOLS, key, node),
            show: |c, key, out| TOOLS.entries(c, key, out),
            #[cfg(test)]
            declared: |path, _, out| TOOLS.declared(path, out),
        },
        section_key!(ProfileConfig, terminal: Terminal),
        section_key!(ProfileConfig, security: Security),
        section_key!(ProfileConfig, approvals: Approvals),
        value_key!(ProfileConfig, command_allowlist: Vec<String>,
            read Reader::strings, show |v| list(v), example "['rm -rf build']"),
        Key {
            name: "mcp_servers",
            read: |r, c, key, node| load::read_mcp_servers(r, &mut c.mcp_servers, key, node),
            show: |c, key, out| {
                for (name, server) in &c.mcp_servers {
                    let how = match &server.transport {
                        McpTransport::Stdio { command, args, .. } => {
                            format!("command {command} {}", args.join(" "))
                        }
                        McpTransport::Http { url, .. } => format!("url {url}"),
                    };
                    let state = if server.enabled { "" } else { " (disabled)" };
                    let auth = if server.oauth.is_some() {
                        " (auth: oauth)"
                    } else {
                        ""
                    };
                    out.push((
                        load::join(key, name),
                        format!("{}{auth}{state}", how.trim_end()),
                        Source::File(server.pos),
                    ));
                }
            },
            #[cfg(test)]
            declared: |path, _, out| {
                out.push(Declared {
                    path: load::join(path, "files"),
                    example: "{command: npx, args: [-y, some-server]}",
                    checked: false,
                })
            },
        },
    ],
    others: Others::Unknown(REFERENCE_ROOT),
    check: None,
};

/// `agent`: only this key is the tools'; the rest of the section is the
/// agent loop's, accepted as it is.
const AGENT: Table<ProfileConfig> = Table {
    rows: &[value_key!(ProfileConfig, disabled_toolsets: Vec<String>,
        read |r, key, v| r.toolset_names(key, v), show |v| list(v), example "[web]")],
    others: Others::Ignored,
    check: None,
};

/// `tools`.
const TOOLS: Table<ProfileConfig> = Table {
    rows: &[section_key!(ProfileConfig, tool_search: ToolSearch)],
    others: Others::UnknownEvenWithoutValue,
    check: None,
};

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

impl Profile {
    /// A secret from the profile's own `.env` (`<home>/.env`), read at call
    /// time. Never the process environment: one process serves many
    /// profiles, each with its own secrets.
    pub fn secret(&self, name: &str) -> Option<String> {
        let all = secrets_of(self);
        let at = all.binary_search_by(|(k, _)| k.as_str().cmp(name)).ok()?;
        all.get(at).map(|(_, v)| v.clone())
    }

    /// Every secret of the profile's own `.env`, sorted by name, read at call
    /// time: what a child process of this profile may see. A later line
    /// wins, as when a shell sources the file, and empty values are left
    /// out. The parsed file is kept while it is unchanged (one `stat` per
    /// call).
    pub fn secrets(&self) -> Vec<(String, String)> {
        secrets_of(self).as_ref().clone()
    }

    /// The profile's settings from its `config.yaml` (and the `.env` keys
    /// that override it), read at call time: cached while neither file
    /// changes. See [`crate::config`].
    pub fn config(&self) -> Arc<ProfileConfig> {
        cached(self, Duration::ZERO)
    }
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
