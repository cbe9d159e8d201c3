//! The local backend: commands on this machine (the session's resident
//! shells, the sandbox, containment, teardown: `hermes_procs`), files
//! read and written by the file tools themselves.

use std::sync::Arc;

use hermes_procs::Background;
use hermes_runtime::ToolContext;

use super::base::{Backend, Files};
use crate::tools::terminal::run::{run_local, TerminalCall, TerminalOutput};

/// This machine. It holds nothing of its own: a session's state is the
/// terminal session's and the process table's, ended with the session.
#[derive(Debug)]
pub struct Local;

/// The one `Local`, shared by every session.
pub fn open(_ctx: &ToolContext) -> Result<Arc<dyn Backend>, String> {
    static LOCAL: std::sync::LazyLock<Arc<dyn Backend>> =
        std::sync::LazyLock::new(|| Arc::new(Local));
    Ok(LOCAL.clone())
}

impl Backend for Local {
    fn name(&self) -> &'static str {
        "local"
    }

    fn terminal(&self, ctx: &ToolContext, call: &TerminalCall) -> Result<TerminalOutput, String> {
        run_local(ctx, call)
    }

    fn kill(&self, _ctx: &ToolContext, _bg: &Background) {}

    fn files(&self) -> Files<'_> {
        Files::ThisMachine
    }

    fn teardown(&self) {}
}
