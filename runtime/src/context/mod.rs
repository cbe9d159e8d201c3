//! The call context handed to every tool: ids, the profile, the working
//! directory, the tools enabled in the session, who answers its
//! approval questions ([`ApprovalCallback`]: the question and the answer
//! types live here, beside the context they carry; the policy that asks is
//! [`crate::approval`]), and who answers a form the call's work asks
//! ([`FormCallback`]: an MCP server's elicitation, passed on to the caller).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod profile;

pub use profile::Profile;

use crate::cancel::Cancellation;

#[derive(Debug, Clone)]
struct Inner {
    task_id: Option<String>,
    session_id: Option<String>,
    tool_call_id: Option<String>,
    turn_id: Option<String>,
    /// The task that spawned this one, for a sub-agent's calls.
    parent_task_id: Option<String>,
    profile: Profile,
    cwd: PathBuf,
    enabled_tools: Option<Vec<String>>,
    /// Shared by clones: while > 0, post-call hooks are suppressed.
    quiet: Arc<AtomicUsize>,
    /// Who answers approval questions for calls with this context, before
    /// the process-wide callback.
    approver: Approver,
    /// Who answers a form for calls with this context (the caller).
    form: FormAsker,
    /// Cancelled when the calls made with this context should stop
    /// (`cancel.rs`); a blocking call gets a child of it.
    cancel: Cancellation,
    /// A cron job's call: no user to ask (`approvals.cron_mode` decides).
    cron: bool,
    /// The operator's switch for these calls only; `None`: the
    /// process-wide one ([`crate::approval::yolo`]).
    yolo: Option<bool>,
}

/// A context's own approval callback (`Debug` for [`Inner`]).
#[derive(Clone, Default)]
struct Approver(Option<ApprovalCallback>);

impl std::fmt::Debug for Approver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Approver(set)"
        } else {
            "Approver(none)"
        })
    }
}

/// A context's own form callback (`Debug` for [`Inner`]).
#[derive(Clone, Default)]
struct FormAsker(Option<FormCallback>);

impl std::fmt::Debug for FormAsker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "FormAsker(set)"
        } else {
            "FormAsker(none)"
        })
    }
}

/// What a tool call runs with. Cheap to clone (one `Arc`).
#[derive(Debug, Clone)]
pub struct ToolContext {
    inner: Arc<Inner>,
}

impl ToolContext {
    /// A context for `profile`, working in `cwd`, with no ids set.
    pub fn new(profile: Profile, cwd: impl Into<PathBuf>) -> Self {
        ToolContext {
            inner: Arc::new(Inner {
                task_id: None,
                session_id: None,
                tool_call_id: None,
                turn_id: None,
                parent_task_id: None,
                profile,
                cwd: cwd.into(),
                enabled_tools: None,
                quiet: Arc::new(AtomicUsize::new(0)),
                approver: Approver::default(),
                form: FormAsker::default(),
                cancel: Cancellation::new(),
                cron: false,
                yolo: None,
            }),
        }
    }

