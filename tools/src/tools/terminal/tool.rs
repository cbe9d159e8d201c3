//! The `terminal` toolset: run shell commands (`terminal`) and manage the
//! ones started in the background (`process`). Processes, their environment
//! and their teardown live in `hermes_procs` and `hermes_procs::child_env`.

use std::time::Duration;

use hermes_macros::hermes_tool;
use hermes_runtime::approval::{self, ApprovalNeed};
use hermes_runtime::ToolContext;
use schemars::JsonSchema;
use serde::Deserialize;
use std::borrow::Cow;

use serde_json::{json, Value};

use hermes_procs::redact::{redact_command_output, redact_for, Scope};
use hermes_procs::{self as procs, output::last_chars, Background, WriteOutcome};

pub(crate) mod exit_codes;
mod exported;
pub(crate) mod run;

mod guard;
mod judge;
mod parse;
mod rules;
pub mod session;
mod syntax;

pub use guard::Verdict;
use run::wait_or_cancel;
pub use run::{TerminalCall, TerminalOutput, DEFAULT_TIMEOUT_SECS, MAX_FOREGROUND_TIMEOUT_SECS};

/// `wait` without a timeout waits this long, in seconds; never longer than the maximum.
const DEFAULT_WAIT_SECS: u64 = 180;
const MAX_WAIT_SECS: u64 = 600;
/// Lines `log` returns when no limit is given.
const DEFAULT_LOG_LINES: u64 = 200;

/// Run a shell command and return its output and exit code.
///
/// The command runs in a non-interactive shell with stdin closed, in its own
/// process group, with a clean environment: a standard PATH plus the
/// profile's own secrets, nothing inherited from the agent. stdout and stderr
/// come back together; past 50,000 bytes the start and the end are kept and
/// the cut is marked.
///
/// Foreground (default): waits until the command ends or `timeout` seconds
/// pass; on timeout the command and every process it started are terminated.
/// Processes a foreground command leaves running are terminated when it ends,
/// so start servers and watchers with `background: true` instead and manage
/// them with `process`. Background: `notify_on_complete` for bounded jobs,
/// `watch_patterns` for rare signals of long-lived ones.
#[hermes_tool(
    toolset = "terminal",
    emoji = "💻",
    max_result_chars = 100000,
    destructive,
    idempotent = false,
    open_world,
    concurrency = "exclusive"
)]
// The model's parameters, one per argument, as every tool declares them.
#[allow(clippy::too_many_arguments)]
pub fn terminal(
    ctx: &ToolContext,
    /// The shell command to run (bash syntax where bash is installed; at
    /// most 128,000 characters: a longer script goes in a file).
    command: String,
    /// Start the command in the background and return at once with a
    /// `session_id` for `process` (default false).
    background: Option<bool>,
    /// Seconds to wait for a foreground command (default 180, at most 600).
    /// It returns as soon as the command ends.
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
    /// Working directory for this command, absolute or relative to the
    /// session's working directory (default: the session's).
    workdir: Option<String>,
    /// Run on a pseudo-terminal, for interactive programs (a REPL, a
    /// prompt); with `background`, answer it through `process` submit
    /// (default false).
    pty: Option<bool>,
    /// With `background`: be notified once when the command exits (default
    /// false). Not together with `watch_patterns`.
    notify_on_complete: Option<bool>,
    /// With `background`: strings to watch the output for; a line that
    /// contains one sends a notification (at most one per 15 seconds).
    watch_patterns: Option<Vec<String>>,
) -> Result<TerminalOutput, String> {
    if command.trim().is_empty() {
        return Err("command is empty: give the shell command to run".into());
    }
    if command.contains('\0') {
        return Err("command contains a NUL character, which no shell can run".into());
    }
    guard_command(ctx, "terminal", &command)?;
    if ctx.cancellation().is_cancelled() {
        return Err("The call was cancelled before the command started; it did not run".into());
    }
    let call = TerminalCall {
        command,
        background: background.unwrap_or(false),
        timeout,
        workdir,
        pty: pty.unwrap_or(false),
        notify_on_complete: notify_on_complete.unwrap_or(false),
        watch_patterns: watch_patterns.unwrap_or_default(),
    };
    crate::backend::of(ctx)?.terminal(ctx, &call)
}

