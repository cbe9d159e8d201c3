//! Foreground commands forked from a resident shell.
//!
//! Starting bash is most of what a short command costs: the `exec`, the
//! dynamic linking and bash's own start take longer here than `sh -c
//! true` as a whole. So a foreground command is not started as `bash -c`:
//! an idle resident bash (started once, kept in a small pool) forks a
//! subshell for it, which costs a fraction of that. What the command sees
//! is what `bash -c` gives it, built afresh by each subshell: its
//! environment exported from [`ChildEnv`] (the resident shell itself runs
//! with `LANG` alone, so it holds no secret), its working directory, its
//! own process group, stdin from `/dev/null`, stdout and stderr into one
//! pipe, and its command cgroup joined before its first line. Nothing a
//! command does changes the resident shell: the subshell is a copy that
//! ends with the command.
//!
//! The resident shell reads a one-byte signal on its stdin, then the
//! command's script from the file in its own folder (through the
//! descriptor it opened at its start, so a file renamed over the path is
//! never read), and reports on its stderr, one line each: `P<pid>` (the
//! subshell is started; from the subshell itself, which then waits for a
//! second byte while the agent moves it into the command's cgroup) and
//! `S<status>` (it ended: `$?`, 128 + N for signal N). Other
//! lines there (bash's own job messages, "Terminated") are skipped. It
//! runs with job control (`set -m`), so every subshell leads a process
//! group of its own, and it ignores nothing but keeps `:` traps on the
//! terminating signals: a command's `kill $$` (`$$` is the resident
//! shell's pid in a subshell) does not end it, while the command itself
//! gets default dispositions, as `bash -c` would.
//!
//! A resident shell serves one command at a time, of one terminal session
//! under one sandbox ([`Key`]; a sandboxed one is started under the
//! sandbox helper, so what it forks is already sandboxed); concurrent
//! commands take other ones. It goes back to the pool only when its command ended, was
//! reported, and left nothing in its cgroup (so nothing of it can write to
//! the shared output pipe any more); otherwise it is killed. Idle ones
//! beyond `MAX_IDLE` are killed, and all of them end with the agent
//! (their stdin closes) or at [`release_pool`].

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::child_env::{self, ChildEnv};

/// Idle resident shells kept for the next commands.
const MAX_IDLE: usize = 8;
/// How long a resident shell may take to start a command's subshell.
const START_LIMIT: Duration = Duration::from_secs(5);
/// The longest status line kept while waiting for its end; a longer one
/// (never ours) is dropped.
const MAX_STATUS_LINE: usize = 4096;

static IDLE: Mutex<Vec<Resident>> = Mutex::new(Vec::new());

fn idle() -> std::sync::MutexGuard<'static, Vec<Resident>> {
    IDLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ends every idle resident shell (the agent shutting down).
pub fn release_pool() {
    let all: Vec<Resident> = idle().drain(..).collect();
    drop(all);
}

/// Ends the idle resident shells of one terminal session (`name`, as
/// `terminal::session::name` gives it): the session ended.
pub fn release_session(name: &str) {
    let ended: Vec<Resident> = {
        let mut idle = idle();
        let (ended, kept): (Vec<_>, Vec<_>) = idle
            .drain(..)
            .partition(|r| r.key.session.as_deref() == Some(name));
        *idle = kept;
        ended
    };
    drop(ended);
}

/// Every resident shell running now, idle or serving a command.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The pids of the resident shells running now, idle or busy (for
/// diagnostics and tests).
pub fn pids() -> Vec<i32> {
    crate::base::lock(&LIVE).clone()
}

/// Whether commands can be forked from a resident shell: bash is the
/// shell, and commands get a cgroup (which finds everything a command
/// leaves behind, so that nothing of it outlives its turn).
pub fn usable() -> bool {
    child_env::shell().ends_with("bash")
        && matches!(
            super::contain::containment(),
            super::contain::Containment::Cgroup { .. }
        )
}

/// What the resident shell reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The command's subshell runs, with this pid.
    Started(i32),
    /// The subshell ended with this status.
    Ended(i32),
    /// The resident shell is gone (its stderr closed).
    Gone,
}

/// Which commands a resident shell may serve: those of one terminal
/// session, under one sandbox (or none), in (or out of) a user namespace.
/// A shell's own folder is writable to its commands: shared between
/// sessions it would carry one session's files into another's commands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Key {
    pub user_namespace: bool,
    pub sandbox: Option<std::sync::Arc<crate::sandbox::Policy>>,
    pub session: Option<String>,
}

/// An idle or busy resident shell.
#[derive(Debug)]
pub struct Resident {
    child: Child,
    /// Its stdin: one byte starts the next command.
    control: std::io::PipeWriter,
    /// Its stderr: `P<pid>` and `S<status>` lines.
    status: std::io::PipeReader,
    /// Its stdout: every command's stdout and stderr.
    pub(super) output: std::io::PipeReader,
    /// The file it reads the next command's script from (up to a NUL),
    /// and its path.
    script: std::fs::File,
    /// Its own folder (the script, its commands' state files), removed
    /// with it.
    folder: crate::base::OwnDir,
    key: Key,
    /// Status bytes read but not yet a whole line.
    pending: Vec<u8>,
}

