//! Approval of risky calls: a capability of the runtime that any tool or
//! hook can use.
//!
//! A pre-call hook answers [`PreCallDecision::NeedsApproval`](crate::hooks::PreCallDecision)
//! and dispatch asks; a tool handler asks itself with [`request`] (async)
//! or [`request_blocking`] (a blocking handler). Either way the question
//! goes through one place:
//!
//! 1. the operator's switch ([`yolo`], `HERMES_YOLO_MODE`): everything is
//!    approved without asking (hard blocks are not approvals: the tool
//!    refuses those before it asks);
//! 2. an earlier "session" answer for the same key in the same session
//!    (the call's task id, else its session id) of the same profile;
//! 3. an earlier "always" answer for the key, remembered per profile in
//!    `<profile home>/approvals.json` (written atomically);
//! 4. the approval callback: the context's own
//!    ([`ToolContext::with_approval_callback`], e.g. one MCP session's
//!    client), else the process-wide one the embedding agent installed
//!    ([`set_approval_callback`]). It answers once / session / always /
//!    deny. With no callback the answer is a refusal the model can read
//!    (never a silent run).

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::ToolContext;

/// The environment variable of the operator's switch (the reference's
/// name): a true value (`1`, `true`, `yes`, `on`) turns approval off for
/// the whole process. Read once, at the first approval question.
pub const YOLO_ENV: &str = "HERMES_YOLO_MODE";

/// The file under a profile's home that keeps its "always" answers.
pub const ALWAYS_FILE: &str = "approvals.json";

/// Sessions whose "session" answers are remembered at once; past it the
/// oldest session's answers are forgotten (it is asked again).
pub const MAX_REMEMBERED_SESSIONS: usize = 4096;

/// The largest `approvals.json` read; a larger one counts as empty.
const MAX_ALWAYS_FILE_BYTES: u64 = 1 << 20;

/// What needs approval: the key an answer is remembered under (for
/// `terminal`, the dangerous pattern's description, as in the reference),
/// the reason shown to the user, and what exactly would run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalNeed {
    pub key: String,
    pub reason: String,
    /// What the user is asked to approve (e.g. the command line).
    pub detail: String,
}

impl ApprovalNeed {
    /// A need remembered under `key`, shown with `reason`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        ApprovalNeed {
            key: key.into(),
            reason: reason.into(),
            detail: String::new(),
        }
    }

    /// Sets what exactly would run.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
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

static CALLBACK: RwLock<Option<ApprovalCallback>> = RwLock::new(None);

/// Installs the process-wide approval callback (a context's own, set with
/// [`ToolContext::with_approval_callback`], is asked first).
pub fn set_approval_callback(callback: ApprovalCallback) {
    *CALLBACK.write().unwrap_or_else(|e| e.into_inner()) = Some(callback);
}

/// Removes the process-wide callback: approvals are refused again.
pub fn clear_approval_callback() {
    *CALLBACK.write().unwrap_or_else(|e| e.into_inner()) = None;
}

fn callback_for(ctx: &ToolContext) -> Option<ApprovalCallback> {
    ctx.approval_callback()
        .cloned()
        .or_else(|| CALLBACK.read().unwrap_or_else(|e| e.into_inner()).clone())
}

/// 0: not read yet; 1: off; 2: on.
static YOLO: AtomicU8 = AtomicU8::new(0);

/// Whether the operator turned approval off ([`set_yolo`], or
/// [`YOLO_ENV`] read at the first question).
pub fn yolo() -> bool {
    match YOLO.load(Ordering::Acquire) {
        0 => {
            let on = std::env::var(YOLO_ENV).is_ok_and(|v| is_truthy(&v));
            // A concurrent `set_yolo` wins over the environment.
            let _ = YOLO.compare_exchange(0, 1 + u8::from(on), Ordering::AcqRel, Ordering::Acquire);
            YOLO.load(Ordering::Acquire) == 2
        }
        state => state == 2,
    }
}

/// The operator's switch: `true` approves everything that asks (the
/// `--yolo` flag of the `hermes-tools` binary sets it).
pub fn set_yolo(on: bool) {
    YOLO.store(1 + u8::from(on), Ordering::Release);
}

fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// "Session" answers: (profile home, session key) → approved keys, the
/// oldest session forgotten past [`MAX_REMEMBERED_SESSIONS`].
#[derive(Default)]
struct SessionGrants {
    keys: HashMap<(PathBuf, String), HashSet<String>>,
    order: VecDeque<(PathBuf, String)>,
}

static GRANTS: Mutex<Option<SessionGrants>> = Mutex::new(None);

fn with_grants<T>(f: impl FnOnce(&mut SessionGrants) -> T) -> T {
    let mut guard = GRANTS.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(SessionGrants::default))
}

/// The session an answer is remembered for: the task id, else the session
/// id, else the empty key (one per profile).
fn session_of(ctx: &ToolContext) -> (PathBuf, String) {
    let key = ctx.task_id().or(ctx.session_id()).unwrap_or_default();
    (ctx.profile().home().to_path_buf(), key.to_string())
}

fn session_granted(ctx: &ToolContext, key: &str) -> bool {
    let session = session_of(ctx);
    with_grants(|g| g.keys.get(&session).is_some_and(|k| k.contains(key)))
}

fn grant_session(ctx: &ToolContext, key: &str) {
    let session = session_of(ctx);
    with_grants(|g| {
        if !g.keys.contains_key(&session) {
            while g.keys.len() >= MAX_REMEMBERED_SESSIONS {
                match g.order.pop_front() {
                    Some(old) => {
                        g.keys.remove(&old);
                    }
                    None => break,
                }
            }
            g.order.push_back(session.clone());
        }
        g.keys.entry(session).or_default().insert(key.to_string());
    });
}

/// Forgets the "session" answers of one session (the task id, else the
/// session id, of `ctx`), e.g. when the agent ends it.
pub fn forget_session(ctx: &ToolContext) {
    let session = session_of(ctx);
    with_grants(|g| {
        g.keys.remove(&session);
        g.order.retain(|s| *s != session);
    });
}

/// The keys a profile approved "always".
pub fn always_approved(home: &Path) -> HashSet<String> {
    let path = home.join(ALWAYS_FILE);
    let Ok(meta) = std::fs::metadata(&path) else {
        return HashSet::new();
    };
    if meta.len() > MAX_ALWAYS_FILE_BYTES {
        tracing::warn!(file = %path.display(), "approvals file too large; ignored");
        return HashSet::new();
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return HashSet::new();
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => v["always"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) => {
            tracing::warn!(file = %path.display(), "approvals file unreadable ({e}); ignored");
            HashSet::new()
        }
    }
}

/// Serializes writers of `approvals.json` within the process.
static ALWAYS_WRITE: Mutex<()> = Mutex::new(());