/// What `process` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProcessAction {
    List,
    Poll,
    Log,
    Wait,
    Kill,
    Write,
    Submit,
    Close,
    Handoff,
}

/// Manage the background processes started by `terminal` with `background: true`.
///
/// Actions: `list` (every background process of this profile), `poll`
/// (status and the latest output), `log` (the output by lines: the last
/// `limit` lines, or `limit` lines from line `offset`), `wait` (block until
/// it exits or `timeout` seconds pass), `kill` (terminate it and every
/// process it started: the process gets SIGTERM and a grace period to stop
/// its children, then survivors get SIGTERM, then SIGKILL), `write` (send
/// `data` to its stdin as is), `submit` (send `data` and Enter, to answer a
/// prompt), `close` (end its stdin: EOF), `handoff` (a sub-agent only:
/// give a process it started to the agent that delegated its task, so it
/// keeps running when the sub-agent ends; otherwise a sub-agent's
/// processes are killed when it finishes).
#[hermes_tool(
    toolset = "terminal",
    emoji = "⚙️",
    destructive,
    idempotent = false,
    open_world = false,
    concurrency = "exclusive"
)]
pub fn process(
    ctx: &ToolContext,
    /// What to do: list, poll, log, wait, kill, write, submit, close or
    /// handoff.
    action: ProcessAction,
    /// The background process's id (`session_id` from `terminal`); needed
    /// by every action but list.
    session_id: Option<String>,
    /// For wait: seconds to block at most (default 180, at most 600).
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
    /// For log: the first line to return, 0-based (default: the last
    /// `limit` lines).
    offset: Option<u64>,
    /// For log: how many lines to return (default 200).
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// For write and submit: the text to send to the process's stdin.
    data: Option<String>,
) -> Result<Value, String> {
    let mut answer = process_action(ctx, action, session_id, timeout, offset, limit, data)?;
    redact_process_answer(ctx, &mut answer);
    Ok(answer)
}

/// What the model sees of a background command's output (and of its
/// command line, which can carry a credential) has its secrets redacted as
/// `terminal`'s own output is.
fn redact_process_answer(ctx: &ToolContext, answer: &mut Value) {
    fn one(ctx: &ToolContext, entry: &mut Value) {
        let command = entry["command"].as_str().unwrap_or_default().to_string();
        for field in ["output", "output_preview"] {
            if let Some(text) = entry[field].as_str() {
                if let Cow::Owned(clean) = redact_command_output(ctx.profile(), &command, text) {
                    entry[field] = Value::String(clean);
                }
            }
        }
        if let Cow::Owned(clean) = redact_for(ctx.profile(), &command, Scope::Code) {
            entry["command"] = Value::String(clean);
        }
    }
    if let Some(list) = answer.get_mut("processes").and_then(Value::as_array_mut) {
        list.iter_mut().for_each(|entry| one(ctx, entry));
    } else if answer.is_object() {
        one(ctx, answer);
    }
}

