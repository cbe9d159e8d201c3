//! `hermes-procs`: the process layer. Everything a tool's command runs
//! through between the tool and the kernel: the environment a child gets
//! ([`child_env`]), what is scrubbed from its output ([`redact`]), the
//! files no command may write ([`protected`]), the sandbox a command is
//! confined in ([`sandbox`]: Landlock, seccomp, namespaces), and the
//! processes themselves (the crate root: spawning, the background table,
//! containment, parent-first teardown). It knows nothing of tools, MCP or
//! models; the built-in tools (`hermes-tools`) and the MCP client start
//! their children through it.
//!
//! Child processes of tools: starting a shell command with the profile's
//! environment and bounded output capture, the table of background
//! processes (`terminal` with `background`, managed by `process`), and
//! parent-first teardown ([`teardown`](mod@teardown)).
//!
//! Every command runs as `shell -c COMMAND` (through `unshare` in a user
//! namespace of its own when the profile asks:
//! [`contain::user_namespace_for`]) in its own process group, with
//! stdin from `/dev/null`, stdout and stderr into one pipe, and the
//! environment of [`crate::child_env::ChildEnv::for_profile`]. The pipe is
//! drained into a [`output::Capture`] and the shell reaped either by the
//! caller itself (a foreground command: [`Spawned::wait_exit`] polls the
//! shell's pidfd and the pipe together, no thread), or by a reader thread
//! and a waiter thread (background commands, pseudo-terminals, commands
//! watched for notifications, and kernels without pidfds).

pub mod child_env;
pub mod protected;
pub mod redact;
pub mod sandbox;

mod base;
pub mod contain;
pub mod environ;
mod launch;
pub mod notify;
pub mod output;
pub mod resident;
pub mod scan;
pub mod teardown;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hermes_runtime::{Profile, ToolContext};

use crate::child_env::ChildEnv;
pub use base::{lock, private_dir, shell_quote};
use base::{poll_readable, OwnDir};
use launch::{launcher, shell_command};
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

/// Where a background command's input goes: a pipe to its stdin, or the
/// pseudo-terminal it runs on.
pub enum Input {
    Pipe(std::io::PipeWriter),
    Pty(Arc<pty_process::blocking::Pty>),
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Input::Pipe(_) => "Input::Pipe",
            Input::Pty(_) => "Input::Pty",
        })
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
    /// The command's stdin (background commands), until closed.
    pub input: Mutex<Option<Input>>,
    /// Whether it runs on a pseudo-terminal.
    pub pty: bool,
    /// Its cgroup, when commands get one ([`contain::containment`]).
    pub cgroup: Option<Arc<contain::CommandCgroup>>,
    /// Its tag ([`teardown::TAG_VAR`]), when commands get no cgroup.
    pub tag: Option<String>,
    /// The process bound it runs under.
    pub max_processes: u64,
    /// Where its shell writes the session's state ([`SpawnOptions::state`]).
    pub state_file: Option<PathBuf>,
    /// Its own folder in the private folder, removed with it.
    _own_dir: Option<OwnDir>,
    /// The shell and its output, when the caller waits for them itself
    /// ([`SpawnOptions::inline`]); `None` once reaped and drained, or when
    /// threads do it.
    inline: Mutex<Option<Inline>>,
}

/// A command waited for in the caller's thread.
#[derive(Debug)]
enum Inline {
    /// A shell of its own, our child.
    Child(OwnChild),
    /// A subshell of a resident shell ([`resident`]).
    Resident(resident::Resident),
}

impl Inline {
    /// Waits up to `limit` for the command's exit or output; reads what
    /// arrived. The exit code once the command ended.
    fn step(&mut self, output: &Mutex<Capture>, limit: Duration) -> Option<i32> {
        match self {
            Inline::Child(c) => c.step(output, limit),
            Inline::Resident(r) => {
                // Its end may have come in one read with its start.
                if let Some(resident::Report::Ended(code)) = r.pending_report() {
                    return Some(code);
                }
                let [ended, readable] = poll_readable(&[r.status_fd(), r.output.as_fd()], limit);
                if readable {
                    read_once(&mut r.output, output);
                }
                if !ended {
                    return None;
                }
                match r.read_status()? {
                    resident::Report::Ended(code) => Some(code),
                    // Its shell is gone (`kill -9 $$`): the status is lost.
                    resident::Report::Gone => Some(-1),
                    resident::Report::Started(_) => None,
                }
            }
        }
    }
}

