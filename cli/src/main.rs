//! `hermes-cli`: the `hermes-tools` binary. List, describe and call the
//! built-in tools, serve them over MCP (`hermes-mcp-server`) with the
//! profile's MCP servers' tools beside them (`hermes-mcp-client`), check
//! the profile's config. It is also its commands' sandbox helper
//! (`hermes-procs`), first thing in `main`.

mod config_cmd;
mod conformance;
mod exit;
mod mcp_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hermes_runtime::dialect::{rewrite, Dialect};
use hermes_runtime::{Profile, Registry, ToolContext};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[derive(Parser)]
#[command(name = "hermes-tools", version, about = "The hermes built-in tools")]
struct Cli {
    /// The profile directory (home, secrets, config.yaml); default: $HERMES_HOME, else ~/.hermes.
    #[arg(long, global = true, value_name = "DIR")]
    profile: Option<PathBuf>,
    /// Run dangerous commands without asking for approval (as
    /// HERMES_YOLO_MODE=1). Hard-line blocks (`rm -rf /`, a fork bomb, ...)
    /// still hold.
    #[arg(long, global = true)]
    yolo: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every tool: name, toolset, emoji.
    List,
    /// Print the tool definitions the model is sent (JSON).
    Schema {
        /// Toolsets (or legacy names) to enable, comma-separated; default:
        /// the platform's (--platform), else config.yaml's `toolsets`, else all.
        #[arg(long, value_delimiter = ',')]
        toolsets: Option<Vec<String>>,
        /// The platform whose toolsets config.yaml's `platform_toolsets`
        /// names (default: its `hermes-NAME` bundle).
        #[arg(long, value_name = "NAME")]
        platform: Option<String>,
        /// Toolsets to disable, comma-separated (subtracted last), with
        /// config.yaml's `agent.disabled_toolsets`.
        #[arg(long, value_delimiter = ',')]
        disable: Vec<String>,
        /// The provider dialect: openai, openai-strict, gemini, llamacpp, mcp.
        #[arg(long, default_value = "openai")]
        dialect: String,
    },
    /// Show which toolsets are available for the profile, and what the others need.
    Check,
    /// Call a tool and print the JSON string it returns (exit 0, even for
    /// a tool's error); exits 3 when the tool's MCP server needs a login
    /// (`mcp login NAME`).
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, as a JSON object.
        #[arg(default_value = "{}")]
        args: String,
        /// How an MCP server's question to the user (elicitation) is
        /// answered, as there is no one to ask: `defaults` accepts the
        /// form's default values (declines when a required field has none),
        /// `decline` declines. Without it the server is told elicitation is
        /// not available.
        #[arg(long, value_name = "HOW", value_parser = ["defaults", "decline"])]
        elicit: Option<String>,
    },
    /// Serve the tools to other agents: a Model Context Protocol server on
    /// stdio, or on streamable HTTP with --http.
    Serve {
        /// Speak the Model Context Protocol (the only protocol so far).
        #[arg(long, required = true)]
        mcp: bool,
        /// Toolsets (or legacy names) to expose, comma-separated; default:
        /// the platform's (--platform), else config.yaml's `toolsets`, else core.
        #[arg(long, value_delimiter = ',')]
        toolsets: Option<Vec<String>>,
        /// The platform whose toolsets config.yaml's `platform_toolsets`
        /// names (default: its `hermes-NAME` bundle).
        #[arg(long, value_name = "NAME")]
        platform: Option<String>,
        /// Toolsets to withhold, comma-separated (subtracted last), with
        /// config.yaml's `agent.disabled_toolsets`.
        #[arg(long, value_delimiter = ',')]
        disable: Vec<String>,
        /// Serve streamable HTTP on ADDR instead of stdio: PORT (on
        /// 127.0.0.1) or HOST:PORT; the endpoint is /mcp.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// With --http: the bearer token every request must carry; required
        /// off loopback. Prefer the environment variable: arguments are
        /// visible to other users.
        #[arg(long, env = hermes_mcp_server::TOKEN_ENV, hide_env_values = true)]
        token: Option<String>,
        /// The largest message a client may send: one line on stdio, one
        /// request body over HTTP. A longer one is answered with an error and
        /// discarded.
        #[arg(long, value_name = "BYTES", default_value_t = hermes_mcp_server::Limits::DEFAULT_MAX_MESSAGE_BYTES,
              value_parser = clap::value_parser!(u64).range(1024..))]
        max_message_bytes: u64,
        /// With --http: connections open at once; more are answered 503 and closed.
        #[arg(long, value_name = "N", default_value_t = hermes_mcp_server::Limits::DEFAULT_MAX_CONNECTIONS,
              value_parser = clap::value_parser!(u64).range(1..))]
        max_connections: u64,
        /// With --http: MCP sessions alive at once; another `initialize` is answered 503.
        #[arg(long, value_name = "N", default_value_t = hermes_mcp_server::Limits::DEFAULT_MAX_SESSIONS,
              value_parser = clap::value_parser!(u64).range(1..))]
        max_sessions: u64,
        /// With --http: seconds a session may go without a request (and none
        /// running) before it is closed.
        #[arg(long, value_name = "SECS", default_value_t = hermes_mcp_server::Limits::DEFAULT_SESSION_IDLE_SECS,
              value_parser = clap::value_parser!(u64).range(1..))]
        session_idle_timeout: u64,
        /// With --http: seconds a connection has to send a request's headers;
        /// also the longest pause between two requests or within a request
        /// body. Past it the connection is closed.
        #[arg(long, value_name = "SECS", default_value_t = hermes_mcp_server::Limits::DEFAULT_HEADER_READ_SECS,
              value_parser = clap::value_parser!(u64).range(1..))]
        header_read_timeout: u64,
        /// With --http: on SIGTERM, seconds the calls in flight have to
        /// finish while the server drains (readiness 404, new sessions
        /// refused); then it stops.
        #[arg(long, value_name = "SECS", default_value_t = hermes_mcp_server::ServeOptions::DEFAULT_DRAIN_GRACE_SECS)]
        drain_grace: u64,
        /// With --http: no sessions; any host answers any request. Only for
        /// toolsets that keep no session state (file, web, skills, memory);
        /// refuses to start with others (terminal, todo, ...).
        #[arg(long)]
        stateless: bool,
    },
    /// The profile's config.yaml: show, check, path.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// The profile's MCP servers (`mcp_servers` in config.yaml): list, test, login.
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
}

