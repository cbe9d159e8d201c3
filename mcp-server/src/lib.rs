//! `hermes-mcp-server`: a registry's tools as a Model Context Protocol
//! server (rmcp), over stdio or streamable HTTP: [`serve`], what
//! `hermes-tools serve --mcp` runs, as a library.
//!
//! `tools/list` is `Registry::get_tool_definitions` for the selected toolsets,
//! rewritten to MCP's `{name, description, inputSchema}` by
//! `Dialect::Mcp`. `tools/call` goes through `Registry::dispatch`, the same
//! pipeline as every other caller; a result that is a JSON object with an
//! `error` key is sent as `isError: true` with the error message as its
//! text (what MCP clients expect); any other result is its JSON text.
//! Nothing a client sends can end the server: every failure is a result.
//!
//! The transports live in `stdio.rs` and `http.rs`, each with the limits that
//! keep a client from growing the server without bound ([`Limits`]). On stdin
//! EOF (stdio), SIGINT or SIGHUP, or SIGTERM on stdio, the server tears down
//! the background processes its tools started (parent-first) and exits
//! without waiting for tool calls still running. Over HTTP, SIGTERM drains
//! first: readiness (`/ready`) turns 404, new sessions are refused (503) and
//! the calls in flight have [`ServeOptions::drain_grace`] to finish (a
//! second signal cuts it short); then the same teardown. What stops it from starting, or ends it
//! abnormally, is a [`ServeError`].
//!
//! Notifications about background processes (`terminal` with
//! `notify_on_complete` or `watch_patterns`) are sent to the client whose
//! call started the process as MCP logging notifications
//! (`notifications/message`, logger [`PROCESS_LOGGER`], level `info`, or
//! `warning` when watching stopped), with the event's JSON as `data`.

mod approval;
mod error;
mod http;
mod options;
mod server;
mod stdio;

use std::time::Duration;

use hermes_runtime::Registry;

pub use error::ServeError;
pub use options::{Limits, ServeOptions, TOKEN_ENV};
pub use server::{define_core_toolset, CORE, PROCESS_LOGGER, TOOLS_LIST_TTL};
use server::{forward_process_notifications, HermesServer};

/// How long each step of tearing down a background process may take (the
/// process, then its family) when the server exits.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs the server until stdin closes (stdio), or SIGTERM / SIGINT / SIGHUP
/// arrives (both; SIGTERM over HTTP drains first); then tears down the background processes the tools
/// started. `Err` says why, as a message for stderr: bad options, a failed
/// start, or a session that ended abnormally.
pub fn serve(registry: &'static Registry, options: ServeOptions) -> Result<(), ServeError> {
    define_core_toolset(registry);
    let server = HermesServer::new(registry, &options)?;
    if options.stateless {
        if options.http.is_none() {
            return Err(ServeError::StatelessStdio);
        }
        let stateful = server.stateful_tools();
        if !stateful.is_empty() {
            return Err(ServeError::StatefulTools(stateful));
        }
    }
    let token = match options.token {
        Some(token) if options.http.is_some() => Some(http::vet_token(&token)?),
        _ => None,
    };
    // Resolve and vet the address before starting anything.
    let address = match &options.http {
        Some(addr) => Some(http::address(addr, token.is_some())?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let limits = options.limits;
    let drain_grace = options.drain_grace;
    let stateless = options.stateless;
    let watchers = server.watchers.clone();
    let outcome = runtime.block_on(async move {
        tokio::spawn(forward_process_notifications(watchers));
        let mut stop = StopSignals::install()?;
        let drain = std::sync::Arc::new(http::Drain::default());
        let serve = {
            let drain = std::sync::Arc::clone(&drain);
            async move {
                match address {
                    None => stdio::serve(server, &limits).await,
                    Some(addr) => http::serve(server, addr, token, limits, drain, stateless).await,
                }
            }
        };
        let mut serve = std::pin::pin!(serve);
        let name = tokio::select! {
            outcome = &mut serve => return outcome,
            name = stop.next() => name,
        };
        if name != "SIGTERM" || address.is_none() {
            eprintln!("hermes-tools: {name} received, shutting down");
            return Ok(());
        }
        // SIGTERM over HTTP: drain. Readiness turns 404 and new sessions
        // are refused while the calls in flight finish (the server keeps
        // serving its sessions meanwhile), for `drain_grace` at most.
        drain.begin();
        eprintln!(
            "hermes-tools: SIGTERM received, draining: no new sessions, {} call(s) in flight, \
             waiting up to {} s (--drain-grace)",
            drain.in_flight(),
            drain_grace.as_secs()
        );
        tokio::select! {
            outcome = &mut serve => outcome,
            settled = drain.settled(drain_grace) => {
                if settled {
                    eprintln!("hermes-tools: drained, shutting down");
                } else {
                    eprintln!(
                        "hermes-tools: {} call(s) still running after {} s, shutting down",
                        drain.in_flight(),
                        drain_grace.as_secs()
                    );
                }
                Ok(())
            }
            name = stop.next() => {
                eprintln!("hermes-tools: {name} received while draining, shutting down");
                Ok(())
            }
        }
    });
    // Stop serving first (no call may start another process meanwhile),
    // without waiting for blocking threads: a tool call still running must
    // not hold the exit. Then, parent-first, every background process of
    // this server.
    runtime.shutdown_background();
    let running = hermes_tools::shutdown_background_processes(SHUTDOWN_GRACE);
    if running > 0 {
        eprintln!("hermes-tools: stopped {running} background process(es)");
    }
    outcome
}

/// SIGTERM, SIGINT and SIGHUP, their handlers installed on creation (a
/// signal sent right after the server starts is not lost).
struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> Result<Self, ServeError> {
        use tokio::signal::unix::{signal, SignalKind};
        let install = |kind: SignalKind, name: &'static str| {
            signal(kind).map_err(|error| ServeError::Signal {
                signal: name,
                error,
            })
        };
        Ok(StopSignals {
            term: install(SignalKind::terminate(), "SIGTERM")?,
            int: install(SignalKind::interrupt(), "SIGINT")?,
            hup: install(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The name of the next of them to arrive.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}