/// A shell of its own waited for in the caller's thread.
#[derive(Debug)]
struct OwnChild {
    child: std::process::Child,
    /// Readable once the shell exited.
    pidfd: std::os::fd::OwnedFd,
    /// `None` at end of file.
    reader: Option<std::io::PipeReader>,
}

/// One read of what `reader` holds (it is readable: this does not block);
/// `false` at end of file or on an error.
fn read_once(reader: &mut std::io::PipeReader, output: &Mutex<Capture>) -> bool {
    let mut buf = [0u8; 8192];
    match reader.read(&mut buf) {
        Ok(0) => false,
        Ok(n) => {
            lock(output).push(&buf[..n]);
            true
        }
        Err(e) => e.kind() == std::io::ErrorKind::Interrupted,
    }
}

impl OwnChild {
    /// Waits up to `limit` for the shell's exit or output; reads what
    /// arrived. The exit code once the shell is reaped.
    fn step(&mut self, output: &Mutex<Capture>, limit: Duration) -> Option<i32> {
        let (exited, readable) = match &self.reader {
            Some(r) => {
                let [exited, readable] = poll_readable(&[self.pidfd.as_fd(), r.as_fd()], limit);
                (exited, readable)
            }
            None => (poll_readable(&[self.pidfd.as_fd()], limit)[0], false),
        };
        if readable {
            self.read_once(output);
        }
        if exited {
            return self.reap(Duration::from_secs(1));
        }
        None
    }

    /// One read of what the pipe holds; end of file closes it.
    fn read_once(&mut self, output: &Mutex<Capture>) {
        if let Some(reader) = &mut self.reader {
            if !read_once(reader, output) {
                self.reader = None;
            }
        }
    }

    /// Reaps the shell, waiting up to `limit` for it to exit.
    fn reap(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(exit_code(status)),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(None) => return None,
                Err(_) => return Some(-1),
            }
        }
    }

    /// Reads until every writer closed the pipe, for at most `limit`.
    fn drain(&mut self, output: &Mutex<Capture>, limit: Duration) {
        let deadline = Instant::now() + limit;
        while let Some(reader) = &self.reader {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !poll_readable(&[reader.as_fd()], left)[0] {
                return;
            }
            self.read_once(output);
        }
    }
}

/// The exit code of a status: 128 + N when killed by signal N.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

impl Spawned {
    pub fn target(&self) -> Target {
        Target {
            pid: self.pid,
            start: self.start,
            pgid: self.pid,
        }
    }