    /// The default profile, working in the process's current directory.
    pub fn current_dir() -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        ToolContext::new(Profile::default_home(), cwd)
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        f(Arc::make_mut(&mut self.inner));
        self
    }

    pub fn with_task_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|i| i.task_id = Some(id))
    }

    pub fn with_session_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|i| i.session_id = Some(id))
    }

    pub fn with_tool_call_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|i| i.tool_call_id = Some(id))
    }

    pub fn with_turn_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|i| i.turn_id = Some(id))
    }

    /// The context of a sub-agent spawned by this context's task: same
    /// profile and directory, its own task id, distinguishable from a
    /// top-level context by [`ToolContext::is_subagent`].
    pub fn subagent(&self, task_id: impl Into<String>) -> Self {
        let parent = self.task_id().map(str::to_string);
        let task_id = task_id.into();
        let mut inner = (*self.inner).clone();
        inner.parent_task_id = Some(parent.unwrap_or_default());
        inner.task_id = Some(task_id);
        inner.tool_call_id = None;
        inner.quiet = Arc::new(AtomicUsize::new(0));
        // An interrupt of the parent reaches the sub-agent, not back.
        inner.cancel = self.inner.cancel.child();
        ToolContext {
            inner: Arc::new(inner),
        }
    }

    pub fn turn_id(&self) -> Option<&str> {
        self.inner.turn_id.as_deref()
    }

    /// Whether this context belongs to a sub-agent.
    pub fn is_subagent(&self) -> bool {
        self.inner.parent_task_id.is_some()
    }

    /// The task that spawned this sub-agent's task.
    pub fn parent_task_id(&self) -> Option<&str> {
        self.inner.parent_task_id.as_deref()
    }

    /// Suppresses post-call hooks for calls made with this context (and its
    /// clones) while the guard lives, across `.await`s: for internal calls
    /// such as compaction.
    pub fn suppress_hooks(&self) -> HookSuppression {
        self.inner.quiet.fetch_add(1, Ordering::AcqRel);
        HookSuppression {
            quiet: self.inner.quiet.clone(),
        }
    }

    /// Whether a [`HookSuppression`] guard is alive for this context.
    pub fn hooks_suppressed(&self) -> bool {
        self.inner.quiet.load(Ordering::Acquire) > 0
    }

    /// Approval questions of calls with this context go to `callback`
    /// first (e.g. the client of one MCP session); see [`crate::approval`].
    pub fn with_approval_callback(self, callback: ApprovalCallback) -> Self {
        self.edit(|i| i.approver = Approver(Some(callback)))
    }

    /// The operator's switch for calls with this context (an embedder's
    /// session), over the process-wide one; see [`crate::approval`].
    pub fn with_yolo(self, on: bool) -> Self {
        self.edit(|i| i.yolo = Some(on))
    }

    /// The context's own operator switch, if it has one.
    pub fn yolo(&self) -> Option<bool> {
        self.inner.yolo
    }

    /// The context's own approval callback, if it has one.
    pub fn approval_callback(&self) -> Option<&ApprovalCallback> {
        self.inner.approver.0.as_ref()
    }

    /// A form that work of calls with this context asks (an MCP server's
    /// elicitation while it runs the call) goes to `callback`: the one who
    /// made the call (e.g. the client of one `serve --mcp` session).
    pub fn with_form_callback(self, callback: FormCallback) -> Self {
        self.edit(|i| i.form = FormAsker(Some(callback)))
    }

    /// The context's form callback, if the caller can be asked.
    pub fn form_callback(&self) -> Option<&FormCallback> {
        self.inner.form.0.as_ref()
    }

    /// Calls made with this context stop when `signal` is cancelled: an
    /// embedder's interrupt. Each blocking call also gets a signal of its
    /// own, a child of this one, cancelled when the call is abandoned.
    pub fn with_cancellation(self, signal: Cancellation) -> Self {
        self.edit(|i| i.cancel = signal)
    }

    /// The signal this call (or these calls) should stop on; see
    /// [`crate::cancel`].
    pub fn cancellation(&self) -> &Cancellation {
        &self.inner.cancel
    }

    /// Marks calls with this context as a cron job's: there is no user to
    /// ask, so a question needing approval is answered by the profile's
    /// `approvals.cron_mode` (`deny` by default).
    pub fn for_cron_job(self) -> Self {
        self.edit(|i| i.cron = true)
    }

    /// Whether this context is a cron job's ([`ToolContext::for_cron_job`]).
    pub fn is_cron_job(&self) -> bool {
        self.inner.cron
    }

    pub fn with_enabled_tools(self, tools: Vec<String>) -> Self {
        self.edit(|i| i.enabled_tools = Some(tools))
    }

    pub fn task_id(&self) -> Option<&str> {
        self.inner.task_id.as_deref()
    }

    pub fn session_id(&self) -> Option<&str> {
        self.inner.session_id.as_deref()
    }

    pub fn tool_call_id(&self) -> Option<&str> {
        self.inner.tool_call_id.as_deref()
    }

    pub fn profile(&self) -> &Profile {
        &self.inner.profile
    }

    /// The directory relative paths resolve against.
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The tools enabled in the session, when the agent said.
    pub fn enabled_tools(&self) -> Option<&[String]> {
        self.inner.enabled_tools.as_deref()
    }

    /// Resolves `path` against the working directory.
    pub fn resolve(&self, path: impl AsRef<Path>) -> PathBuf {
        self.cwd().join(path)
    }
}

/// While alive, post-call hooks are not run for the context it came from.
#[derive(Debug)]
pub struct HookSuppression {
    quiet: Arc<AtomicUsize>,
}

impl Drop for HookSuppression {
    fn drop(&mut self) {
        self.quiet.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The question the approval callback gets.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The tool that asks.
    pub tool: String,
    pub key: String,
    pub reason: String,
    pub detail: String,
    /// The call's context: session, task and profile, to reach the right user.
    pub ctx: ToolContext,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalAnswer {
    /// Run this call.
    Once,
    /// Run it, and every call with the same key in this session.
    Session,
    /// Run it, and every call with the same key of this profile from now on.
    Always,
    /// Do not run it.
    Deny,
}

impl ApprovalAnswer {
    /// `once`, `session`, `always` or `deny` (any case, surrounding space
    /// ignored; `yes` / `y` / `approve` mean once, `no` / `n` deny).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "once" | "o" | "yes" | "y" | "approve" => Some(ApprovalAnswer::Once),
            "session" | "s" => Some(ApprovalAnswer::Session),
            "always" | "a" => Some(ApprovalAnswer::Always),
            "deny" | "d" | "no" | "n" => Some(ApprovalAnswer::Deny),
            _ => None,
        }
    }

    /// The answer's name, as [`ApprovalAnswer::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalAnswer::Once => "once",
            ApprovalAnswer::Session => "session",
            ApprovalAnswer::Always => "always",
            ApprovalAnswer::Deny => "deny",
        }
    }
}

/// The callback's answer, when it comes.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = ApprovalAnswer> + Send>>;

/// How the agent asks its user.
pub type ApprovalCallback = Arc<dyn Fn(ApprovalRequest) -> ApprovalFuture + Send + Sync>;

/// A form for the one who made a call: a message and the fields wanted,
/// a JSON Schema object of flat properties (MCP's form elicitation).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FormRequest {
    pub message: String,
    pub schema: serde_json::Value,
}

impl FormRequest {
    pub fn new(message: impl Into<String>, schema: serde_json::Value) -> Self {
        FormRequest {
            message: message.into(),
            schema,
        }
    }
}

/// The answer to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// The fields given.
    Accept(serde_json::Map<String, serde_json::Value>),
    Decline,
    Cancel,
}

/// A form callback's answer, when it comes.
pub type FormFuture = Pin<Box<dyn Future<Output = FormAnswer> + Send>>;

/// How a form reaches the one who made the call.
pub type FormCallback = Arc<dyn Fn(FormRequest) -> FormFuture + Send + Sync>;
