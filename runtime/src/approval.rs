//! Approval of risky calls: a capability of the runtime that any tool or
//! hook can use.
//!
//! A pre-call hook answers [`PreCallDecision::NeedsApproval`](crate::hooks::PreCallDecision)
//! and dispatch asks; a tool handler asks itself with [`request`] (async)
//! or [`request_blocking`] (a blocking handler). Either way the question
//! goes through one place:
//!
//! 0. the user's deny rules (`approvals.deny`, [`denied_by_user`]) are
//!    matched by the tool before it asks, and before any of the bypasses
//!    below: a denied command is refused whatever the switches say;
//! 1. the operator's switch (the context's own, [`ToolContext::with_yolo`],
//!    else the process-wide [`yolo`], `HERMES_YOLO_MODE`): everything is
//!    approved without asking (hard blocks are not approvals: the tool
//!    refuses those before it asks); for a shell command
//!    ([`ApprovalNeed::for_command`]) also the profile's `approvals.mode:
//!    off`;
//! 2. the profile's `command_allowlist`: an entry equal to the need's key
//!    approves it like an "always" answer; for a shell command without
//!    shell operators, an entry equal to the command, or a glob (`*`, `?`,
//!    `[...]`) matching it whole, approves it too (as the reference);
//! 3. an earlier "session" answer for the same key in the same session
//!    (the call's task id, else its session id) of the same profile;
//! 4. an earlier "always" answer for the key, remembered per profile in
//!    `<profile home>/approvals.json` (written atomically; no tool and no
//!    command may write it: `hermes_procs::protected`);
//! 5. a cron job ([`ToolContext::for_cron_job`], or `HERMES_CRON_SESSION`
//!    in the process environment) has no user to ask: `approvals.cron_mode`
//!    `approve` runs it, `deny` (the default) refuses;
//! 6. the approval callback: the context's own
//!    ([`ToolContext::with_approval_callback`], e.g. one MCP session's
//!    client), else the process-wide one the embedding agent installed
//!    ([`set_approval_callback`]). It answers once / session / always /
//!    deny, within `approvals.timeout` seconds (no answer in time is a
//!    denial). With no callback the answer is a refusal the model can read
//!    (never a silent run).
//!
//! `approvals.mode: smart` asks the user as `manual` does: the reference's
//! smart mode asks an auxiliary model first and asks the user whenever
//! that model is unsure or unreachable, and this runtime has no auxiliary
//! model. The settings are the profile's `config.yaml` as it is at each
//! question (re-read when it changes); a refusal never names the switch,
//! file or key that would have let the call through.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::config::{ApprovalMode, CronMode};
use crate::context::{ApprovalAnswer, ApprovalCallback, ApprovalRequest};
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

/// The variable that marks the whole process as a cron job (the
/// reference's name): a true value makes every question a cron job's.
pub const CRON_ENV: &str = "HERMES_CRON_SESSION";

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
    /// Whether `detail` is a shell command (see [`ApprovalNeed::for_command`]).
    pub command: bool,
}

impl ApprovalNeed {
    /// A need remembered under `key`, shown with `reason`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        ApprovalNeed {
            key: key.into(),
            reason: reason.into(),
            detail: String::new(),
            command: false,
        }
    }

    /// A shell command that needs approval (the command rules' `key` and
    /// `reason`): `approvals.mode: off` and the `command_allowlist`'s
    /// command entries apply to it.
    pub fn for_command(
        key: impl Into<String>,
        reason: impl Into<String>,
        command: impl Into<String>,
    ) -> Self {
        let mut need = ApprovalNeed::new(key, reason).with_detail(command);
        need.command = true;
        need
    }

    /// Sets what exactly would run.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }
}

static CALLBACK: RwLock<Option<ApprovalCallback>> = RwLock::new(None);

/// The operator's switch for `ctx`'s calls: its own, else the
/// process-wide one.
pub fn yolo_for(ctx: &ToolContext) -> bool {
    ctx.yolo().unwrap_or_else(yolo)
}

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

