//! `hermes-tools mcp list|test|login`, and the MCP servers the other commands
//! (`list`, `schema`, `check`, `call`, `serve`) connect before they run.

use std::process::ExitCode;
use std::time::Instant;

use clap::Subcommand;
use hermes_mcp_client::{auth, naming, McpClients, ServerStatus, State};
use hermes_runtime::config::{McpTransport, SslVerify};
use hermes_runtime::{Profile, Registry};

#[derive(Subcommand)]
pub enum McpCommand {
    /// The profile's MCP servers: state, tool count, error.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Connect to one server, list its tools, show the timings; exits 3
    /// when it needs a login (`mcp login NAME`).
    Test {
        /// The server's name in `mcp_servers`.
        name: String,
    },
    /// The MCP conformance suite's client: connect NAME and run the steps
    /// of the scenario named in `MCP_CONFORMANCE_SCENARIO` (`.ci/conformance`);
    /// exits 3 when NAME needs a login (`mcp login NAME`, then again).
    #[command(hide = true)]
    Conformance {
        /// The server's name in `mcp_servers`.
        name: String,
    },
    /// Log in to an `auth: oauth` server: opens the authorization URL with
    /// $BROWSER (or prints it), waits for the redirect on 127.0.0.1, and
    /// stores the tokens under the profile home (mcp-tokens/hermes-tools/NAME.json).
    Login {
        /// The server's name in `mcp_servers`.
        name: String,
    },
    /// Forget an `auth: oauth` server's tokens (removes its token file;
    /// the next use needs `mcp login NAME` again).
    Logout {
        /// The server's name in `mcp_servers`.
        name: String,
    },
}

/// Whether the profile configures MCP servers (enabled or not): the
/// commands that connect them start processes.
pub fn has_servers(profile: &Profile) -> bool {
    !profile.config().mcp_servers.is_empty()
}

/// `call --elicit HOW`: the elicitation callback of a run with no user to
/// ask (installed before the servers connect, so they are told).
pub fn install_elicitation(how: Option<&str>) {
    let callback: hermes_mcp_client::callbacks::ElicitationCallback = match how {
        Some("defaults") => hermes_mcp_client::callbacks::accept_defaults(),
        Some("decline") => std::sync::Arc::new(|_| {
            Box::pin(std::future::ready(
                hermes_mcp_client::callbacks::ElicitationAnswer::Decline,
            ))
        }),
        _ => return,
    };
    hermes_mcp_client::set_elicitation_callback(callback);
}

/// Connects the configured servers a command needs: all of them for
/// `list`, `schema`, `check` and `serve`; for `call`, only the server whose
/// tool is called (none for a built-in tool). `None` when there is nothing
/// to connect.
pub fn connect_for(
    registry: &'static Registry,
    profile: &Profile,
    call: Option<&str>,
) -> Option<McpClients> {
    if !has_servers(profile) {
        return None;
    }
    let clients = match call {
        None => McpClients::start(registry, profile),
        Some(tool) => {
            if !tool.starts_with(naming::TOOL_PREFIX) {
                return None;
            }
            let tool = tool.to_string();
            McpClients::start_only(registry, profile, move |server| {
                naming::may_belong(server, &tool)
            })
        }
    };
    match clients {
        Ok(c) => {
            c.wait_ready(c.longest_connect());
            for s in c.status() {
                if let Some(e) = &s.error {
                    eprintln!("warning: MCP server '{}': {e}", s.name);
                }
            }
            Some(c)
        }
        Err(e) => {
            eprintln!("warning: {e}");
            None
        }
    }
}

/// Whether `call TOOL` was kept from an MCP server's tool by a missing
/// login: the server the tool belongs to needs one (no usable token), or
/// the call's result says so (a step-up: the server asked for more scope).
/// `call` then exits [`crate::exit::NEEDS_LOGIN`], as `mcp test` does.
pub fn call_needs_login(clients: &McpClients, tool: &str, result: &str) -> bool {
    clients
        .status()
        .iter()
        .filter(|s| naming::may_belong(&s.name, tool))
        .any(|s| s.state == State::NeedsLogin || auth::says_needs_login(result, &s.name))
}