impl Drop for Resident {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let pid = i32::try_from(self.child.id()).unwrap_or(-1);
        crate::base::lock(&LIVE).retain(|p| *p != pid);
    }
}

impl Resident {
    /// An idle resident shell for commands in (or out of) a user
    /// namespace; a new one when none is idle.
    pub fn take(key: &Key) -> std::io::Result<Self> {
        loop {
            let found = {
                let mut idle = idle();
                let at = idle.iter().rposition(|r| r.key == *key);
                at.map(|i| idle.remove(i))
            };
            let Some(mut r) = found else {
                return Self::spawn(key);
            };
            // One that ended meanwhile is dropped; the next is tried.
            if matches!(r.child.try_wait(), Ok(None)) {
                return Ok(r);
            }
        }
    }

    /// Back to the pool (or ended, when the pool is full).
    /// Back to the pool; the least recently used idle shell ends when the
    /// pool is full.
    pub fn release(self) {
        let mut idle = idle();
        if idle.len() >= MAX_IDLE {
            let oldest = idle.remove(0);
            drop(idle);
            drop(oldest);
            idle = self::idle();
        }
        idle.push(self);
    }

    /// Where this shell's commands write the session's state (one
    /// command at a time; emptied before each start).
    pub fn state_file(&self) -> PathBuf {
        self.folder.0.join("state")
    }

    fn spawn(key: &Key) -> std::io::Result<Self> {
        let folder = crate::base::OwnDir::create("shell-")?;
        // The shell opens it once, at its start, and reads it through that
        // descriptor (`/proc/self/fd/5`: the same file, from its start):
        // a file renamed over the path later is never read.
        let script_path = folder.0.join("script");
        let script = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&script_path)?;
        let (control_read, control) = std::io::pipe()?;
        let (status, status_write) = std::io::pipe()?;
        let (output, output_write) = std::io::pipe()?;
        let main_loop = format!(
            "trap : TERM HUP INT QUIT USR1 USR2 ALRM; set -m; exec 5<{file} || exit 125; \
             while read -r -n1 __hermes_go; do \
             IFS= read -r -d '' __hermes_s </proc/self/fd/5; \
             ( eval \"$__hermes_s\" ) 4<&0 5<&- </dev/null 3>&2 2>&1; \
             builtin printf 'S%d\\n' \"$?\" >&2; done",
            file = crate::base::shell_quote(&script_path.to_string_lossy()),
        );
        let helper = key
            .sandbox
            .as_deref()
            .map_or_else(Vec::new, |p| p.helper_command(None, Some(&folder.0)));
        let mut cmd =
            crate::launch::shell_command(own_env(), key.user_namespace, &helper, &main_loop)?;
        cmd.current_dir("/")
            .stdin(control_read)
            .stdout(output_write)
            .stderr(status_write)
            .process_group(0);
        use std::os::unix::process::CommandExt;
        let child = cmd.spawn()?;
        crate::base::lock(&LIVE).push(i32::try_from(child.id()).unwrap_or(-1));
        Ok(Resident {
            child,
            control,
            status,
            output,
            script,
            folder,
            key: key.clone(),
            pending: Vec::new(),
        })
    }

    /// Starts `text` (a whole script, [`script`]) in a subshell; its pid.
    /// The subshell waits, before anything of the command, until `join`
    /// (moving it into the command's cgroup) is done; when `join` fails it
    /// is killed and the command never runs.
    pub fn start(
        &mut self,
        text: &str,
        join: impl Fn(i32) -> std::io::Result<()>,
    ) -> std::io::Result<i32> {
        // What an earlier command of this shell reported is not this one's.
        let _ = std::fs::remove_file(self.state_file());
        // Emptied after each start (below), written from its start and
        // ended by a NUL.
        use std::os::unix::fs::FileExt;
        let mut bytes = Vec::with_capacity(text.len() + 1);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(0);
        self.script.write_all_at(&bytes, 0)?;
        self.control.write_all(b"x")?;
        match self.next_before(Instant::now() + START_LIMIT) {
            Some(Report::Started(pid)) => {
                // The shell read the script before it forked: what it
                // holds (the command's environment, secrets included) is
                // not left in the file.
                let _ = self.script.set_len(0);
                if let Err(e) = join(pid) {
                    use nix::sys::signal::{kill, Signal};
                    let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
                    let _ = self.child.kill();
                    return Err(std::io::Error::other(format!(
                        "cannot move the command into its cgroup: {e}"
                    )));
                }
                // Its go: the subshell reads this byte from the shell's
                // stdin (fd 4), which the waiting shell does not read.
                self.control.write_all(b"g")?;
                Ok(pid)
            }
            Some(Report::Ended(code)) => Err(std::io::Error::other(format!(
                "the resident shell could not start the command (status {code})"
            ))),
            Some(Report::Gone) => Err(std::io::Error::other("the resident shell ended")),
            None => Err(self.stalled()),
        }
    }

    /// After a start that did not report in time (the shell stopped, or
    /// a machine too loaded): the shell is killed, so it starts nothing
    /// more, and a subshell it forked already (which reports itself before
    /// it runs anything) is killed too. `TimedOut` when the command may
    /// have run (it must not be started again), another error when it
    /// surely did not.
    fn stalled(&mut self) -> std::io::Error {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let settle = Instant::now() + Duration::from_secs(1);
        loop {
            match self.next_before(settle) {
                Some(Report::Started(pid)) => {
                    use nix::sys::signal::{kill, Signal};
                    use nix::unistd::Pid;
                    let _ = kill(Pid::from_raw(-pid), Signal::SIGKILL);
                    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                    return std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the resident shell started the command late; it was killed",
                    );
                }
                Some(Report::Gone) => {
                    return std::io::Error::other("the resident shell stalled; it was killed")
                }
                Some(Report::Ended(_)) => {}
                None => {
                    return std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the resident shell did not start the command in time",
                    )
                }
            }
        }
    }

    /// The next report, waiting until `deadline` for it; `None` when none
    /// came.
    pub fn next_before(&mut self, deadline: Instant) -> Option<Report> {
        loop {
            if let Some(r) = self.pending_report() {
                return Some(r);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if crate::base::poll_readable(&[self.status.as_fd()], left)[0] {
                if let Some(r) = self.read_status() {
                    return Some(r);
                }
            } else if left.is_zero() {
                return None;
            }
        }
    }

    /// Reads what the status pipe holds (it is readable: this does not
    /// block) and returns a whole report if there is one.
    pub fn read_status(&mut self) -> Option<Report> {
        let mut buf = [0u8; 512];
        match self.status.read(&mut buf) {
            Ok(0) => return Some(Report::Gone),
            Ok(n) => self.pending.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Some(Report::Gone),
        }
        self.pending_report()
    }

    /// The first whole report line of what was read already (another
    /// report may have come in one read with the last one); other lines
    /// are dropped.
    pub fn pending_report(&mut self) -> Option<Report> {
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..end]);
            let number = |prefix| line.strip_prefix(prefix)?.trim().parse::<i32>().ok();
            if let Some(pid) = number('P') {
                return Some(Report::Started(pid));
            }
            if let Some(code) = number('S') {
                return Some(Report::Ended(code));
            }
        }
        if self.pending.len() > MAX_STATUS_LINE {
            self.pending.clear();
        }
        None
    }

    /// The status pipe, to be polled with the output.
    pub fn status_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.status.as_fd()
    }
}