fn main() -> ExitCode {
    // First of all: started as a command's sandbox helper (`hermes-tools
    // __sandbox ...`), this applies the rules and execs the command.
    hermes_procs::sandbox::sandbox_helper();
    // Started again by `private_environment` (below): the variables come
    // back before the arguments (`HERMES_MCP_TOKEN`) and the profile's home
    // are read from them.
    let restored =
        hermes_procs::environ::reexecuted().then(hermes_procs::environ::private_environment);
    let Cli {
        profile,
        yolo,
        command,
    } = Cli::parse();
    let profile = profile.map_or_else(Profile::default_home, Profile::new);
    // Then, before any thread, for a command that may start a process: the
    // environment leaves the initial block that `/proc/PID/environ` shows
    // (this re-executes the binary once, which doubles the start-up cost; a
    // command that starts no process has nobody to keep it from).
    let private_env = restored.or_else(|| {
        starts_processes(&command, &profile).then(hermes_procs::environ::private_environment)
    });
    // The runtime's and the tools' warnings (a panicking hook, an abandoned
    // blocking call) are `tracing` events: one line each on stderr, theirs
    // only (not the HTTP and MCP libraries').
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .without_time(),
        )
        .with(Targets::new().with_target("hermes", LevelFilter::INFO))
        .init();
    if let Some(Err(e)) = private_env {
        tracing::warn!(target: "hermes::procs", "the environment stays readable to root commands: {e}");
    }
    if yolo {
        hermes_runtime::approval::set_yolo(true);
    }
    let registry = hermes_tools::registry();
    // Working `todo` and `memory` for `call` and `serve`, as an agent would wire them.
    hermes_tools::install_agent_loop_executors(registry);
    // The configured MCP servers' tools join the registry for as long as
    // the command runs (dropped, they are removed and the servers stopped).
    let mcp = match &command {
        Command::List | Command::Schema { .. } | Command::Check => {
            mcp_cmd::connect_for(registry, &profile, None)
        }
        Command::Serve { .. } => {
            // As a gateway, a form an upstream server asks while it runs a
            // call goes on to the client that made the call (when it can
            // answer forms; else declined).
            hermes_mcp_client::set_elicitation_callback(
                hermes_mcp_client::callbacks::ask_the_caller(),
            );
            mcp_cmd::connect_for(registry, &profile, None)
        }
        Command::Call { name, elicit, .. } => {
            mcp_cmd::install_elicitation(elicit.as_deref());
            mcp_cmd::connect_for(registry, &profile, Some(name))
        }
        Command::Config(_) | Command::Mcp(_) => None,
    };
    // As a gateway, upstream images go on to the client as image blocks:
    // a file path on this machine is of no use to it.
    if let (Some(clients), Command::Serve { .. }) = (&mcp, &command) {
        clients.pass_media(true);
    }
    match command {
        Command::List => {
            let entries = registry.builtin_entries();
            let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(4);
            let set_width = entries.iter().map(|e| e.toolset.len()).max().unwrap_or(7);
            let mut text = String::new();
            for e in entries {
                text += &format!(
                    "{:<width$}  {:<set_width$}  {}\n",
                    e.name, e.toolset, e.emoji
                );
            }
            // Run-time tools the model cannot see now (an MCP server that is down) are left out.
            let shown = |t: &&hermes_runtime::ToolRef| {
                !t.is_static()
                    && t.check()
                        .is_none_or(|c| registry.availability().is_available(c, &profile))
            };
            for t in registry.tools().iter().filter(shown) {
                text += &format!("{}  {}  {}\n", t.name(), t.toolset(), t.emoji());
            }
            emit(&text)
        }
        Command::Schema {
            toolsets,
            platform,
            disable,
            dialect,
        } => {
            config_cmd::warn_on_errors(&profile);
            let config = profile.config();
            let toolsets = config
                .select_toolsets(toolsets, platform.as_deref())
                .map(|s| s.value);
            let mut disable = disable;
            disable.extend(config.disabled_toolsets.value.iter().cloned());
            schema(registry, toolsets, disable, &dialect, &profile)
        }
        Command::Mcp(command) => {
            let (text, code) = mcp_cmd::run(command, registry, &profile);
            match emit(&text) {
                ExitCode::SUCCESS => code,
                failed => failed,
            }
        }
        Command::Config(command) => {
            let (text, code) = config_cmd::run(command, registry, &profile);
            match emit(&text) {
                ExitCode::SUCCESS => code,
                failed => failed,
            }
        }
        Command::Check => {
            let report = registry.check_tool_availability(&profile);
            let width = report
                .available
                .iter()
                .chain(report.unavailable.iter().map(|u| &u.name))
                .map(String::len)
                .max()
                .unwrap_or(7);
            let mut text = format!("{:<width$}  STATUS       NEEDS\n", "TOOLSET");
            for name in &report.available {
                text += &format!("{name:<width$}  available\n");
            }
            for u in &report.unavailable {
                let needs = if u.env_vars.is_empty() {
                    format!("tools: {}", u.tools.join(", "))
                } else {
                    u.env_vars.join(", ")
                };
                text += &format!("{:<width$}  unavailable  {needs}\n", u.name);
            }
            emit(&text)
        }
        Command::Call { name, args, .. } => {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("error: cannot start the async runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let ctx = ToolContext::new(profile, current_dir());
            let result = runtime.block_on(registry.dispatch_json(&name, &args, &ctx));
            // A blocking handler abandoned by a timeout may still hold a
            // thread: the call is answered, so do not wait for it.
            runtime.shutdown_background();
            // A background command started by this call does not outlive it.
            hermes_tools::shutdown_background_processes(hermes_mcp_server::SHUTDOWN_GRACE);
            match emit(&format!("{result}\n")) {
                ExitCode::SUCCESS
                    if mcp
                        .as_ref()
                        .is_some_and(|c| mcp_cmd::call_needs_login(c, &name, &result)) =>
                {
                    ExitCode::from(exit::NEEDS_LOGIN)
                }
                code => code,
            }
        }
        Command::Serve {
            mcp: _,
            toolsets,
            platform,
            disable,
            http,
            token,
            max_message_bytes,
            max_connections,
            max_sessions,
            session_idle_timeout,
            header_read_timeout,
            drain_grace,
            stateless,
        } => {
            let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            config_cmd::warn_on_errors(&profile);
            let config = profile.config();
            let toolsets = config
                .select_toolsets(toolsets, platform.as_deref())
                .map_or_else(|| vec!["core".to_string()], |s| s.value);
            let mut disable = disable;
            disable.extend(config.disabled_toolsets.value.iter().cloned());
            let options = hermes_mcp_server::ServeOptions {
                toolsets,
                disable,
                profile,
                cwd: current_dir(),
                http,
                token,
                limits: hermes_mcp_server::Limits {
                    max_message_bytes: size(max_message_bytes),
                    max_connections: size(max_connections),
                    max_sessions: size(max_sessions),
                    session_idle_timeout: std::time::Duration::from_secs(session_idle_timeout),
                    header_read_timeout: std::time::Duration::from_secs(header_read_timeout),
                },
                drain_grace: std::time::Duration::from_secs(drain_grace),
                stateless,
            };
            match hermes_mcp_server::serve(registry, options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    eprintln!("error: {message}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Whether `command` may start a process: a terminal command (`call`,
/// `serve`), an MCP server (`mcp`, and `list`, `schema` and `check` when the
/// profile configures servers: [`mcp_cmd::connect_for`]).
fn starts_processes(command: &Command, profile: &Profile) -> bool {
    match command {
        Command::Call { .. } | Command::Serve { .. } | Command::Mcp(_) => true,
        Command::List | Command::Schema { .. } | Command::Check => mcp_cmd::has_servers(profile),
        Command::Config(_) => false,
    }
}

fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

fn schema(
    registry: &Registry,
    toolsets: Option<Vec<String>>,
    disable: Vec<String>,
    dialect: &str,
    profile: &Profile,
) -> ExitCode {
    let dialect: Dialect = match dialect.parse() {
        Ok(dialect) => dialect,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let enabled: Option<Vec<&str>> = toolsets
        .as_ref()
        .map(|t| t.iter().map(String::as_str).collect());
    let disabled: Vec<&str> = disable.iter().map(String::as_str).collect();
    let defs = registry.get_tool_definitions(enabled.as_deref(), &disabled, profile);
    for name in &defs.unknown {
        eprintln!("warning: unknown toolset `{name}`");
    }
    let mut out = Vec::with_capacity(defs.tools.len());
    for tool in defs.tools.iter() {
        match rewrite(&tool["function"], dialect) {
            Ok(v) => out.push(v),
            Err(issues) => {
                for issue in issues {
                    eprintln!("error: {}", issue.message);
                }
                return ExitCode::FAILURE;
            }
        }
    }
    match serde_json::to_string_pretty(&out) {
        Ok(json) => emit(&format!("{json}\n")),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) ends quietly instead of panicking.
fn emit(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}
