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
//! profile (dropping it ends the profile's terminal sessions and what the
//! agent gave it to hold, such as its MCP clients),
//! [`install_agent_loop_executors`] (working `todo` and `memory`),
//! [`tools::clarify::set_clarify_callback`] (how `clarify` reaches the
//! user), [`hermes_runtime::approval::set_approval_callback`] (how
//! dangerous commands are approved; without one they are refused), and
//! [`shutdown_background_processes`] (no background command outlives the
//! agent). The process layer (`hermes-procs`) has the rest:
//! `sandbox::sandbox_helper` then `environ::private_environment` first
//! in `main` (the binary serves as its commands' sandbox helper, and the
//! agent's environment is out of their reach), and `notify::notifications`
//! (what background commands report: drain it).
//!
//! Each item has one public path: the tools' own items under [`tools`],
//! the registry's tables under [`generated`], the handles at the root.

mod agent_loop;
pub mod backend;
pub mod generated;
mod schema_util;
mod session;
pub mod tools;

pub use agent_loop::install_agent_loop_executors;
pub use session::{Ended, ProfileSessions, Session};

use hermes_runtime::Registry;

/// The registry of every built-in tool.
pub fn registry() -> &'static Registry {
    static REGISTRY: std::sync::LazyLock<Registry> =
        std::sync::LazyLock::new(|| Registry::new(&generated::TABLES));
    // `execute_code` dispatches its scripts' calls through this registry
    // unless the agent names another.
    tools::execute_code::set_default_registry(&REGISTRY);
    &REGISTRY
}

/// Tears down every background process `terminal` started (parent-first,
/// `grace` per step); call it when the agent shuts down. Returns how many
/// were still running.
pub fn shutdown_background_processes(grace: std::time::Duration) -> usize {
    let running = hermes_procs::table().shutdown_all(grace);
    backend::shutdown();
    tools::terminal::session::shutdown();
    running
}
