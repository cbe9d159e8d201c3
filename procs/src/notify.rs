//! Notifications about background processes: `notify_on_complete` (one
//! event when the process exits) and `watch_patterns` (an event when a line
//! of output contains one of the strings), queued for the embedding agent
//! to drain ([`notifications`]); `serve --mcp` sends them to its client.
//!
//! Watch events are rate limited per process: at most one per
//! [`WATCH_MIN_INTERVAL`]; matches inside that window are dropped and
//! counted (the next event says how many). After [`WATCH_STRIKE_LIMIT`]
//! windows in a row that dropped matches, watching stops for that process
//! (one `watch_disabled` event) and it is notified on exit instead. Matches
//! after the process exited are ignored. The queue holds at most
//! [`MAX_QUEUED`] events; beyond that the oldest are dropped and counted.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::base::lock;

/// The shortest time between two watch events of one process.
pub const WATCH_MIN_INTERVAL: Duration = Duration::from_secs(15);
/// Windows in a row with dropped matches before watching stops.
pub const WATCH_STRIKE_LIMIT: u32 = 3;
/// Events kept for the agent to drain.
pub const MAX_QUEUED: usize = 1024;
/// Matching lines one watch event carries, and its characters.
const MAX_MATCH_LINES: usize = 20;
const MAX_MATCH_CHARS: usize = 2000;
/// A line longer than this is matched in pieces of this size.
const MAX_LINE_BYTES: usize = 8192;

/// One event about a background process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessNotification {
    /// `completion`, `watch_match` or `watch_disabled`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The process's id (what `process` takes).
    pub session_id: String,
    pub command: String,
    /// The profile that started it.
    #[serde(skip)]
    pub profile_home: PathBuf,
    /// The task (session) of the call that started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// For `completion`: `exited` or `killed`, and the exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// For `watch_match`: the pattern that matched first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `completion`: the output's last 2,000 characters; `watch_match`:
    /// the matching lines.
    pub output: String,
    /// Matches dropped by the rate limit since the previous event.
    pub suppressed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The queue of events the agent drains.
#[derive(Debug, Default)]
pub struct Notifications {
    queue: Mutex<VecDeque<ProcessNotification>>,
    ready: Condvar,
    wake: tokio::sync::Notify,
    dropped: AtomicU64,
}

static QUEUE: LazyLock<Notifications> = LazyLock::new(Notifications::default);

/// The process-wide notification queue.
pub fn notifications() -> &'static Notifications {
    &QUEUE
}