#[allow(clippy::too_many_arguments)]
fn process_action(
    ctx: &ToolContext,
    action: ProcessAction,
    session_id: Option<String>,
    timeout: Option<u64>,
    offset: Option<u64>,
    limit: Option<u64>,
    data: Option<String>,
) -> Result<Value, String> {
    let table = procs::table();
    if action == ProcessAction::List {
        let processes: Vec<Value> = table
            .list(ctx.profile())
            .iter()
            .map(|bg| {
                let mut entry = json!({
                    "session_id": bg.id,
                    "command": last_chars(&bg.command, 200),
                    "cwd": bg.cwd,
                    "pid": bg.spawned.pid,
                    "status": bg.status(),
                    "uptime_seconds": bg.uptime_seconds(),
                    "output_preview": procs::lock(&bg.spawned.output).render_tail(200),
                });
                if let Some(code) = bg.exit_code() {
                    entry["exit_code"] = json!(code);
                }
                entry
            })
            .collect();
        return Ok(json!({ "processes": processes }));
    }
    let Some(id) = session_id.filter(|s| !s.trim().is_empty()) else {
        return Err(format!(
            "session_id is required for {}: use the id terminal returned, or action=list",
            action_name(action)
        ));
    };
    let Some(bg) = table.get(ctx.profile(), &id) else {
        return Ok(json!({
            "status": "not_found",
            "error": format!("No background process with id {id} (action=list shows them)"),
        }));
    };
    if matches!(
        action,
        ProcessAction::Poll | ProcessAction::Log | ProcessAction::Wait
    ) {
        bg.mark_read();
    }
    Ok(match action {
        ProcessAction::List | ProcessAction::Poll => poll(&bg),
        ProcessAction::Log => log(&bg, offset, limit),
        ProcessAction::Wait => wait(ctx, &bg, timeout),
        ProcessAction::Handoff => handoff(ctx, &bg)?,
        ProcessAction::Kill => kill(ctx, &bg),
        ProcessAction::Write => guarded_write(ctx, &bg, data.unwrap_or_default())?,
        ProcessAction::Submit => guarded_write(ctx, &bg, data.unwrap_or_default() + "\n")?,
        ProcessAction::Close => close(&bg),
    })
}

/// What was written to each background process since its last newline
/// (the line a shell has not run yet), by session id: the next write is
/// judged together with it, so `r` then `m -rf …` is `rm -rf …`.
static PENDING: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, String>>> =
    std::sync::LazyLock::new(Default::default);
/// Background processes whose unfinished line is remembered, at most.
const MAX_PENDING: usize = 1024;

/// `write` / `submit`, checked first: input to a shell (`guard::reads_shell_code`
/// on the process's command line) is a command line and meets the same
/// check as `terminal` (approval asked for `process`); input to any other
/// program is refused only on a hard line (and not read past the check's
/// 128,000 characters: a payload is that program's business).
fn guarded_write(ctx: &ToolContext, bg: &Background, data: String) -> Result<Value, String> {
    let shell = guard::reads_shell_code(&bg.command);
    let pending = procs::lock(&PENDING)
        .get(&bg.id)
        .cloned()
        .unwrap_or_default();
    let text = pending + &data;
    if shell {
        guard_command(ctx, "process", &text)?;
    } else if text.chars().count() <= rules::MAX_CHECKED_CHARS {
        // Data for a program of its own: only a hard line is refused (a
        // long payload is its business, not a command line).
        if let Verdict::HardLine(_) = guard::check(&text, ctx.profile()) {
            guard_command(ctx, "process", &text)?;
        }
    }
    let answer = write(bg, data);
    if shell && answer["status"] == "ok" {
        let rest = text.rsplit('\n').next().unwrap_or_default();
        let mut map = procs::lock(&PENDING);
        if rest.is_empty() {
            map.remove(&bg.id);
        } else {
            if map.len() >= MAX_PENDING {
                map.clear();
            }
            map.insert(bg.id.clone(), rest.to_string());
        }
    }
    Ok(answer)
}

/// The answer for input to a process that already exited.
fn exited_already() -> Value {
    json!({
        "status": "already_exited",
        "error": "The process has already exited; its input is gone",
    })
}

fn write(bg: &Background, data: String) -> Value {
    if bg.exit_code().is_some() {
        return exited_already();
    }
    match bg.spawned.write_input(data.as_bytes()) {
        Ok(WriteOutcome::Written(n)) => json!({"status": "ok", "bytes_written": n}),
        Ok(WriteOutcome::Partial(n)) => json!({
            "status": "partial",
            "bytes_written": n,
            "error": format!(
                "only {n} of {} bytes were written: the process is not reading its input",
                data.len()
            ),
        }),
        Err(e) => json!({"status": "error", "error": e}),
    }
}

