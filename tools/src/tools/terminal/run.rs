//! One `terminal` call as a backend runs it ([`TerminalCall`], answered
//! by a [`TerminalOutput`]), and the local backend's way of running it
//! ([`run_local`]): the session's resident shells, the sandbox (and the
//! approval to leave it), containment and teardown.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hermes_procs::redact::redact_command_output;
use hermes_procs::{self as procs, BackgroundOptions};
use hermes_runtime::approval::{self, ApprovalNeed};
use hermes_runtime::ToolContext;
use serde::Serialize;

use super::exit_codes;
use super::session;

/// Foreground timeout when none is given, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 180;
/// The longest foreground timeout accepted, in seconds.
pub const MAX_FOREGROUND_TIMEOUT_SECS: u64 = 600;
/// Output bytes kept from the start and from the end of a foreground command.
const FG_HEAD_BYTES: usize = 20_000;
const FG_TAIL_BYTES: usize = 30_000;
/// What `terminal` answers.
#[derive(Debug, Serialize)]
pub struct TerminalOutput {
    /// stdout and stderr together, escape sequences stripped, capped.
    pub(crate) output: String,
    /// The command's exit code (128 + N when killed by signal N; 124 on timeout).
    pub(crate) exit_code: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    /// For a background command: the id `process` takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pid: Option<i32>,
    /// What a non-zero exit code means when it is no failure (`grep`: 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) exit_code_meaning: Option<&'static str>,
    /// Background: whether it will be notified on exit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) notify_on_complete: Option<bool>,
    /// Background: the strings its output is watched for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) watch_patterns: Option<Vec<String>>,
    /// Why `watch_patterns` were dropped (both flags were given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) watch_patterns_ignored: Option<String>,
    /// Why `pty` was not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pty_note: Option<String>,
}

impl TerminalOutput {
    pub(crate) fn new(output: String, exit_code: i32) -> Self {
        TerminalOutput {
            output,
            exit_code,
            error: None,
            note: None,
            session_id: None,
            pid: None,
            exit_code_meaning: None,
            notify_on_complete: None,
            watch_patterns: None,
            watch_patterns_ignored: None,
            pty_note: None,
        }
    }
}

/// One `terminal` call that passed the command check, as a backend runs it.
#[derive(Debug, Clone)]
pub struct TerminalCall {
    pub command: String,
    pub background: bool,
    pub timeout: Option<u64>,
    pub workdir: Option<String>,
    pub pty: bool,
    pub notify_on_complete: bool,
    pub watch_patterns: Vec<String>,
}

impl TerminalCall {
    /// `watch_patterns` without empty ones, and why they were dropped
    /// (both `notify_on_complete` and patterns were given).
    pub(crate) fn patterns(&self) -> (Vec<String>, Option<String>) {
        let mut patterns: Vec<String> = self
            .watch_patterns
            .iter()
            .filter(|p| !p.is_empty())
            .cloned()
            .collect();
        let mut ignored = None;
        if self.notify_on_complete && !patterns.is_empty() {
            patterns.clear();
            ignored = Some(
                "watch_patterns were ignored: notify_on_complete is set, and both together \
                 would notify twice"
                    .to_string(),
            );
        }
        (patterns, ignored)
    }

    /// The foreground timeout in seconds: the call's, else the profile's
    /// `terminal.timeout`, within 1 and [`MAX_FOREGROUND_TIMEOUT_SECS`].
    pub(crate) fn foreground_secs(&self, ctx: &ToolContext) -> Result<u64, String> {
        let config = ctx.profile().config();
        let secs = self.timeout.unwrap_or(
            config
                .terminal
                .timeout
                .value
                .min(MAX_FOREGROUND_TIMEOUT_SECS),
        );
        if secs == 0 {
            return Err("timeout must be at least 1 second".into());
        }
        if secs > MAX_FOREGROUND_TIMEOUT_SECS {
            return Err(format!(
                "Foreground timeout {secs}s exceeds the maximum of {MAX_FOREGROUND_TIMEOUT_SECS}s. \
                 Run long commands with background=true and follow them with process."
            ));
        }
        Ok(secs)
    }
}