    /// Waits up to `limit` for the shell to exit; its exit code, or `None`
    /// when it still runs. A command waited for in this thread has its
    /// output read meanwhile.
    pub fn wait_exit(&self, limit: Duration) -> Option<i32> {
        let mut guard = lock(&self.inline);
        let Some(inline) = guard.as_mut() else {
            drop(guard);
            return self.exit.wait(limit);
        };
        let deadline = Instant::now() + limit;
        loop {
            if let Some(code) = self.exit.get() {
                return Some(code);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(code) = inline.step(&self.output, left) {
                self.exit.set(code);
                return Some(code);
            }
            if left.is_zero() {
                return None;
            }
        }
    }

    /// Tears the command and its family down, waits for the shell's exit
    /// to be recorded (briefly) and for the output to close (briefly).
    pub fn teardown(&self, grace: Duration) -> TeardownReport {
        let report = teardown::teardown_in(
            self.target(),
            self.cgroup.as_deref(),
            self.tag.as_deref(),
            grace,
        );
        let inline = lock(&self.inline).take();
        match inline {
            Some(Inline::Child(mut own)) => {
                if self.exit.get().is_none() {
                    let code = own.reap(Duration::from_secs(1)).unwrap_or(-1);
                    self.exit.set(code);
                }
                own.drain(&self.output, Duration::from_millis(500));
                self.output_done.set(());
                return report;
            }
            Some(Inline::Resident(mut shell)) => {
                let mut reported = self.exit.get().is_some();
                if !reported {
                    // Torn down before it ended: its status comes promptly.
                    let deadline = Instant::now() + Duration::from_secs(1);
                    let code = loop {
                        match shell.next_before(deadline) {
                            Some(resident::Report::Ended(code)) => {
                                reported = true;
                                break code;
                            }
                            Some(resident::Report::Started(_)) => {}
                            Some(resident::Report::Gone) | None => break -1,
                        }
                    };
                    self.exit.set(code);
                }
                // Everything of the command is gone (its cgroup is
                // empty): what it wrote is in the pipe already.
                let empty = self
                    .cgroup
                    .as_deref()
                    .is_some_and(|cg| cg.members().is_empty());
                let deadline = Instant::now() + Duration::from_millis(500);
                while Instant::now() < deadline
                    && poll_readable(&[shell.output.as_fd()], Duration::ZERO)[0]
                    && read_once(&mut shell.output, &self.output)
                {}
                self.output_done.set(());
                if reported && empty && report.survivors.is_empty() {
                    shell.release();
                }
                return report;
            }
            None => {}
        }
        self.exit.wait(Duration::from_secs(1));
        self.output_done.wait(Duration::from_millis(500));
        report
    }

    /// How many times a fork of the command failed on its process bound
    /// (known with a cgroup only).
    pub fn limit_hits(&self) -> u64 {
        self.cgroup
            .as_deref()
            .map_or(0, contain::CommandCgroup::limit_hits)
    }
}

/// The shell code that tells the session trailer where to write
/// (`session::wrap` writes to `"$__hermes_state"`).
fn state_assignment(file: Option<&Path>) -> String {
    file.map_or_else(String::new, |f| {
        format!("__hermes_state={}; ", shell_quote(&f.to_string_lossy()))
    })
}

/// How to start a command.
#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// Output bytes kept from the start and from the end.
    pub head_cap: usize,
    pub tail_cap: usize,
    /// Give the command a stdin to write to (else `/dev/null`).
    pub stdin: bool,
    /// Run it on a pseudo-terminal (stdin, stdout and stderr; implies a
    /// stdin to write to).
    pub pty: bool,
    /// The processes (and threads) it may have at once.
    pub max_processes: u64,
    /// Told about its output and its exit.
    pub watcher: Option<Arc<notify::Watcher>>,
    /// The caller waits for it ([`Spawned::wait_exit`]) and tears it down
    /// in its own thread: no reader or waiter thread. Only without a
    /// pseudo-terminal or a watcher, and where the kernel has pidfds;
    /// otherwise threads do it as for any command.
    pub inline: bool,
    /// In a user namespace of its own ([`contain::user_namespace_for`]).
    pub user_namespace: bool,
    /// Under this sandbox ([`crate::sandbox`]); `None`: not sandboxed.
    pub sandbox: Option<Arc<crate::sandbox::Policy>>,
    /// The script writes the session's state to `"$__hermes_state"`,
    /// a file in the command's own folder ([`Spawned::state_file`]).
    pub state: bool,
    /// The terminal session the command belongs to: resident shells
    /// serve the commands of one session (and one sandbox) only.
    pub session: Option<String>,
}

impl SpawnOptions {
    /// A foreground command: stdin `/dev/null`, no terminal, the default bound.
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        SpawnOptions {
            head_cap,
            tail_cap,
            stdin: false,
            pty: false,
            max_processes: contain::DEFAULT_MAX_PROCESSES,
            watcher: None,
            inline: false,
            user_namespace: false,
            sandbox: None,
            state: false,
            session: None,
        }
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
    spawn_with(env, script, cwd, &SpawnOptions::new(head_cap, tail_cap))
}