fn close(bg: &Background) -> Value {
    if bg.exit_code().is_some() {
        return exited_already();
    }
    match bg.spawned.close_input() {
        Ok(message) => json!({"status": "ok", "message": message}),
        Err(e) => json!({"status": "error", "error": e}),
    }
}

fn action_name(action: ProcessAction) -> &'static str {
    match action {
        ProcessAction::List => "list",
        ProcessAction::Poll => "poll",
        ProcessAction::Log => "log",
        ProcessAction::Wait => "wait",
        ProcessAction::Kill => "kill",
        ProcessAction::Write => "write",
        ProcessAction::Submit => "submit",
        ProcessAction::Close => "close",
        ProcessAction::Handoff => "handoff",
    }
}

/// `handoff`: a sub-agent gives a process it owns to the agent that
/// delegated its task (the parent's session then owns it, ends it, and gets
/// its notifications).
fn handoff(ctx: &ToolContext, bg: &Background) -> Result<Value, String> {
    let Some(parent) = ctx.parent_task_id() else {
        return Err(
            "handoff is for a sub-agent (delegate_task) giving a process to its parent; \
             this agent has no parent"
                .into(),
        );
    };
    if bg.owner().as_deref() != ctx.session_id() {
        return Err(format!(
            "{} is not this sub-agent's process: only a process it started (and still owns) \
             can be handed off",
            bg.id
        ));
    }
    if bg.exit_code().is_some() {
        return Ok(exited_already());
    }
    bg.hand_to(Some(parent.to_string()).filter(|p| !p.is_empty()));
    Ok(json!({
        "status": "handed_off",
        "session_id": bg.id,
        "message": "the process now belongs to the agent that delegated this task; \
                    it keeps running when this sub-agent ends",
    }))
}

fn poll(bg: &Background) -> Value {
    let mut out = json!({
        "session_id": bg.id,
        "command": bg.command,
        "status": bg.status(),
        "pid": bg.spawned.pid,
        "uptime_seconds": bg.uptime_seconds(),
        "output_preview": procs::lock(&bg.spawned.output).render_tail(1000),
    });
    if let Some(code) = bg.exit_code() {
        out["exit_code"] = json!(code);
    }
    out
}

fn log(bg: &Background, offset: Option<u64>, limit: Option<u64>) -> Value {
    let text = procs::lock(&bg.spawned.output).render();
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let limit = usize::try_from(limit.unwrap_or(DEFAULT_LOG_LINES).max(1)).unwrap_or(usize::MAX);
    let start = match offset {
        Some(o) => usize::try_from(o).unwrap_or(usize::MAX).min(total),
        None => total.saturating_sub(limit),
    };
    let end = start.saturating_add(limit).min(total);
    json!({
        "session_id": bg.id,
        "command": bg.command,
        "status": bg.status(),
        "output": lines[start..end].join("\n"),
        "total_lines": total,
        "showing": format!("lines {}-{} of {total}", start + usize::from(end > start), end),
    })
}

fn wait(ctx: &ToolContext, bg: &Background, timeout: Option<u64>) -> Value {
    let asked = timeout.unwrap_or(DEFAULT_WAIT_SECS).max(1);
    let secs = asked.min(MAX_WAIT_SECS);
    // A cancelled call stops waiting (the process runs on: it belongs to
    // the table, not to this call).
    let exited = wait_or_cancel(ctx, Duration::from_secs(secs), |slice| {
        bg.spawned.exit.wait(slice)
    });
    if exited.is_some() {
        // Let the reader catch the last bytes (children may hold the pipe).
        bg.spawned.output_done.wait(Duration::from_millis(500));
    }
    let output = procs::lock(&bg.spawned.output).render_tail(2000);
    let mut out = match exited {
        Some(code) => json!({
            "status": bg.status(),
            "command": bg.command,
            "exit_code": code,
            "output": output,
        }),
        None => json!({
            "status": "timeout",
            "command": bg.command,
            "output": output,
            "timeout_note": format!("Waited {secs}s; the process is still running"),
        }),
    };
    if asked > secs {
        out["clamped_note"] = json!(format!(
            "Requested wait of {asked}s was clamped to {MAX_WAIT_SECS}s"
        ));
    }
    out
}

