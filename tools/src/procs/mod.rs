//! Child processes of tools: starting a shell command with the profile's
//! environment and bounded output capture, the table of background
//! processes (`terminal` with `background`, managed by `process`), and
//! parent-first teardown ([`teardown`]).
//!
//! Every command runs as `shell -c COMMAND` in its own process group, with
//! stdin from `/dev/null`, stdout and stderr into one pipe, and the
//! environment of [`crate::child_env::ChildEnv::for_profile`]. A reader
//! thread drains the pipe into a [`output::Capture`]; a waiter thread reaps
//! the shell and records its exit code.

pub mod output;
pub mod scan;
pub mod teardown;

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hermes_runtime::{Profile, ToolContext};

use crate::child_env::ChildEnv;
use output::Capture;
pub use teardown::{teardown, Target, TeardownReport};

/// Grace a parent gets after SIGTERM, and its survivors after theirs,
/// unless the profile sets [`GRACE_SETTING`].
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);
/// The profile setting (in its `.env`) for the teardown grace, in seconds;
/// it wins over `terminal.daemon_term_grace_seconds` in `config.yaml`.
pub const GRACE_SETTING: &str = hermes_runtime::config::env::KILL_GRACE_SECONDS;
/// Background processes that exited are remembered up to this many per table.
const MAX_FINISHED: usize = 64;

/// The teardown grace for a profile: [`GRACE_SETTING`] from its `.env`,
/// else `terminal.daemon_term_grace_seconds` from its `config.yaml`
/// (seconds, fractions allowed, at most 60), else [`DEFAULT_GRACE`].
pub fn grace_for(profile: &Profile) -> Duration {
    let secs = profile.config().terminal.daemon_term_grace_seconds.value;
    Duration::try_from_secs_f64(secs.clamp(0.0, 60.0)).unwrap_or(DEFAULT_GRACE)
}

/// A poisoned lock only means another thread panicked mid-update; the data
/// (output bytes, an exit code) is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A value set once, waited for by others.
#[derive(Debug, Default)]
pub struct Latch<T> {
    value: Mutex<Option<T>>,
    cond: Condvar,
}

impl<T: Clone> Latch<T> {
    pub fn set(&self, value: T) {
        *lock(&self.value) = Some(value);
        self.cond.notify_all();
    }

    pub fn get(&self) -> Option<T> {
        lock(&self.value).clone()
    }

    /// Waits up to `limit` for the value.
    pub fn wait(&self, limit: Duration) -> Option<T> {
        let deadline = Instant::now() + limit;
        let mut guard = lock(&self.value);
        loop {
            if let Some(v) = guard.as_ref() {
                return Some(v.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            guard = self
                .cond
                .wait_timeout(guard, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }
}

/// A running (or finished) shell command.
#[derive(Debug)]
pub struct Spawned {
    pub pid: i32,
    /// Start time from `/proc`, read while the child is surely ours.
    pub start: Option<u64>,
    /// The exit code once reaped (128 + N when killed by signal N).
    pub exit: Arc<Latch<i32>>,
    pub output: Arc<Mutex<Capture>>,
    /// Set when every writer of the output pipe has closed it.
    pub output_done: Arc<Latch<()>>,
}

impl Spawned {
    pub fn target(&self) -> Target {
        Target {
            pid: self.pid,
            start: self.start,
            pgid: self.pid,
        }
    }

    /// Tears the command and its family down, waits for the shell's exit
    /// to be recorded (briefly) and for the output to close (briefly).
    pub fn teardown(&self, grace: Duration) -> TeardownReport {
        let report = teardown(self.target(), grace);
        self.exit.wait(Duration::from_secs(1));
        self.output_done.wait(Duration::from_millis(500));
        report
    }
}

/// Starts `shell -c script` in `cwd` with `env`, in its own process group,
/// capturing output into a [`Capture`] of the given caps.
pub fn spawn(
    env: &ChildEnv,
    script: &str,
    cwd: &Path,
    head_cap: usize,
    tail_cap: usize,
) -> std::io::Result<Spawned> {
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = env.shell_command(script);
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0);
    let mut child = cmd.spawn()?;
    // The command holds our copies of the pipe's write end: drop it so the
    // reader sees end-of-file once the child's family closes theirs.
    drop(cmd);
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let start = scan::read(pid).map(|p| p.start);

    let output = Arc::new(Mutex::new(Capture::new(head_cap, tail_cap)));
    let output_done = Arc::new(Latch::default());
    {
        let (output, done) = (output.clone(), output_done.clone());
        let mut reader = reader;
        std::thread::Builder::new()
            .name(format!("hermes-out-{pid}"))
            .spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => lock(&output).push(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                done.set(());
            })?;
    }
    let exit = Arc::new(Latch::default());
    {
        let exit = exit.clone();
        std::thread::Builder::new()
            .name(format!("hermes-wait-{pid}"))
            .spawn(move || {
                let code = match child.wait() {
                    Ok(status) => status
                        .code()
                        .or_else(|| status.signal().map(|s| 128 + s))
                        .unwrap_or(-1),
                    Err(_) => -1,
                };
                exit.set(code);
            })?;
    }
    Ok(Spawned {
        pid,
        start,
        exit,
        output,
        output_done,
    })
}

/// A command started with `background`: what `process` manages.
#[derive(Debug)]
pub struct Background {
    pub id: String,
    pub command: String,
    pub cwd: PathBuf,
    /// The profile that started it: only calls under it see it.
    pub profile_home: PathBuf,
    pub session_id: Option<String>,
    pub started: Instant,
    pub spawned: Spawned,
    /// Set once `process` killed it.
    pub killed: Mutex<Option<TeardownReport>>,
}

impl Background {
    pub fn exit_code(&self) -> Option<i32> {
        self.spawned.exit.get()
    }

    pub fn status(&self) -> &'static str {
        match (self.exit_code(), lock(&self.killed).is_some()) {
            (_, true) => "killed",
            (Some(_), false) => "exited",
            (None, false) => "running",
        }
    }

    pub fn uptime_seconds(&self) -> u64 {
        self.started.elapsed().as_secs()
    }
}

/// The background processes of one process (the agent), by id, and the
/// foreground commands running now (so that an agent shutting down while
/// a call waits on one, or after its call was abandoned, tears it down too).
#[derive(Debug, Default)]
pub struct ProcessTable {
    procs: Mutex<HashMap<String, Arc<Background>>>,
    foreground: Mutex<HashMap<i32, Target>>,
}

/// A foreground command in the table; dropping it takes it out.
#[derive(Debug)]
pub struct Tracked<'a> {
    table: &'a ProcessTable,
    pid: i32,
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        lock(&self.table.foreground).remove(&self.pid);
    }
}