/// Starts a foreground command waited for in the caller's thread
/// ([`SpawnOptions::inline`]): forked from a resident shell
/// ([`resident`]) where this machine allows it, else as [`spawn_with`]
/// starts any command. The two differ in cost only.
pub fn spawn_foreground(
    env: &ChildEnv,
    script: &str,
    cwd: &Path,
    options: &SpawnOptions,
) -> std::io::Result<Spawned> {
    if options.inline
        && !options.pty
        && !options.stdin
        && options.watcher.is_none()
        && resident::usable()
    {
        match start_resident(env, script, cwd, options) {
            Ok(Some(spawned)) => return Ok(spawned),
            Ok(None) => {}
            // It may have run: never started twice.
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Err(e),
            Err(e) => {
                tracing::debug!(target: "hermes::procs", "resident shell: {e}; starting a shell");
            }
        }
    }
    spawn_with(env, script, cwd, options)
}

/// [`spawn_foreground`] through a resident shell; `None` when the command
/// cannot be written for one ([`resident::script`]).
fn start_resident(
    env: &ChildEnv,
    script: &str,
    cwd: &Path,
    options: &SpawnOptions,
) -> std::io::Result<Option<Spawned>> {
    contain::harden_process();
    contain::harden_thread();
    let contain::Containment::Cgroup { parent, .. } = contain::containment() else {
        return Ok(None);
    };
    let cgroup = contain::CommandCgroup::create(parent, options.max_processes)?;
    let key = resident::Key {
        user_namespace: options.user_namespace,
        sandbox: options.sandbox.clone(),
        session: options.session.clone(),
    };
    // An idle shell may have ended since it was pooled: one more try with
    // a new one.
    let mut shell = resident::Resident::take(&key)?;
    let state_file = options.state.then(|| shell.state_file());
    let Some(text) = resident::script(env, cwd, &state_assignment(state_file.as_deref()), script)
    else {
        shell.release();
        return Ok(None);
    };
    let join = |pid: i32| cgroup.join(pid);
    let pid = match shell.start(&text, join) {
        Ok(pid) => pid,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Err(e),
        Err(_) => {
            drop(shell);
            shell = resident::Resident::take(&key)?;
            shell.start(&text, join)?
        }
    };
    let state_file = options.state.then(|| shell.state_file());
    // Read while the subshell is most likely still running; if it already
    // ended, a start time nothing has makes sure teardown never signals
    // another process that got its pid.
    let start = scan::read(pid).map_or(u64::MAX, |p| p.start);
    Ok(Some(Spawned {
        pid,
        start: Some(start),
        exit: Arc::new(Latch::default()),
        output: Arc::new(Mutex::new(Capture::new(options.head_cap, options.tail_cap))),
        output_done: Arc::new(Latch::default()),
        input: Mutex::new(None),
        pty: false,
        cgroup: Some(Arc::new(cgroup)),
        tag: None,
        max_processes: options.max_processes,
        state_file,
        _own_dir: None,
        inline: Mutex::new(Some(Inline::Resident(shell))),
    }))
}

/// The pseudo-terminal's size.
const PTY_ROWS: u16 = 24;
const PTY_COLS: u16 = 80;