fn kill(ctx: &ToolContext, bg: &Background) -> Value {
    let was_running = bg.exit_code().is_none();
    // What it started on the machine that runs it (a remote backend),
    // then its local side.
    if let Some(backend) = crate::backend::current(ctx) {
        backend.kill(ctx, bg);
    }
    let report = if was_running {
        procs::kill(bg, procs::grace_for(ctx.profile()))
    } else {
        // Still tear down what it left running in its group.
        bg.spawned.teardown(procs::grace_for(ctx.profile()))
    };
    let mut out = json!({
        "status": if was_running { "killed" } else { "already_exited" },
        "session_id": bg.id,
        "command": bg.command,
        "output": procs::lock(&bg.spawned.output).render_tail(2000),
        "teardown": report,
    });
    if let Some(code) = bg.exit_code() {
        out["exit_code"] = json!(code);
    }
    out
}

/// Checks `command` against the rules (`guard.rs`) before it runs (or,
/// for `process`, before a shell reads it): a hard line or a block
/// refuses it; a dangerous pattern asks for approval for `tool`
/// (`hermes_runtime::approval`), and a refusal is the answer.
fn guard_command(ctx: &ToolContext, tool: &str, command: &str) -> Result<(), String> {
    let verdict = guard::check(command, ctx.profile());
    // Hard lines first; then the user's deny rules, before anything that
    // could approve the command (the operator's switch, `approvals.mode:
    // off`, the allowlist, earlier answers).
    let refuse_first = match &verdict {
        Verdict::HardLine(_) | Verdict::Block(_) => None,
        _ => approval::denied_by_user(ctx, &[command, &guard::normalize(command, ctx.profile())]),
    };
    if let Some(refusal) = refuse_first {
        return Err(refusal);
    }
    let verdict = match verdict {
        // A write to the approvals file approves commands: the user's alone.
        Verdict::Allow if writes_approvals_file(command, ctx.profile()) => {
            Verdict::Approve(APPROVALS_FILE_RULE.to_string())
        }
        other => other,
    };
    match verdict {
        Verdict::Allow => Ok(()),
        Verdict::HardLine(reason) => Err(format!(
            "BLOCKED (hard line): {reason}. The agent never runs this command, not even \
             with approvals turned off. If it is really needed, the user has to run it \
             themselves, outside the agent."
        )),
        Verdict::Block(reason) => Err(format!(
            "BLOCKED: {reason}. Do not pipe passwords into sudo; if the agent needs sudo, \
             tell the user: they can set it up, or run the command themselves."
        )),
        Verdict::Approve(reason) => approval::request_blocking(
            ctx,
            tool,
            ApprovalNeed::for_command(reason.clone(), reason, command),
        ),
    }
}

/// The approval key of a command that names the profile's approvals file
/// in a writing position.
const APPROVALS_FILE_RULE: &str = "write to the approval answers of Hermes";

/// Whether `command` (normalized as the command rules read it, so
/// `"$HERMES_HOME"/approvals.json` and the absolute path alike) names the
/// profile's approvals file after a redirection or as an argument of a
/// command that writes files. A second net only: the sandbox keeps the
/// file out of every command's reach.
fn writes_approvals_file(command: &str, profile: &hermes_runtime::Profile) -> bool {
    let text = guard::normalize(command, profile);
    if !text.contains(approval::ALWAYS_FILE) {
        return false;
    }
    const WRITERS: [&str; 13] = [
        "tee", "dd", "cp", "mv", "ln", "install", "sed", "rsync", "truncate", "python", "python3",
        "perl", "ed",
    ];
    text.contains('>')
        || text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| WRITERS.contains(&w))
}

/// The verdict of the command rules on `command` for `profile`, without
/// running or asking anything.
pub fn check_command(command: &str, profile: &hermes_runtime::Profile) -> Verdict {
    guard::check(command, profile)
}
