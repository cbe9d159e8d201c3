//! What every backend is: the [`Backend`] trait and where its files are
//! ([`Files`]).

use hermes_procs::Background;
use hermes_runtime::ToolContext;

use super::shell::Shell;
use crate::tools::terminal::run::{TerminalCall, TerminalOutput};

/// Where a backend's files are.
pub enum Files<'b> {
    /// This machine's file system, read and written by the file tools
    /// themselves (with their kernel-level guards).
    ThisMachine,
    /// Another machine's, reached through a shell there.
    Remote(&'b Shell),
}

/// How one session's commands run and where its files are.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Its row's name.
    fn name(&self) -> &'static str;
    /// Runs a `terminal` call that passed the command check: foreground
    /// or background as `call` says; answers as `terminal` does.
    fn terminal(&self, ctx: &ToolContext, call: &TerminalCall) -> Result<TerminalOutput, String>;
    /// Stops what a background process started on the machine that runs
    /// it, before `process` kill tears its local side down (nothing for
    /// the local backend, whose teardown is the whole of it).
    fn kill(&self, ctx: &ToolContext, bg: &Background);
    /// Where the file tools read and write.
    fn files(&self) -> Files<'_>;
    /// Ends everything the session left on the backend (processes, the
    /// connection, the container). Called once, when the session ends.
    fn teardown(&self);
}
