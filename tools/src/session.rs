//! What one conversation accumulates, held by the agent as a value:
//! [`Session`] (one per conversation) and [`ProfileSessions`] (one per
//! profile the agent serves). Dropping one is its cleanup.
//!
//! A session's calls run with [`Session::context`]: its own id as the task
//! and session id, so its terminal session (working directory, exported
//! variables, resident shells), background processes, todo list, file read
//! state and "session" approvals are its own. When the last handle of a
//! session drops, they end: background processes torn down as at shutdown,
//! idle resident shells ended, the rest forgotten. A profile's handle ends
//! the profile's MCP servers and every terminal session left of it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use hermes_runtime::context::ApprovalCallback;
use hermes_runtime::{Profile, ToolContext};

use hermes_procs::notify::ProcessNotification;
pub use hermes_procs::Ended;

/// One conversation: the context its calls run with, and ownership of
/// what they leave behind (module docs).
#[derive(Debug)]
pub struct Session {
    id: String,
    ctx: ToolContext,
    /// Ended already (by [`Session::end`]): the drop has nothing to do.
    ended: bool,
}

/// A process-unique session id: no two live sessions share state.
fn new_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("session-{}-{n}-{nanos:08x}", std::process::id())
}

impl Session {
    /// A new session of `profile` whose calls run in `cwd`.
    pub fn new(profile: Profile, cwd: impl Into<PathBuf>) -> Self {
        let id = new_id();
        let ctx = ToolContext::new(profile, cwd)
            .with_task_id(id.clone())
            .with_session_id(id.clone());
        Session {
            id,
            ctx,
            ended: false,
        }
    }

    /// A session for a child agent started by `parent`'s call (as
    /// `delegate_task` starts one): the same profile, directory, approval
    /// callback and tool scope, ids of its own, and `parent`'s interrupt
    /// reaching it ([`ToolContext::subagent`]), never the reverse.
    pub fn child_of(parent: &ToolContext) -> Self {
        let id = new_id();
        let ctx = parent.subagent(id.clone()).with_session_id(id.clone());
        Session {
            id,
            ctx,
            ended: false,
        }
    }

    /// Asks `callback` (before the process-wide one) when one of this
    /// session's calls needs approval.
    pub fn with_approval_callback(mut self, callback: ApprovalCallback) -> Self {
        self.ctx = self.ctx.clone().with_approval_callback(callback);
        self
    }

    /// The operator's switch for this session's calls: approvals skipped
    /// (never the hard lines, blocks or the user's deny rules).
    pub fn with_yolo(mut self, on: bool) -> Self {
        self.ctx = self.ctx.clone().with_yolo(on);
        self
    }

    /// The session's id (its calls' task and session id).
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn profile(&self) -> &Profile {
        self.ctx.profile()
    }

    /// The context to dispatch this session's calls with (add a tool call
    /// id or a turn id as needed).
    pub fn context(&self) -> ToolContext {
        self.ctx.clone()
    }

    /// What this session's background processes reported
    /// (`notify_on_complete`, `watch_patterns`) since the last drain,
    /// oldest first; other sessions' events stay queued for them.
    pub fn notifications(&self) -> Vec<ProcessNotification> {
        hermes_procs::notify::notifications().drain_task(&self.id)
    }
}

impl Session {
    /// Ends the session now, waiting until its background processes are
    /// torn down (dropping it does the same; inside a tokio runtime the
    /// teardown then runs on a blocking thread, so a drop never stalls the
    /// runtime). Returns the background processes it still owned, as they
    /// were when it ended (one a sub-agent handed to its parent with
    /// `process` `handoff` is the parent's, not among them).
    pub fn end(mut self) -> Vec<Ended> {
        let ended = self.cleanup()();
        self.ended = true;
        ended
    }

    /// What ending the session does, ready to run anywhere.
    fn cleanup(&self) -> impl FnOnce() -> Vec<Ended> + Send + 'static {
        let ctx = self.ctx.clone();
        let id = self.id.clone();
        move || {
            // The profile's teardown grace (`terminal.daemon_term_grace_seconds`).
            let grace = hermes_procs::grace_for(ctx.profile());
            let ended = hermes_procs::table().end_session(ctx.profile(), &id, grace);
            crate::backend::end(&ctx);
            crate::tools::terminal::session::end(&ctx);
            crate::tools::todo::forget_session(&id);
            crate::tools::file::forget_file_reads(Some(&id));
            hermes_runtime::approval::forget_session(&ctx);
            drop(hermes_procs::notify::notifications().drain_task(&id));
            ended
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let cleanup = self.cleanup();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => drop(handle.spawn_blocking(cleanup)),
            Err(_) => drop(cleanup()),
        }
    }
}

/// A profile the agent serves: its sessions, and what they share (its
/// MCP servers, given to it with [`ProfileSessions::end_with`]). Dropping
/// it ends them: what it was given first, then every terminal session of
/// the profile still left.
pub struct ProfileSessions {
    profile: Profile,
    enders: Vec<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for ProfileSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileSessions")
            .field("profile", &self.profile)
            .field("enders", &self.enders.len())
            .finish()
    }
}

impl ProfileSessions {
    pub fn new(profile: Profile) -> Self {
        ProfileSessions {
            profile,
            enders: Vec::new(),
        }
    }

    /// Runs `end` when this handle drops (in the order given): how the
    /// profile's MCP servers end with it
    /// (`profiles.end_with(clients.ender())`, `hermes-mcp-client`), or
    /// anything else the agent keeps per profile.
    pub fn end_with<T>(&mut self, end: impl FnOnce() -> T + Send + 'static) {
        self.enders.push(Box::new(move || drop(end())));
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// A new session of this profile whose calls run in `cwd`.
    pub fn session(&self, cwd: impl Into<PathBuf>) -> Session {
        Session::new(self.profile.clone(), cwd)
    }
}

impl Drop for ProfileSessions {
    fn drop(&mut self) {
        for end in std::mem::take(&mut self.enders) {
            end();
        }
        crate::backend::end_profile(&self.profile);
        crate::tools::terminal::session::end_profile(&self.profile);
    }
}
