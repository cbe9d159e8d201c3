//! Working `todo` and `memory` for an agent built on the runtime.
//!
//! Both are agent-loop tools (`hermes_runtime::AGENT_LOOP_TOOLS`): their
//! `#[hermes_tool]` functions give the model their schemas, but dispatch
//! never runs a handler of the registry for them; it answers through an
//! executor the agent registers, or with `{"error": "NAME must be handled by
//! the agent loop"}`. [`install_agent_loop_executors`] registers executors
//! that run those same functions (decoding included), so an agent gets the
//! reference behaviour without writing any: a per-session todo list, and
//! memory persisted under the profile's home.

use std::sync::Arc;

use hermes_runtime::{AgentLoopExecutor, Handler, Registry, AGENT_LOOP_TOOLS};

/// Registers an inline executor on `registry` for every agent-loop tool it
/// holds a built-in of (`todo` and `memory` in this crate), running that
/// built-in's function. The others (`session_search`, `delegate_task`) are
/// left to the agent; calling it again replaces the executors with equal ones.
pub fn install_agent_loop_executors(registry: &Registry) {
    for &name in AGENT_LOOP_TOOLS {
        let Some(entry) = registry.builtin(name) else {
            continue;
        };
        let executor: AgentLoopExecutor = match entry.handler {
            Handler::Async(run) => Arc::new(move |ctx, args| run(ctx, args)),
            Handler::Blocking(run) => {
                // The registry's blocking runner: the same accounting as a
                // dispatched blocking tool; a panic reaches dispatch's guard.
                let blocking = registry.blocking_work().clone();
                Arc::new(move |ctx, args| Box::pin(blocking.run(name, move || run(ctx, args))))
            }
        };
        registry.set_agent_loop_executor(name, executor);
    }
}