impl Notifications {
    pub fn push(&self, event: ProcessNotification) {
        {
            let mut queue = lock(&self.queue);
            if queue.len() >= MAX_QUEUED {
                queue.pop_front();
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            queue.push_back(event);
        }
        self.ready.notify_all();
        self.wake.notify_one();
    }

    /// Every queued event, oldest first; the queue is left empty.
    pub fn drain(&self) -> Vec<ProcessNotification> {
        lock(&self.queue).drain(..).collect()
    }

    /// The queued events of one task (session), oldest first, taken out
    /// of the queue; the others stay.
    pub fn drain_task(&self, task_id: &str) -> Vec<ProcessNotification> {
        let mut queue = lock(&self.queue);
        let (mine, others): (VecDeque<_>, VecDeque<_>) = queue
            .drain(..)
            .partition(|e| e.task_id.as_deref() == Some(task_id));
        *queue = others;
        mine.into()
    }

    /// The oldest event, waiting up to `limit` for one (blocking).
    pub fn wait(&self, limit: Duration) -> Option<ProcessNotification> {
        let deadline = Instant::now() + limit;
        let mut queue = lock(&self.queue);
        loop {
            if let Some(e) = queue.pop_front() {
                return Some(e);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            queue = self
                .ready
                .wait_timeout(queue, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// The oldest event, waiting for one (async). Only one task should
    /// await this at a time.
    pub async fn next(&self) -> ProcessNotification {
        loop {
            let notified = self.wake.notified();
            if let Some(e) = lock(&self.queue).pop_front() {
                return e;
            }
            notified.await;
        }
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Who a process's events are about.
#[derive(Debug, Clone)]
pub struct Origin {
    pub session_id: String,
    pub command: String,
    pub profile_home: PathBuf,
    /// The task (session) its events go to; [`Watcher::retarget`] moves
    /// it (a process handed to a sub-agent's parent).
    pub task_id: Option<String>,
    /// Whether secrets in the output and the command are redacted
    /// (`redact::enabled_for` the profile, taken when the process started).
    pub redact: bool,
}

impl Origin {
    /// Queues `event`, its output and command redacted as `terminal`'s are.
    fn send(&self, mut event: ProcessNotification) {
        if self.redact {
            use crate::redact::{dumps_environment, force_redact, redact_secret_values, Scope};
            let scope = if dumps_environment(&event.command) {
                Scope::Text
            } else {
                Scope::Code
            };
            // The patterns, then the profile's own values, as
            // `redact_for` does (redaction was found on for the profile
            // when the process started).
            let profile = hermes_runtime::Profile::new(&self.profile_home);
            for (text, scope) in [
                (&mut event.output, scope),
                (&mut event.command, Scope::Code),
            ] {
                let clean = match force_redact(text, scope) {
                    Cow::Owned(clean) => redact_secret_values(&profile, &clean).into_owned(),
                    Cow::Borrowed(same) => match redact_secret_values(&profile, same) {
                        Cow::Owned(clean) => clean,
                        Cow::Borrowed(_) => continue,
                    },
                };
                *text = clean;
            }
        }
        notifications().push(event);
    }

    fn event(&self, kind: &'static str) -> ProcessNotification {
        ProcessNotification {
            kind,
            session_id: self.session_id.clone(),
            command: self.command.clone(),
            profile_home: self.profile_home.clone(),
            task_id: self.task_id.clone(),
            status: None,
            exit_code: None,
            pattern: None,
            output: String::new(),
            suppressed: 0,
            message: None,
        }
    }
}

/// What a background process reports: its output to the watch patterns,
/// its exit to the queue.
#[derive(Debug)]
pub struct Watcher {
    origin: Origin,
    /// Where its events go now (starts as the origin's task).
    task: Mutex<Option<String>>,
    patterns: Vec<String>,
    notify_on_complete: AtomicBool,
    exited: AtomicBool,
    /// Set by `process` kill before the teardown, so the completion says so.
    pub kill_requested: AtomicBool,
    state: Mutex<WatchState>,
}

#[derive(Debug, Default)]
struct WatchState {
    partial: Vec<u8>,
    cooldown_until: Option<Instant>,
    strike_candidate: bool,
    strikes: u32,
    suppressed: u64,
    disabled: bool,
}

impl Watcher {
    pub fn new(origin: Origin, notify_on_complete: bool, patterns: Vec<String>) -> Self {
        Watcher {
            task: Mutex::new(origin.task_id.clone()),
            origin,
            patterns: patterns.into_iter().filter(|p| !p.is_empty()).collect(),
            notify_on_complete: AtomicBool::new(notify_on_complete),
            exited: AtomicBool::new(false),
            kill_requested: AtomicBool::new(false),
            state: Mutex::new(WatchState::default()),
        }
    }

    /// Sends its events from now on to `task` (the process changed hands).
    pub fn retarget(&self, task: Option<String>) {
        *lock(&self.task) = task;
    }

    fn event(&self, kind: &'static str) -> ProcessNotification {
        let mut event = self.origin.event(kind);
        event.task_id = lock(&self.task).clone();
        event
    }

    /// Whether it reports anything at all.
    pub fn is_active(&self) -> bool {
        self.notify_on_complete.load(Ordering::Relaxed) || !self.patterns.is_empty()
    }

    /// New output: complete lines are matched, a partial last line waits
    /// for the rest.
    pub fn output(&self, chunk: &[u8]) {
        if self.patterns.is_empty() || self.exited.load(Ordering::Relaxed) {
            return;
        }
        let mut state = lock(&self.state);
        if state.disabled {
            return;
        }
        state.partial.extend_from_slice(chunk);
        let mut lines = Vec::new();
        while let Some(end) = state.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = state.partial.drain(..=end).collect();
            lines.push(String::from_utf8_lossy(&line).trim_end().to_string());
        }
        if state.partial.len() > MAX_LINE_BYTES {
            let line: Vec<u8> = state.partial.drain(..).collect();
            lines.push(String::from_utf8_lossy(&line).into_owned());
        }
        let mut pattern = None;
        let matched: Vec<String> = lines
            .into_iter()
            .map(|l| super::output::clean(&l))
            .filter(|l| {
                let hit = self.patterns.iter().find(|p| l.contains(p.as_str()));
                if pattern.is_none() {
                    pattern = hit.cloned();
                }
                hit.is_some()
            })
            .collect();
        if matched.is_empty() {
            return;
        }
        let now = Instant::now();
        if state.cooldown_until.is_some_and(|until| now < until) {
            state.suppressed += matched.len() as u64;
            if !state.strike_candidate {
                state.strike_candidate = true;
                state.strikes += 1;
                if state.strikes >= WATCH_STRIKE_LIMIT {
                    state.disabled = true;
                    self.notify_on_complete.store(true, Ordering::Relaxed);
                    let mut event = self.event("watch_disabled");
                    event.suppressed = state.suppressed;
                    event.message = Some(format!(
                        "Watching stopped for {}: matches kept arriving faster than one per \
                         {}s for {} windows in a row. You will be notified once when it exits.",
                        self.origin.session_id,
                        WATCH_MIN_INTERVAL.as_secs(),
                        WATCH_STRIKE_LIMIT
                    ));
                    drop(state);
                    self.origin.send(event);
                }
            }
            return;
        }
        if state.cooldown_until.is_some() && !state.strike_candidate {
            state.strikes = 0;
        }
        state.strike_candidate = false;
        state.cooldown_until = Some(now + WATCH_MIN_INTERVAL);
        let mut event = self.event("watch_match");
        event.pattern = pattern;
        event.suppressed = std::mem::take(&mut state.suppressed);
        let mut text = matched
            .iter()
            .take(MAX_MATCH_LINES)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        if text.chars().count() > MAX_MATCH_CHARS {
            text = text.chars().take(MAX_MATCH_CHARS).collect::<String>() + "\n...(cut)";
        }
        event.output = text;
        drop(state);
        self.origin.send(event);
    }

    /// The process exited with `code`; `tail` is its output's end.
    pub fn exited(&self, code: i32, tail: String) {
        self.exited.store(true, Ordering::Relaxed);
        if !self.notify_on_complete.load(Ordering::Relaxed) {
            return;
        }
        let mut event = self.event("completion");
        event.status = Some(if self.kill_requested.load(Ordering::Relaxed) {
            "killed"
        } else {
            "exited"
        });
        event.exit_code = Some(code);
        event.output = tail;
        self.origin.send(event);
    }
}