/// Starts `shell -c script` in `cwd` with `env` as `options` say: its own
/// process group (a session of its own on a pseudo-terminal), its own
/// cgroup or tag, output drained into a [`Capture`] by a reader thread,
/// the shell reaped by a waiter thread.
pub fn spawn_with(
    env: &ChildEnv,
    script: &str,
    cwd: &Path,
    options: &SpawnOptions,
) -> std::io::Result<Spawned> {
    contain::harden_process();
    contain::harden_thread();
    let mut env = std::borrow::Cow::Borrowed(env);
    let sandbox = options.sandbox.as_deref();
    let own_dir = if sandbox.is_some() || options.state {
        match OwnDir::create("cmd-") {
            Ok(dir) => Some(dir),
            Err(e) if options.state => return Err(e),
            Err(_) => None,
        }
    } else {
        None
    };
    let state_file = options
        .state
        .then(|| own_dir.as_ref().map(|d| d.0.join("state")))
        .flatten();
    let mut join_file = None;
    let (cgroup, tag, prefix) = match contain::containment() {
        contain::Containment::Cgroup { parent, .. } => {
            let cg = contain::CommandCgroup::create(parent, options.max_processes)?;
            // A sandboxed shell may not write cgroup files: the helper
            // joins before it applies the rules.
            let prefix = if sandbox.is_some() {
                join_file = Some(cg.join_file());
                String::new()
            } else {
                cg.shell_prefix()
            };
            (Some(Arc::new(cg)), None, prefix)
        }
        other => {
            let tag = new_id();
            env.to_mut().set(teardown::TAG_VAR, tag.clone());
            let prefix = match other {
                contain::Containment::Rlimit => contain::rlimit_prefix(options.max_processes),
                _ => String::new(),
            };
            (None, Some(tag), prefix)
        }
    };
    let script = format!(
        "{}{prefix}{script}",
        state_assignment(state_file.as_deref())
    );
    let helper: Vec<std::ffi::OsString> = sandbox.map_or_else(Vec::new, |p| {
        p.helper_command(
            join_file.as_deref(),
            own_dir.as_ref().map(|d| d.0.as_path()),
        )
    });

    let (child, reader, input): (std::process::Child, OutputReader, Option<Input>) = if options.pty
    {
        let (pty, pts) = pty_process::blocking::open().map_err(std::io::Error::other)?;
        pty.resize(pty_process::Size::new(PTY_ROWS, PTY_COLS))
            .map_err(std::io::Error::other)?;
        let argv = launcher(options.user_namespace, &helper)?;
        let command = match argv.split_first() {
            Some((program, args)) => env
                .pty_command(program)
                .args(args)
                .arg(crate::child_env::shell())
                .arg("-c")
                .arg(&script),
            None => env.pty_shell_command(&script),
        };
        let child = command
            .current_dir(cwd)
            .spawn(pts)
            .map_err(std::io::Error::other)?;
        let pty = Arc::new(pty);
        (
            child,
            OutputReader::Pty(PtyReader(pty.clone())),
            Some(Input::Pty(pty)),
        )
    } else {
        let (reader, writer) = std::io::pipe()?;
        let mut cmd = shell_command(env.as_ref(), options.user_namespace, &helper, &script)?;
        let input = if options.stdin {
            let (stdin, input) = std::io::pipe()?;
            cmd.stdin(stdin);
            Some(input)
        } else {
            cmd.stdin(Stdio::null());
            None
        };
        cmd.current_dir(cwd)
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .process_group(0);
        let child = cmd.spawn()?;
        // The command holds our copies of the pipes' child ends: drop
        // them so the reader sees end-of-file once the child's family
        // closes theirs.
        drop(cmd);
        (child, OutputReader::Pipe(reader), input.map(Input::Pipe))
    };
    if let Some(Input::Pipe(w)) = &input {
        set_nonblocking(w);
    }
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let start = scan::read(pid).map(|p| p.start);

    let output = Arc::new(Mutex::new(Capture::new(options.head_cap, options.tail_cap)));
    let output_done = Arc::new(Latch::default());
    let exit = Arc::new(Latch::default());
    let mut spawned = Spawned {
        pid,
        start,
        exit: exit.clone(),
        output: output.clone(),
        output_done: output_done.clone(),
        input: Mutex::new(input),
        pty: options.pty,
        cgroup,
        tag,
        max_processes: options.max_processes,
        state_file,
        _own_dir: own_dir,
        inline: Mutex::new(None),
    };
    let (child, reader) = match reader {
        OutputReader::Pipe(reader) if options.inline && options.watcher.is_none() => {
            match rustix::process::Pid::from_raw(pid)
                .map(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()))
            {
                Some(Ok(pidfd)) => {
                    *spawned.inline.get_mut().unwrap_or_else(|e| e.into_inner()) =
                        Some(Inline::Child(OwnChild {
                            child,
                            pidfd,
                            reader: Some(reader),
                        }));
                    return Ok(spawned);
                }
                // No pidfd (a kernel before 5.3): threads, as below.
                _ => (child, OutputReader::Pipe(reader)),
            }
        }
        other => (child, other),
    };
    {
        let (output, done) = (output.clone(), output_done.clone());
        let watcher = options.watcher.clone();
        let mut reader = reader;
        std::thread::Builder::new()
            .name(format!("hermes-out-{pid}"))
            .spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    let read = match &mut reader {
                        OutputReader::Pipe(r) => r.read(&mut buf),
                        OutputReader::Pty(r) => r.read(&mut buf),
                    };
                    match read {
                        Ok(0) => break,
                        Ok(n) => {
                            lock(&output).push(&buf[..n]);
                            if let Some(w) = &watcher {
                                w.output(&buf[..n]);
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        // A pseudo-terminal reads EIO once the last process
                        // holding its other end is gone: end of output.
                        Err(_) => break,
                    }
                }
                done.set(());
            })?;
    }
    {
        let exit = exit.clone();
        let watcher = options.watcher.clone();
        let (output, done) = (output.clone(), output_done.clone());
        let mut child = child;
        std::thread::Builder::new()
            .name(format!("hermes-wait-{pid}"))
            .spawn(move || {
                let code = child.wait().map_or(-1, exit_code);
                exit.set(code);
                if let Some(w) = watcher {
                    // The last bytes first (children may hold the pipe).
                    done.wait(Duration::from_millis(500));
                    w.exited(code, lock(&output).render_tail(2000));
                }
            })?;
    }
    Ok(spawned)
}