static TABLE: LazyLock<ProcessTable> = LazyLock::new(ProcessTable::default);

/// The process-wide table of background processes.
pub fn table() -> &'static ProcessTable {
    &TABLE
}

impl ProcessTable {
    /// Starts `command` in the background for the call's profile.
    pub fn start(
        &self,
        ctx: &ToolContext,
        command: &str,
        cwd: &Path,
    ) -> std::io::Result<Arc<Background>> {
        let env = ChildEnv::for_profile(ctx.profile());
        let spawned = spawn(&env, command, cwd, BG_HEAD_BYTES, BG_TAIL_BYTES)?;
        let mut procs = lock(&self.procs);
        let mut id = new_id();
        while procs.contains_key(&id) {
            id = new_id();
        }
        let bg = Arc::new(Background {
            id,
            command: command.to_string(),
            cwd: cwd.to_path_buf(),
            profile_home: ctx.profile().home().to_path_buf(),
            session_id: ctx.session_id().map(str::to_string),
            started: Instant::now(),
            spawned,
            killed: Mutex::new(None),
        });
        prune(&mut procs);
        procs.insert(bg.id.clone(), bg.clone());
        Ok(bg)
    }

    /// A background process of `profile` by id.
    pub fn get(&self, profile: &Profile, id: &str) -> Option<Arc<Background>> {
        lock(&self.procs)
            .get(id.trim())
            .filter(|b| b.profile_home == profile.home())
            .cloned()
    }

    /// The background processes of `profile`, oldest first.
    pub fn list(&self, profile: &Profile) -> Vec<Arc<Background>> {
        let mut all: Vec<Arc<Background>> = lock(&self.procs)
            .values()
            .filter(|b| b.profile_home == profile.home())
            .cloned()
            .collect();
        all.sort_by_key(|b| std::cmp::Reverse(b.uptime_seconds()));
        all
    }

    /// Records a foreground command until the returned guard is dropped.
    pub fn track_foreground(&self, run: &Spawned) -> Tracked<'_> {
        lock(&self.foreground).insert(run.pid, run.target());
        Tracked {
            table: self,
            pid: run.pid,
        }
    }

    /// Tears down every background process of every profile, and every
    /// foreground command still running (the agent shutting down), with
    /// `grace`; returns how many background processes were still running.
    pub fn shutdown_all(&self, grace: Duration) -> usize {
        let all: Vec<Arc<Background>> = lock(&self.procs).values().cloned().collect();
        let foreground: Vec<Target> = lock(&self.foreground).values().copied().collect();
        let mut running = 0;
        std::thread::scope(|s| {
            for bg in &all {
                if bg.exit_code().is_none() {
                    running += 1;
                }
                s.spawn(move || kill(bg, grace));
            }
            for target in foreground {
                s.spawn(move || teardown(target, grace));
            }
        });
        running
    }
}

/// Tears a background process down (parent-first), records and returns the
/// report. A process that already exited still has the rest of its family
/// (children left running in its group) torn down.
pub fn kill(bg: &Background, grace: Duration) -> TeardownReport {
    let report = bg.spawned.teardown(grace);
    *lock(&bg.killed) = Some(report.clone());
    report
}

/// Output kept for a background process: its first and its latest bytes.
const BG_HEAD_BYTES: usize = 20_000;
const BG_TAIL_BYTES: usize = 200_000;

/// Drops the oldest finished entries beyond [`MAX_FINISHED`].
fn prune(procs: &mut HashMap<String, Arc<Background>>) {
    let mut finished: Vec<(String, Instant)> = procs
        .values()
        .filter(|b| b.exit_code().is_some())
        .map(|b| (b.id.clone(), b.started))
        .collect();
    if finished.len() < MAX_FINISHED {
        return;
    }
    finished.sort_by_key(|(_, started)| *started);
    for (id, _) in finished.iter().take(finished.len() + 1 - MAX_FINISHED) {
        procs.remove(id);
    }
}

/// `proc_` and 12 hex digits, unique in this process and hard to guess.
fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ n.rotate_left(32) ^ u64::from(std::process::id()).rotate_left(16);
    // splitmix64 finaliser: spreads the bits.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    format!("proc_{:012x}", x & 0xffff_ffff_ffff)
}