/// `terminal` on this machine (the local backend): the session's
/// resident shells, its sandbox and containment.
pub(crate) fn run_local(ctx: &ToolContext, call: &TerminalCall) -> Result<TerminalOutput, String> {
    let command = &call.command;
    let workdir = &call.workdir;
    let start = session::start(ctx);
    let cwd = working_dir(&start.cwd, workdir.as_deref())?;
    let sandbox = hermes_procs::sandbox::decide(ctx, &start.env)?;
    let pty = call.pty;
    if call.background {
        let notify = call.notify_on_complete;
        let (patterns, ignored) = call.patterns();
        let options = BackgroundOptions {
            pty,
            notify_on_complete: notify,
            watch_patterns: patterns.clone(),
            label: None,
        };
        let bg = procs::table()
            .start(ctx, &start.env, command, &cwd, options, sandbox.policy())
            .map_err(|e| format!("could not start the command: {e}"))?;
        let mut out = TerminalOutput::new("Background process started".into(), 0);
        out.note = Some(
            "Use process with this session_id to poll, read the log, wait for, write to or \
             kill it."
                .into(),
        );
        out.session_id = Some(bg.id.clone());
        out.pid = Some(bg.spawned.pid);
        out.notify_on_complete = notify.then_some(true);
        out.watch_patterns = (!patterns.is_empty()).then_some(patterns);
        out.watch_patterns_ignored = ignored;
        out.note = join_notes([out.note, sandbox.note()]);
        return Ok(out);
    }

    let secs = call.foreground_secs(ctx)?;
    let policy = sandbox.policy();
    let mut out = run_foreground(ctx, &start, command, &cwd, secs, pty, policy.clone())?;
    let denial = policy
        .as_deref()
        .filter(|_| out.exit_code != 0)
        .and_then(|p| hermes_procs::sandbox::explain_denial(p, &cwd, &out.output));
    if let Some(denial) = denial {
        out = escalate(ctx, &start, command, &cwd, secs, pty, out, denial)?;
    }
    out.note = join_notes([out.note, sandbox.note()]);
    Ok(out)
}

/// Notes joined with `; `; `None` when there is none.
pub(crate) fn join_notes<const N: usize>(notes: [Option<String>; N]) -> Option<String> {
    notes
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}"))
}

/// After the sandbox refused something (`denial`, the `sandbox` note):
/// asks whether this one command may run again outside the sandbox. An
/// approval re-runs it unsandboxed; anything else (a refusal, no one to
/// ask, approvals switched off by yolo or `approvals.mode: off`) leaves
/// the sandboxed result, with the note. Never without an answer.
#[allow(clippy::too_many_arguments)]
fn escalate(
    ctx: &ToolContext,
    start: &session::Start,
    command: &str,
    cwd: &Path,
    secs: u64,
    pty: bool,
    mut sandboxed: TerminalOutput,
    denial: String,
) -> Result<TerminalOutput, String> {
    let never_ask = approval::yolo_for(ctx)
        || ctx.profile().config().approvals.mode.value == hermes_runtime::config::ApprovalMode::Off;
    if never_ask {
        sandboxed.note = join_notes([sandboxed.note, Some(denial)]);
        return Ok(sandboxed);
    }
    let reason = format!(
        "{denial}. Run this one command again outside the sandbox? That lifts every sandbox \
         rule for it: it may write anywhere the agent can, the protected paths included, and \
         reach the network"
    );
    let need =
        ApprovalNeed::new(hermes_procs::sandbox::ESCALATION_KEY, reason).with_detail(command);
    match approval::request_blocking(ctx, "terminal", need) {
        Ok(()) => {
            let mut out = run_foreground(ctx, start, command, cwd, secs, pty, None)?;
            out.note = join_notes([
                Some(format!(
                    "{denial}; approved: it ran again outside the sandbox"
                )),
                out.note,
            ]);
            Ok(out)
        }
        Err(why) => {
            sandboxed.note = join_notes([
                sandboxed.note,
                Some(format!("{denial} (not run outside the sandbox: {why})")),
            ]);
            Ok(sandboxed)
        }
    }
}