/// Where a command's output is read from.
enum OutputReader {
    Pipe(std::io::PipeReader),
    Pty(PtyReader),
}

/// Reads a shared pseudo-terminal (its writer is the command's input).
struct PtyReader(Arc<pty_process::blocking::Pty>);

impl Read for PtyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        (&*self.0).read(buf)
    }
}

/// Writes to a command's input never block the caller: a full pipe is
/// reported, not waited on forever.
fn set_nonblocking(fd: &impl std::os::fd::AsFd) {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    if let Ok(bits) = fcntl(fd, FcntlArg::F_GETFL) {
        let flags = OFlag::from_bits_truncate(bits) | OFlag::O_NONBLOCK;
        let _ = fcntl(fd, FcntlArg::F_SETFL(flags));
    }
}

/// How long a write to a command's input may wait for room.
const INPUT_WRITE_LIMIT: Duration = Duration::from_secs(2);

/// What writing to a command's input did.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// All bytes were written.
    Written(usize),
    /// Only this many: the command is not reading (the pipe stayed full).
    Partial(usize),
}

impl Spawned {
    /// Writes `data` to the command's input, waiting at most
    /// `INPUT_WRITE_LIMIT` for room. `Err` names what was wrong.
    pub fn write_input(&self, data: &[u8]) -> Result<WriteOutcome, String> {
        let guard = lock(&self.input);
        let Some(input) = guard.as_ref() else {
            return Err("stdin is closed (or the command was started without one)".into());
        };
        let deadline = Instant::now() + INPUT_WRITE_LIMIT;
        let mut written = 0;
        while written < data.len() {
            let result = match input {
                Input::Pipe(w) => {
                    let mut w: &std::io::PipeWriter = w;
                    w.write(&data[written..])
                }
                Input::Pty(p) => (&**p).write(&data[written..]),
            };
            match result {
                Ok(0) => break,
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Ok(WriteOutcome::Partial(written));
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) if written > 0 => {
                    let _ = e;
                    return Ok(WriteOutcome::Partial(written));
                }
                Err(e) => return Err(format!("cannot write to the command's stdin: {e}")),
            }
        }
        Ok(WriteOutcome::Written(written))
    }

    /// Ends the command's input: closes the pipe, or on a pseudo-terminal
    /// sends the end-of-file character (the terminal stays open).
    pub fn close_input(&self) -> Result<&'static str, String> {
        let mut guard = lock(&self.input);
        match guard.as_ref() {
            None => Err("stdin is already closed (or the command was started without one)".into()),
            Some(Input::Pty(p)) => {
                (&**p)
                    .write_all(b"\x04")
                    .map_err(|e| format!("cannot send end-of-file: {e}"))?;
                Ok("EOF sent")
            }
            Some(Input::Pipe(_)) => {
                *guard = None;
                Ok("stdin closed")
            }
        }
    }
}