/// How long [`remember_always`] waits for another process's write.
const ALWAYS_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Adds `key` to the profile's "always" answers: the file is rewritten
/// through a temporary file in the same folder and a rename, so a reader
/// sees the old list or the new one, never half of one. The read, change
/// and rename run under an exclusive lock on the profile folder itself
/// (`flock`), so processes sharing one profile (several `serve` hosts on
/// one volume) do not lose each other's answers; a lock held past
/// 5 s is an error, not a hang.
pub fn remember_always(home: &Path, key: &str) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let _w = ALWAYS_WRITE.lock().unwrap_or_else(|e| e.into_inner());
    std::fs::create_dir_all(home)?;
    let folder = std::fs::File::open(home)?;
    let until = std::time::Instant::now() + ALWAYS_LOCK_WAIT;
    loop {
        match folder.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "{} is locked by another process for over {} s; the answer is not saved",
                        home.display(),
                        ALWAYS_LOCK_WAIT.as_secs()
                    ),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
    let mut keys: Vec<String> = always_approved(home).into_iter().collect();
    if keys.iter().any(|k| k == key) {
        return Ok(());
    }
    keys.push(key.to_string());
    keys.sort();
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

/// Whether `need` is approved without asking: the operator's switch,
/// `approvals.mode: off` (commands), the `command_allowlist`, a "session"
/// answer, an "always" answer.
fn already_approved(ctx: &ToolContext, need: &ApprovalNeed) -> bool {
    if yolo_for(ctx) {
        return true;
    }
    let config = ctx.profile().config();
    if need.command && config.approvals.mode.value == ApprovalMode::Off {
        return true;
    }
    if allowlisted(&config.command_allowlist.value, need) {
        return true;
    }
    session_granted(ctx, &need.key) || always_approved(ctx.profile().home()).contains(&need.key)
}

/// Whether an entry of `allowlist` approves `need`: its key, or (for a
/// command without shell operators) the command itself or a glob matching
/// it whole, case-sensitive, as the reference matches them.
fn allowlisted(allowlist: &[String], need: &ApprovalNeed) -> bool {
    let command = need.detail.trim();
    let plain = need.command && !command.is_empty() && !has_shell_operator(command);
    allowlist.iter().map(|e| e.trim()).any(|entry| {
        !entry.is_empty()
            && (entry == need.key
                || (plain
                    && (entry == command
                        || (entry.contains(['*', '?', '['])
                            && glob(entry, false).is_some_and(|g| g.is_match(command))))))
    })
}

/// Whether `command` chains, redirects or substitutes (a newline, `&&`,
/// `||`, `;`, `&`, `|`, `<`, `>`, a backtick, `$(`): too compound for the
/// allowlist's command entries.
fn has_shell_operator(command: &str) -> bool {
    command.contains(['\n', ';', '&', '|', '<', '>', '`']) || command.contains("$(")
}