/// Runs a foreground command (under `sandbox`, or none) and answers as
/// `terminal` does.
fn run_foreground(
    ctx: &ToolContext,
    start: &session::Start,
    command: &str,
    cwd: &Path,
    secs: u64,
    pty: bool,
    sandbox: Option<std::sync::Arc<hermes_procs::sandbox::Policy>>,
) -> Result<TerminalOutput, String> {
    let config = ctx.profile().config();
    // `tool_output.max_bytes` (default 50,000) split as the defaults are.
    let kept = config.tool_output.max_bytes.value;
    let head = kept.saturating_mul(FG_HEAD_BYTES) / (FG_HEAD_BYTES + FG_TAIL_BYTES);
    let wrapped = session::wrap(command);
    let options = procs::SpawnOptions {
        pty,
        max_processes: procs::contain::max_processes_for(ctx.profile()),
        inline: true,
        user_namespace: procs::contain::user_namespace_for(ctx.profile()),
        sandbox,
        state: true,
        session: Some(session::name(ctx)),
        ..procs::SpawnOptions::new(head, kept - head)
    };
    let run = procs::spawn_foreground(&start.env, &wrapped.script, cwd, &options)
        .map_err(|e| format!("could not start the command: {e}"))?;
    // Known to the table while it runs: an agent shutting down meanwhile
    // (this call abandoned on its thread) tears it down too.
    let _tracked = procs::table().track_foreground(&run);
    let grace = procs::grace_for(ctx.profile());

    let finished = wait_or_cancel(ctx, Duration::from_secs(secs), |slice| run.wait_exit(slice));
    let cancelled = finished.is_none() && ctx.cancellation().is_cancelled();
    // Whatever still runs of the command's family is torn down: after a
    // timeout that is the command itself, after an exit it is what the
    // command left behind (`cmd &`), which would otherwise be orphaned.
    // A cancelled call's caller is gone: no long grace.
    let report = run.teardown(if cancelled {
        grace.min(CANCEL_GRACE)
    } else {
        grace
    });
    let output = procs::lock(&run.output).render();
    let output = match redact_command_output(ctx.profile(), command, &output) {
        Cow::Owned(clean) => clean,
        Cow::Borrowed(_) => output,
    };
    let limit_note = limit_note(&run);
    if cancelled {
        let mut out = TerminalOutput::new(output, 130);
        out.error = Some(
            "The call was cancelled; the command and every process it started were terminated"
                .into(),
        );
        return Ok(out);
    }
    let Some(exit_code) = finished else {
        session::discard(run.state_file.as_deref());
        let mut out = TerminalOutput::new(output, 124);
        out.error = Some(format!(
            "Command timed out after {secs} seconds; it and every process it started \
             were terminated"
        ));
        out.note = limit_note;
        return Ok(out);
    };
    let session_note = session::finish(start, run.state_file.as_deref());
    let left = report.terminated.len() + report.killed.len();
    let left_note = (left > 0).then(|| {
        format!(
            "{left} process(es) the command left running were terminated; \
             start long-running processes with background=true"
        )
    });
    let mut out = TerminalOutput::new(output, exit_code);
    out.note = join_notes([limit_note, left_note, session_note]);
    out.exit_code_meaning = exit_codes::meaning(command, exit_code);
    Ok(out)
}

/// How often a wait looks at the call's cancellation: a cancelled call's
/// processes are torn down within this (plus [`CANCEL_GRACE`] twice).
const CANCEL_POLL: Duration = Duration::from_millis(100);
/// The grace of a cancelled call's teardown (at most the profile's).
pub(crate) const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// `wait(slice)` in slices of at most [`CANCEL_POLL`] until it answers,
/// `limit` passes or the call is cancelled (`hermes_runtime::cancel`):
/// the answer, or `None` on timeout or cancellation.
pub(crate) fn wait_or_cancel<T>(
    ctx: &ToolContext,
    limit: Duration,
    mut wait: impl FnMut(Duration) -> Option<T>,
) -> Option<T> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if let Some(answer) = wait(left.min(CANCEL_POLL)) {
            return Some(answer);
        }
        if left.is_zero() || ctx.cancellation().is_cancelled() {
            return None;
        }
    }
}

/// A note when forks of the command failed on its process bound.
fn limit_note(run: &procs::Spawned) -> Option<String> {
    let hits = run.limit_hits();
    (hits > 0).then(|| {
        format!(
            "the command reached its limit of {} processes and {hits} fork(s) failed \
             (the profile's {} raises it)",
            run.max_processes,
            procs::contain::MAX_PROCESSES_SETTING
        )
    })
}

/// The directory a command runs in: `workdir` resolved against the
/// session's working directory, which must exist.
fn working_dir(session_cwd: &Path, workdir: Option<&str>) -> Result<PathBuf, String> {
    let dir = match workdir.map(str::trim).filter(|w| !w.is_empty()) {
        Some(w) => session_cwd.join(w),
        None => session_cwd.to_path_buf(),
    };
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "working directory {} does not exist or is not a directory",
            dir.display()
        ))
    }
}