/// A command started with `background`: what `process` manages.
#[derive(Debug)]
pub struct Background {
    pub id: String,
    pub command: String,
    pub cwd: PathBuf,
    /// The profile that started it: only calls under it see it.
    pub profile_home: PathBuf,
    /// The session that owns it (ends it when the session ends): the one
    /// that started it, until a sub-agent hands it to its parent
    /// ([`Background::hand_to`]).
    owner: Mutex<Option<String>>,
    /// Whether its output was ever read (`poll`, `log`, `wait`).
    read: std::sync::atomic::AtomicBool,
    pub started: Instant,
    pub spawned: Spawned,
    /// Set once `process` killed it.
    pub killed: Mutex<Option<TeardownReport>>,
    /// What it reports (`notify_on_complete`, `watch_patterns`).
    pub watcher: Arc<notify::Watcher>,
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

    /// The session that owns it now.
    pub fn owner(&self) -> Option<String> {
        lock(&self.owner).clone()
    }

    /// Gives it to `owner` (a sub-agent's parent): it then ends with that
    /// session, and its notifications go to it.
    pub fn hand_to(&self, owner: Option<String>) {
        self.watcher.retarget(owner.clone());
        *lock(&self.owner) = owner;
    }

    /// Records that its output was read.
    pub fn mark_read(&self) {
        self.read.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether its output was ever read.
    pub fn was_read(&self) -> bool {
        self.read.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// One background process a session's end tore down: what the session's
/// owner is told (`delegate_task` lists them in a child's result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub id: String,
    pub command: String,
    /// Still running when the session ended (and so killed with it).
    pub was_running: bool,
    /// Its output was read at least once.
    pub was_read: bool,
    pub exit_code: Option<i32>,
}

/// The background processes of one process (the agent), by id, and the
/// foreground commands running now (so that an agent shutting down while
/// a call waits on one, or after its call was abandoned, tears it down too).
#[derive(Debug, Default)]
pub struct ProcessTable {
    procs: Mutex<HashMap<String, Arc<Background>>>,
    foreground: Mutex<HashMap<i32, Foreground>>,
}

/// What tearing down a foreground command needs.
#[derive(Debug, Clone)]
struct Foreground {
    target: Target,
    cgroup: Option<Arc<contain::CommandCgroup>>,
    tag: Option<String>,
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

/// How a background command is started, beyond its text and directory.
#[derive(Debug, Clone, Default)]
pub struct BackgroundOptions {
    /// On a pseudo-terminal.
    pub pty: bool,
    /// One notification when it exits.
    pub notify_on_complete: bool,
    /// Notifications when its output contains one of these.
    pub watch_patterns: Vec<String>,
    /// The command as the model wrote it, when `command` is a wrapper
    /// around it (a remote backend's client): what `process` shows,
    /// notifications name and the input check reads. `None`: `command`.
    pub label: Option<String>,
}

impl ProcessTable {
    /// Starts `command` in the background for the call's profile, with
    /// `env` (the profile's, with its terminal session's changes) and a
    /// stdin `process` can write to.
    pub fn start(
        &self,
        ctx: &ToolContext,
        env: &ChildEnv,
        command: &str,
        cwd: &Path,
        options: BackgroundOptions,
        sandbox: Option<Arc<crate::sandbox::Policy>>,
    ) -> std::io::Result<Arc<Background>> {
        let mut id = new_id();
        while lock(&self.procs).contains_key(&id) {
            id = new_id();
        }
        let shown = options.label.as_deref().unwrap_or(command).to_string();
        let watcher = Arc::new(notify::Watcher::new(
            notify::Origin {
                session_id: id.clone(),
                command: shown.clone(),
                profile_home: ctx.profile().home().to_path_buf(),
                task_id: ctx.session_id().map(str::to_string),
                redact: crate::redact::enabled_for(ctx.profile()),
            },
            options.notify_on_complete,
            options.watch_patterns,
        ));
        let spawn_options = SpawnOptions {
            stdin: true,
            pty: options.pty,
            max_processes: contain::max_processes_for(ctx.profile()),
            user_namespace: contain::user_namespace_for(ctx.profile()),
            watcher: watcher.is_active().then(|| watcher.clone()),
            sandbox,
            ..SpawnOptions::new(BG_HEAD_BYTES, BG_TAIL_BYTES)
        };
        let spawned = spawn_with(env, command, cwd, &spawn_options)?;
        let mut procs = lock(&self.procs);
        let bg = Arc::new(Background {
            id,
            command: shown,
            cwd: cwd.to_path_buf(),
            profile_home: ctx.profile().home().to_path_buf(),
            owner: Mutex::new(ctx.session_id().map(str::to_string)),
            read: std::sync::atomic::AtomicBool::new(false),
            started: Instant::now(),
            spawned,
            killed: Mutex::new(None),
            watcher,
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

    /// Whether a background process of any profile has this id.
    pub fn contains(&self, id: &str) -> bool {
        lock(&self.procs).contains_key(id)
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
        let entry = Foreground {
            target: run.target(),
            cgroup: run.cgroup.clone(),
            tag: run.tag.clone(),
        };
        lock(&self.foreground).insert(run.pid, entry);
        Tracked {
            table: self,
            pid: run.pid,
        }
    }

    /// Tears down the background processes one session of `profile`
    /// owns (`session_id`: the id of its calls' context), with `grace`;
    /// returns what each was when the session ended.
    pub fn end_session(&self, profile: &Profile, session_id: &str, grace: Duration) -> Vec<Ended> {
        // Left in the table while they are torn down: a shutdown meanwhile
        // (the process exiting) still finds and ends them.
        let ended: Vec<Arc<Background>> = lock(&self.procs)
            .values()
            .filter(|b| {
                b.profile_home == profile.home() && b.owner().as_deref() == Some(session_id)
            })
            .cloned()
            .collect();
        let report: Vec<Ended> = ended
            .iter()
            .map(|b| Ended {
                id: b.id.clone(),
                command: b.command.clone(),
                was_running: b.exit_code().is_none(),
                was_read: b.was_read(),
                exit_code: b.exit_code(),
            })
            .collect();
        std::thread::scope(|s| {
            for bg in &ended {
                s.spawn(move || kill(bg, grace));
            }
        });
        let mut procs = lock(&self.procs);
        for bg in &ended {
            procs.remove(&bg.id);
        }
        report
    }

    /// Tears down every background process of every profile, and every
    /// foreground command still running (the agent shutting down), with
    /// `grace`; returns how many background processes were still running.
    pub fn shutdown_all(&self, grace: Duration) -> usize {
        // Taken out of the table: once torn down, each is dropped, and with
        // it its cgroup.
        let all: Vec<Arc<Background>> = lock(&self.procs).drain().map(|(_, b)| b).collect();
        let foreground: Vec<Foreground> = lock(&self.foreground).values().cloned().collect();
        let mut running = 0;
        std::thread::scope(|s| {
            for bg in &all {
                if bg.exit_code().is_none() {
                    running += 1;
                }
                s.spawn(move || kill(bg, grace));
            }
            for fg in foreground {
                s.spawn(move || {
                    teardown::teardown_in(fg.target, fg.cgroup.as_deref(), fg.tag.as_deref(), grace)
                });
            }
        });
        drop(all);
        resident::release_pool();
        contain::release_pool();
        running
    }
}

/// Tears a background process down (parent-first), records and returns the
/// report. A process that already exited still has the rest of its family
/// (children left running in its group) torn down.
pub fn kill(bg: &Background, grace: Duration) -> TeardownReport {
    bg.watcher
        .kill_requested
        .store(true, std::sync::atomic::Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_for_a_posix_shell() {
        assert_eq!(super::shell_quote("it's"), r"'it'\''s'");
    }
}