/// Adds `key` to the profile's "always" answers: the file is rewritten
/// through a temporary file in the same folder and a rename, so a reader
/// sees the old list or the new one, never half of one.
pub fn remember_always(home: &Path, key: &str) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let _w = ALWAYS_WRITE.lock().unwrap_or_else(|e| e.into_inner());
    let mut keys: Vec<String> = always_approved(home).into_iter().collect();
    if keys.iter().any(|k| k == key) {
        return Ok(());
    }
    keys.push(key.to_string());
    keys.sort();
    std::fs::create_dir_all(home)?;
    let text = serde_json::to_string_pretty(&serde_json::json!({ "always": keys }))
        .map_err(std::io::Error::other)?;
    let tmp = home.join(format!(
        ".{ALWAYS_FILE}.{}.{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = write_private(&tmp, text.as_bytes())
        .and_then(|()| std::fs::rename(&tmp, home.join(ALWAYS_FILE)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Whether `need` is approved without asking: the operator's switch, a
/// "session" answer, an "always" answer.
fn already_approved(ctx: &ToolContext, need: &ApprovalNeed) -> bool {
    yolo()
        || session_granted(ctx, &need.key)
        || always_approved(ctx.profile().home()).contains(&need.key)
}

/// The refusal when nobody can be asked.
fn no_one_to_ask(need: &ApprovalNeed) -> String {
    format!(
        "BLOCKED: this needs the user's approval ({}), and no one can approve it here, \
         so it was not run. Do not retry it or reword it to get around the check: tell \
         the user what you wanted to run and why; they can run it themselves.",
        need.reason
    )
}

fn denied(need: &ApprovalNeed) -> String {
    format!(
        "BLOCKED: the user denied this ({}). It was not run. Do not retry it, reword it \
         or reach the same result another way; stop and wait for the user's instructions.",
        need.reason
    )
}

/// Records `answer` and turns it into the verdict.
fn settle(ctx: &ToolContext, need: &ApprovalNeed, answer: ApprovalAnswer) -> Result<(), String> {
    match answer {
        ApprovalAnswer::Once => {}
        ApprovalAnswer::Session => grant_session(ctx, &need.key),
        ApprovalAnswer::Always => {
            grant_session(ctx, &need.key);
            if let Err(e) = remember_always(ctx.profile().home(), &need.key) {
                tracing::warn!("could not remember an \"always\" approval: {e}");
            }
        }
        ApprovalAnswer::Deny => return Err(denied(need)),
    }
    Ok(())
}

fn request_for(tool: &str, need: &ApprovalNeed, ctx: &ToolContext) -> ApprovalRequest {
    ApprovalRequest {
        tool: tool.to_string(),
        key: need.key.clone(),
        reason: need.reason.clone(),
        detail: need.detail.clone(),
        ctx: ctx.clone(),
    }
}

/// Asks for approval of `need` on behalf of `tool`. `Ok(())`: go ahead;
/// `Err(message)`: do not run, and tell the model `message`.
pub async fn request(ctx: &ToolContext, tool: &str, need: ApprovalNeed) -> Result<(), String> {
    if already_approved(ctx, &need) {
        return Ok(());
    }
    let Some(callback) = callback_for(ctx) else {
        return Err(no_one_to_ask(&need));
    };
    let ask = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        callback(request_for(tool, &need, ctx))
    }));
    let answer = match ask {
        Ok(fut) => crate::catch::CatchUnwind::new(fut)
            .await
            .unwrap_or(ApprovalAnswer::Deny),
        Err(_) => ApprovalAnswer::Deny,
    };
    settle(ctx, &need, answer)
}

/// [`request`] from a blocking handler (a tool on the blocking pool): the
/// callback's future runs on a helper thread, on the current tokio
/// runtime when there is one (its timers and I/O), else on its own.
pub fn request_blocking(ctx: &ToolContext, tool: &str, need: ApprovalNeed) -> Result<(), String> {
    if already_approved(ctx, &need) {
        return Ok(());
    }
    if callback_for(ctx).is_none() {
        return Err(no_one_to_ask(&need));
    }
    let handle = tokio::runtime::Handle::try_current().ok();
    let fut = request(ctx, tool, need.clone());
    let outcome = std::thread::scope(|s| {
        s.spawn(move || match handle {
            Some(handle) => handle.block_on(fut),
            None => match tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
            {
                Ok(rt) => rt.block_on(fut),
                Err(e) => Err(format!("approval could not be asked: {e}")),
            },
        })
        .join()
    });
    outcome.unwrap_or_else(|_| Err(denied(&need)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse() {
        for (text, answer) in [
            ("once", ApprovalAnswer::Once),
            (" Session ", ApprovalAnswer::Session),
            ("ALWAYS", ApprovalAnswer::Always),
            ("deny", ApprovalAnswer::Deny),
            ("n", ApprovalAnswer::Deny),
        ] {
            assert_eq!(ApprovalAnswer::parse(text), Some(answer));
            assert_eq!(ApprovalAnswer::parse(answer.as_str()), Some(answer));
        }
        assert_eq!(ApprovalAnswer::parse("maybe"), None);
    }

    #[test]
    fn always_file_round_trip_is_atomic_and_private() {
        let home = tempfile_dir();
        remember_always(&home, "recursive delete").unwrap();
        remember_always(&home, "recursive delete").unwrap();
        remember_always(&home, "SQL DROP").unwrap();
        let keys = always_approved(&home);
        assert_eq!(keys.len(), 2);
        assert!(keys.contains("SQL DROP"));
        let leftovers: Vec<_> = std::fs::read_dir(&home)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name() != ALWAYS_FILE)
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.join(ALWAYS_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0);
        }
        std::fs::write(home.join(ALWAYS_FILE), "not json").unwrap();
        assert!(always_approved(&home).is_empty());
        let _ = std::fs::remove_dir_all(&home);
    }

    fn tempfile_dir() -> PathBuf {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hermes-approval-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