/// The resident shell's own environment: the base's locale and nothing
/// else (no secret). Its subshells inherit the locale already loaded,
/// where exporting `LANG` in each would load it again (dozens of files).
fn own_env() -> &'static ChildEnv {
    static OWN: std::sync::LazyLock<ChildEnv> = std::sync::LazyLock::new(|| {
        let mut own = ChildEnv::empty();
        if let Some(lang) = ChildEnv::base().get("LANG") {
            own.set("LANG", lang);
        }
        own
    });
    &OWN
}

/// The script a subshell runs for one command: it reports its pid, waits
/// until the agent moved it into the command's cgroup ([`Resident::start`]),
/// runs `prefix` (shell code of the caller), enters `cwd` and exports
/// exactly `env`, then runs `body`. `None` when that cannot be written for
/// bash (a variable name that is no shell name, a NUL).
pub fn script(env: &ChildEnv, cwd: &Path, prefix: &str, body: &str) -> Option<String> {
    let name_ok = |n: &str| {
        let mut chars = n.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let cwd = cwd.to_str()?;
    if body.contains('\0') || cwd.contains('\0') {
        return None;
    }
    let mut text = String::with_capacity(body.len() + 1024);
    // What the shell has and the command must not: a variable of its own
    // environment that `env` leaves out.
    for (name, _) in own_env().vars() {
        if env.get(name).is_none() {
            text.push_str("unset ");
            text.push_str(name);
            text.push_str("; ");
        }
    }
    text.push_str(
        "unset __hermes_go __hermes_s; builtin printf 'P%d\\n' \"$BASHPID\" >&3; exec 3>&-; \
         builtin read -r -n1 -u 4 __hermes_go || exit 125; exec 4<&-; unset __hermes_go; \
         set +m; ",
    );
    text.push_str(prefix);
    text.push_str("builtin cd -P -- ");
    text.push_str(&crate::base::shell_quote(cwd));
    text.push_str(" || exit 126; unset OLDPWD;");
    for (name, value) in env.vars() {
        if !name_ok(name) || value.contains('\0') {
            return None;
        }
        if own_env().get(name) == Some(value) {
            continue;
        }
        text.push_str(" export ");
        text.push_str(name);
        text.push('=');
        text.push_str(&crate::base::shell_quote(value));
        text.push(';');
    }
    text.push('\n');
    text.push_str(body);
    Some(text)
}