/// `pattern` as the reference's `fnmatch` reads it (`*` any text, `?` one
/// character, `[...]` a class, `[!...]` its complement, nothing escaped),
/// matched against the whole text; `None` when it cannot be compiled.
fn glob(pattern: &str, ignore_case: bool) -> Option<regex::Regex> {
    let mut out = String::from(if ignore_case { "(?si)^" } else { "(?s)^" });
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => {
                // A class runs to the next `]` after its first character.
                let mut j = i + 1;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while chars.get(j).is_some_and(|c| *c != ']') {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("\\[");
                } else {
                    let body: String = chars[i + 1..j].iter().collect();
                    let (negated, body) = match body.strip_prefix('!') {
                        Some(rest) => (true, rest.to_string()),
                        None => (false, body),
                    };
                    out.push('[');
                    if negated {
                        out.push('^');
                    }
                    for c in body.chars() {
                        // Literal in fnmatch, syntax in a regex class.
                        if matches!(c, '\\' | '[' | '^' | '&' | '~') {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push(']');
                    i = j;
                }
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    out.push('$');
    regex::Regex::new(&out).ok()
}

/// The user's deny rule (`approvals.deny` of the profile's `config.yaml`)
/// that `command` matches, as the refusal the model reads. Each rule is a
/// glob (as `allowlisted` reads them), without case, matched against
/// every text of `texts` (the command as given and as the tool normalized
/// it, say) whole, and against each command of a list or pipeline in them
/// (split at `;`, `&`, `|`, newlines, `(`, `)`, `{`, `}` and backticks,
/// quotes ignored: a deny rule errs on the side of refusing), with and
/// without the folder of its first word. A rule without `*`, `?` or `[`
/// names a command: it matches that command with any arguments. Call it
/// before any other approval step: nothing approves a denied command.
pub fn denied_by_user(ctx: &ToolContext, texts: &[&str]) -> Option<String> {
    let config = ctx.profile().config();
    let rules = &config.approvals.deny.value;
    if rules.is_empty() {
        return None;
    }
    let mut candidates: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for text in texts {
        let pieces = std::iter::once(text.trim()).chain(
            text.split([';', '&', '|', '\n', '(', ')', '{', '}', '`'])
                .map(str::trim)
                .filter(|c| !c.is_empty()),
        );
        for piece in pieces {
            // `/usr/bin/touch x` is `touch x` to a rule as well.
            let (name, rest) = piece.split_once(char::is_whitespace).unwrap_or((piece, ""));
            if let Some((_, base)) = name.rsplit_once('/').filter(|(_, b)| !b.is_empty()) {
                candidates.push(format!("{base} {rest}").trim_end().to_string().into());
            }
            candidates.push(piece.into());
        }
    }
    let compiled = deny_set(rules);
    let (set, kept) = compiled.as_ref().as_ref()?;
    let first = candidates
        .iter()
        .filter_map(|c| set.matches(c).into_iter().next())
        .min()?;
    let hit = &kept[first];
    Some(format!(
        "BLOCKED: the user's own rules forbid this command (it matches the rule '{hit}'). It \
         was not run, and no approval can run it. Do not retry it, reword it or reach the \
         same result another way; tell the user what you wanted to do."
    ))
}

/// The deny rules compiled into one set (and the rules it holds, in
/// order), kept while the list is the same: a command is judged without
/// compiling anything. `None` when no rule compiles.
type DenySet = Option<(regex::RegexSet, Vec<String>)>;

fn deny_set(rules: &[String]) -> Arc<DenySet> {
    static LAST: Mutex<Option<(Vec<String>, Arc<DenySet>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((list, set)) = last.as_ref() {
        if list.as_slice() == rules {
            return Arc::clone(set);
        }
    }
    let mut kept = Vec::new();
    let mut patterns = Vec::new();
    for rule in rules.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        if !rule.contains(['*', '?', '[']) {
            // A plain rule names a command: `touch` denies `touch x`,
            // `git push` denies `git push origin main` (the reference
            // matches it whole, so `touch` there denies only a bare `touch`).
            patterns.push(format!("(?si)^{}(?:\\s.*)?$", regex::escape(rule)));
            kept.push(rule.to_string());
        } else if let Some(g) = glob(rule, true) {
            patterns.push(g.as_str().to_string());
            kept.push(rule.to_string());
        }
    }
    let set = Arc::new(
        regex::RegexSet::new(&patterns)
            .ok()
            .filter(|_| !kept.is_empty())
            .map(|set| (set, kept)),
    );
    *last = Some((rules.to_vec(), Arc::clone(&set)));
    set
}

/// Whether `ctx` is a cron job's (no user to ask).
fn is_cron_job(ctx: &ToolContext) -> bool {
    static ENV: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    ctx.is_cron_job() || *ENV.get_or_init(|| std::env::var(CRON_ENV).is_ok_and(|v| is_truthy(&v)))
}

/// A cron job's verdict: `approvals.cron_mode` `approve` runs it, `deny`
/// refuses.
fn cron_verdict(ctx: &ToolContext, need: &ApprovalNeed) -> Result<(), String> {
    match ctx.profile().config().approvals.cron_mode.value {
        CronMode::Approve => Ok(()),
        CronMode::Deny => Err(format!(
            "BLOCKED: this needs the user's approval ({}), and a scheduled job has no user \
             to ask, so it was not run. Find a way that does not need it, or leave it for \
             the user.",
            need.reason
        )),
    }
}

fn timed_out(need: &ApprovalNeed, secs: u64) -> String {
    format!(
        "BLOCKED: the user was asked to approve this ({}) and did not answer within {secs} \
         s, so it was not run. Silence is not consent: do not retry it or reword it; wait \
         for the user's instructions.",
        need.reason
    )
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
    if is_cron_job(ctx) {
        return cron_verdict(ctx, &need);
    }
    let Some(callback) = callback_for(ctx) else {
        return Err(no_one_to_ask(&need));
    };
    let secs = ctx.profile().config().approvals.timeout.value;
    let ask = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        callback(request_for(tool, &need, ctx))
    }));
    let answer = match ask {
        Ok(fut) => {
            let answer = crate::catch::CatchUnwind::new(fut);
            match Timed::new(answer, Duration::from_secs(secs)).await {
                Some(answer) => answer.unwrap_or(ApprovalAnswer::Deny),
                None => return Err(timed_out(&need, secs)),
            }
        }
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
    if is_cron_job(ctx) {
        return cron_verdict(ctx, &need);
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

/// A future with a time limit that needs no timer of the executor it runs
/// on (an embedder's runtime may have none): a helper thread wakes it when
/// the limit passes, and ends as soon as the future is dropped.
struct Timed<F> {
    fut: Pin<Box<F>>,
    limit: Duration,
    alarm: Option<Arc<Alarm>>,
}

/// What the helper thread and the future share: whether the limit passed
/// (or the future is gone), and whom to wake.
#[derive(Default)]
struct Alarm {
    state: Mutex<AlarmState>,
    wake: std::sync::Condvar,
}

#[derive(Default)]
struct AlarmState {
    rang: bool,
    gone: bool,
    waker: Option<std::task::Waker>,
}

impl<F: Future> Timed<F> {
    fn new(fut: F, limit: Duration) -> Self {
        Timed {
            fut: Box::pin(fut),
            limit,
            alarm: None,
        }
    }
}

impl<F: Future> Future for Timed<F> {
    /// `None` when the limit passed first.
    type Output = Option<F::Output>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let std::task::Poll::Ready(out) = self.fut.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(out));
        }
        let limit = self.limit;
        let alarm = self.alarm.get_or_insert_with(|| {
            let alarm = Arc::new(Alarm::default());
            let theirs = Arc::clone(&alarm);
            let started = std::thread::Builder::new()
                .name("hermes-approval-timeout".into())
                .spawn(move || theirs.run(limit));
            if started.is_err() {
                // No thread for the timer: the limit counts as passed.
                alarm.lock().rang = true;
            }
            alarm
        });
        let mut state = alarm.lock();
        if state.rang {
            return std::task::Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        std::task::Poll::Pending
    }
}

impl<F> Drop for Timed<F> {
    fn drop(&mut self) {
        if let Some(alarm) = &self.alarm {
            alarm.lock().gone = true;
            alarm.wake.notify_all();
        }
    }
}

impl Alarm {
    fn lock(&self) -> std::sync::MutexGuard<'_, AlarmState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleeps until `limit` passes or the future is gone; rings in the first case.
    fn run(&self, limit: Duration) {
        let end = std::time::Instant::now() + limit;
        let mut state = self.lock();
        loop {
            if state.gone {
                return;
            }
            let now = std::time::Instant::now();
            if now >= end {
                state.rang = true;
                if let Some(waker) = state.waker.take() {
                    waker.wake();
                }
                return;
            }
            state = self
                .wake
                .wait_timeout(state, end - now)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }
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
    fn globs_read_as_fnmatch_reads_them() {
        let m = |p: &str, t: &str| glob(p, false).is_some_and(|g| g.is_match(t));
        assert!(m("git push --force*", "git push --force origin main"));
        assert!(!m("git push --force*", "echo git push --force"));
        assert!(m("rm -?f *", "rm -rf /tmp/x\ny"));
        assert!(m("[a-c]at", "bat") && !m("[!a-c]at", "bat") && m("[!a-c]at", "rat"));
        // Class syntax of the regex crate is literal in fnmatch.
        assert!(m("[&&]x", "&x") && m("[~^]x", "^x") && m("[\\]", "\\"));
        // An unclosed class is a literal `[`; regex syntax is literal.
        assert!(m("a[b", "a[b") && m("a.b(c)+", "a.b(c)+") && !m("a.b", "axb"));
        assert!(glob("TOUCH*", true).is_some_and(|g| g.is_match("touch x")));
        assert!(!m("TOUCH*", "touch x"));
    }

    #[test]
    fn allowlist_commands_need_no_shell_operators() {
        let need = |cmd: &str| ApprovalNeed::for_command("recursive delete", "r", cmd);
        let list = vec!["rm -r build*".to_string(), "SQL DROP".to_string()];
        assert!(allowlisted(&list, &need("rm -r build/out")));
        for cmd in [
            "rm -r build; rm -r /x",
            "rm -r build && x",
            "rm -r build$(x)",
            "rm -r build > f",
        ] {
            assert!(!allowlisted(&list, &need(cmd)), "{cmd}");
        }
        // A key approves whatever the command; a tool's need is no command.
        let keyed = ApprovalNeed::for_command("SQL DROP", "r", "psql -c 'drop table x'; y");
        assert!(allowlisted(&list, &keyed));
        let other = ApprovalNeed::new("k", "r").with_detail("rm -r build/out");
        assert!(!allowlisted(&list, &other));
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
