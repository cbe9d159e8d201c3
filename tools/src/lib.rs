//! `hermes-tools`: the built-in tools and their generated registry.
//!
//! Tools live under `src/tools/`: a file with a top-level `#[hermes_tool]`
//! function, or a folder whose `tool.rs` has one (its other files are
//! helpers). `cargo xtask gen` finds them and writes `src/tools/mod.rs`,
//! their module declarations (`crate::tools::file` is `src/tools/file/`),
//! and `src/generated.rs`, which indexes their tools; nothing here lists
//! them.
//!
//! Beside the registry, what an agent embedding these tools wires up:
//! a [`Session`] per conversation (its calls' context; dropping it ends
//! its processes and forgets its state) and a [`ProfileSessions`] per
//! profile (dropping it ends the profile's MCP servers),
//! [`install_agent_loop_executors`] (working `todo` and `memory`),
//! [`set_clarify_callback`] (how `clarify` reaches the user),
//! [`hermes_runtime::approval::set_approval_callback`] (how dangerous
//! commands are approved; without one they are refused),
//! [`shutdown_background_processes`] (no background command outlives the
//! agent), [`process_notifications`] (what background commands report:
//! `notify_on_complete`, `watch_patterns`; drain it) and
//! [`sandbox_helper`] then [`private_environment`] (first things in
//! `main`: the binary serves as the commands' sandbox helper, and the
//! agent's environment is out of its commands' reach).

pub mod agent_loop;
pub mod child_env;
pub mod generated;
pub mod mcp_client;
pub mod procs;
pub mod protected;
pub mod redact;
pub mod sandbox;
mod schema_util;
mod session;
pub mod tools;

pub use agent_loop::install_agent_loop_executors;
pub use hermes_runtime::{Registry, ToolContext};
pub use procs::environ::private_environment;
pub use procs::notify::{notifications as process_notifications, ProcessNotification};
pub use sandbox::sandbox_helper;
pub use session::{ProfileSessions, Session};
pub use tools::clarify::{
    clear_clarify_callback, set_clarify_callback, ClarifyCallback, ClarifyFuture, ClarifyRequest,
};
pub use tools::memory::snapshot as memory_snapshot;
pub use tools::terminal::{check_command, Verdict as CommandVerdict};

/// Entry points of internal parsers for the fuzz targets (`fuzz/`); not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::tools::web::html_to_markdown;
}

/// The registry of every built-in tool.
pub fn registry() -> &'static Registry {
    static REGISTRY: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(|| {
        install_tls_provider();
        Registry::new(&generated::TABLES)
    });
    &REGISTRY
}

/// Makes rustls's ring provider the process default, unless one is set.
/// reqwest is built here with rustls but no provider of its own (ring is
/// the one ureq uses; aws-lc-rs would need a C build), and it panics when
/// it builds a client with none installed. [`registry`] and the MCP client
/// call this; a program that builds reqwest clients (or rmcp's default HTTP
/// transport) before either calls it first.
pub fn install_tls_provider() {
    // Err means one is installed already (ours or the host's): fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Tears down every background process `terminal` started (parent-first,
/// `grace` per step); call it when the agent shuts down. Returns how many
/// were still running.
pub fn shutdown_background_processes(grace: std::time::Duration) -> usize {
    let running = procs::table().shutdown_all(grace);
    tools::terminal::session::shutdown();
    running
}