pub fn run(
    command: McpCommand,
    registry: &'static Registry,
    profile: &Profile,
) -> (String, ExitCode) {
    match command {
        McpCommand::Conformance { name } => crate::conformance::run(registry, profile, &name),
        McpCommand::Login { name } => login(&name, profile),
        McpCommand::Logout { name } => match auth::logout(profile.home(), &name) {
            Ok(Some(path)) => (
                format!("logged out of `{name}`: removed {}\n", path.display()),
                ExitCode::SUCCESS,
            ),
            Ok(None) => (
                format!("no tokens of `{name}` were stored\n"),
                ExitCode::SUCCESS,
            ),
            Err(e) => (
                format!("error: cannot remove the tokens of `{name}`: {e}\n"),
                ExitCode::FAILURE,
            ),
        },
        McpCommand::List { json } => {
            let clients = match McpClients::start(registry, profile) {
                Ok(c) => c,
                Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
            };
            clients.wait_ready(clients.longest_connect());
            let status = clients.status();
            let failed = status.iter().any(|s| {
                matches!(
                    s.state,
                    State::Failed | State::Parked | State::Invalid | State::NeedsLogin
                )
            });
            let text = if json {
                match serde_json::to_string_pretty(&status) {
                    Ok(j) => format!("{j}\n"),
                    Err(e) => format!("error: {e}\n"),
                }
            } else if status.is_empty() {
                format!(
                    "no MCP server is configured ({} has no `mcp_servers`)\n",
                    profile.config().path.display()
                )
            } else {
                table(&status)
            };
            (
                text,
                if failed {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                },
            )
        }
        McpCommand::Test { name } => {
            if !profile.config().mcp_servers.contains_key(&name)
                && !profile
                    .config()
                    .diagnostics
                    .iter()
                    .any(|d| d.key.starts_with(&format!("mcp_servers.{name}")))
            {
                return (
                    format!(
                        "error: no MCP server `{name}` in {}\n",
                        profile.config().path.display()
                    ),
                    ExitCode::from(2),
                );
            }
            let started = Instant::now();
            let clients = match McpClients::start_only(registry, profile, |n| n == name) {
                Ok(c) => c,
                Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
            };
            clients.wait_ready(clients.longest_connect());
            let total = started.elapsed();
            let Some(s) = clients.status().into_iter().next() else {
                return (
                    format!("error: no MCP server `{name}`\n"),
                    ExitCode::FAILURE,
                );
            };
            let mut text = format!(
                "server     {}\ntransport  {}\nstate      {}\n",
                s.name,
                s.transport,
                state(&s)
            );
            if let Some(ms) = s.connect_ms {
                text += &format!("connect    {ms} ms (start and initialize)\n");
            }
            if let Some(ms) = s.list_ms {
                text += &format!("list       {ms} ms (tools/list and registration)\n");
            }
            text += &format!("total      {} ms\n", total.as_millis());
            if let Some(e) = &s.error {
                text += &format!("error      {e}\n");
            }
            text += &format!("tools      {}\n", s.tools.len());
            for t in &s.tools {
                text += &format!("  {t}\n");
            }
            for r in &s.renamed {
                text += &format!("renamed    {} → {}\n", r.tool, r.name);
            }
            for w in &s.warnings {
                text += &format!("warning    {w}\n");
            }
            let code = match s.state {
                State::Connected => ExitCode::SUCCESS,
                State::NeedsLogin => ExitCode::from(crate::exit::NEEDS_LOGIN),
                _ => ExitCode::FAILURE,
            };
            (text, code)
        }
    }
}

/// `mcp login NAME`: the server's entry (its `${VAR}` filled from `.env`
/// and the environment), the login, where the tokens went. No token is
/// printed.
fn login(name: &str, profile: &Profile) -> (String, ExitCode) {
    let config = profile.config();
    let Some(entry) = config.mcp_servers.get(name) else {
        return (
            format!(
                "error: no MCP server `{name}` in {}\n",
                config.path.display()
            ),
            ExitCode::from(2),
        );
    };
    let (McpTransport::Http { url, .. }, Some(oauth)) = (&entry.transport, &entry.oauth) else {
        return (
            format!("error: MCP server `{name}` has no `auth: oauth` (only an HTTP server with `auth: oauth` logs in)\n"),
            ExitCode::from(2),
        );
    };
    let secrets = profile.secrets();
    let fill = |s: &String| hermes_mcp_client::interpolate(s, &secrets);
    let ssl_verify = match &entry.ssl_verify {
        SslVerify::CaFile(path) => SslVerify::CaFile(fill(path)),
        other => other.clone(),
    };
    let server = auth::OAuthServer::new(
        name,
        &fill(url),
        ssl_verify,
        auth::fill_settings(oauth, &fill),
        profile.home(),
    );
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return (format!("error: {e}\n"), ExitCode::FAILURE),
    };
    match runtime.block_on(auth::login(&server, None, auth::Browser::System)) {
        Ok(done) => (
            format!(
                "logged in to `{name}` ({}; scopes: {}); tokens in {}\n",
                done.client,
                if done.scopes.is_empty() {
                    "none asked for".to_string()
                } else {
                    done.scopes.join(" ")
                },
                done.token_file.display()
            ),
            ExitCode::SUCCESS,
        ),
        Err(e) => (format!("error: {e}\n"), ExitCode::FAILURE),
    }
}

fn state(s: &ServerStatus) -> &'static str {
    match s.state {
        State::Disabled => "disabled",
        State::Invalid => "invalid",
        State::Connecting => "connecting",
        State::Connected => "connected",
        State::Failed => "failed",
        State::Parked => "parked",
        State::Ended => "ended",
        State::NeedsLogin => "needs login",
    }
}

fn table(status: &[ServerStatus]) -> String {
    let width = status
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut text = format!(
        "{:<width$}  {:<10}  {:>5}  TRANSPORT\n",
        "NAME", "STATE", "TOOLS"
    );
    for s in status {
        text += &format!(
            "{:<width$}  {:<10}  {:>5}  {}\n",
            s.name,
            state(s),
            s.tools.len(),
            s.transport
        );
        if let Some(e) = &s.error {
            text += &format!("{:<width$}  error: {e}\n", "");
        }
        for r in &s.renamed {
            text += &format!("{:<width$}  renamed: {} → {}\n", "", r.tool, r.name);
        }
        for w in &s.warnings {
            text += &format!("{:<width$}  warning: {w}\n", "");
        }
    }
    text
}
