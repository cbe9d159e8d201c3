//! A shell on another machine reached through a local client program
//! (`ssh HOST …`, `docker exec CONTAINER …`): a [`Transport`] says how to
//! reach the machine; [`Shell`] runs scripts there and keeps the
//! session's state; `remote::Remote` is the whole `Backend` built on it,
//! the same for every transport.
//!
//! Every command and file operation is one run of the transport's client
//! with a POSIX `sh` script (`Transport::client`). What a session keeps
//! (as on the local backend: the working directory and the exported
//! variables) is kept here, in memory: a foreground script starts with
//! `cd` and the session's `export`s / `unset`s, and ends with a trailer
//! that prints a marker of its own, `pwd -P`, a NUL and `env -0`, which
//! `Remote` cuts from the output and keeps as the difference from the
//! machine's own environment (listed once, when the session first uses
//! it). A command that ends its shell (`exit`, a timeout) leaves the
//! session as it was.
//!
//! Teardown on the machine: each script writes its shell's pid (the
//! process group of everything it starts without `setsid`: sshd and
//! `docker exec` start the shell as a session leader) into a file of the
//! session's folder there (`Shell::dir`); a foreground script kills its
//! own group after its trailer (what it left running, as the local
//! backend tears it down), a timeout, a cancellation or `process` kill
//! signal the group (TERM, the profile's grace, KILL), and the session's
//! end signals every group still listed, kills every process whose
//! environment carries the session's `HERMES_BACKEND_SESSION` (what left
//! its group with `setsid` or a double fork; one that empties its
//! environment escapes), removes the folder and closes the transport.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hermes_procs::child_env::ChildEnv;
use hermes_procs::shell_quote;
use hermes_runtime::Profile;

/// How a remote backend reaches its machine.
pub trait Transport: Send + Sync + std::fmt::Debug {
    /// The backend's row name (`ssh`, `docker`).
    fn name(&self) -> &'static str;
    /// Makes the machine reachable within `timeout` (connects, or
    /// connects again when the connection died): cheap when it is up.
    /// `true` when it (re)connected. An error is the model's text, naming
    /// the backend and what to fix.
    fn ensure(&self, env: &ChildEnv, timeout: Duration) -> Result<bool, String>;
    /// The local command line (program first) that runs `script` with
    /// `sh` on the machine, its stdin forwarded.
    fn client(&self, script: &str) -> Vec<String>;
    /// The working directory a session starts in when `terminal.cwd`
    /// names none (`None`: the machine's `$HOME`).
    fn default_cwd(&self) -> Option<String> {
        None
    }
    /// What an exit code of the client itself means (not the script's):
    /// `Some(text)` when the code says the transport failed.
    fn failure(&self, code: i32, stderr: &str) -> Option<String>;
    /// Ends the connection (removes the container): at the session's end.
    fn close(&self, env: &ChildEnv);
}

/// Variables a session never keeps: the shell's own and the connection's.
const NOT_KEPT: &[&str] = &[
    "_",
    "SHLVL",
    "PWD",
    "OLDPWD",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    SESSION_VAR,
];

/// The variable every command of a session carries on the machine (its
/// value the session's token): the session's end finds by it what left
/// the process groups (`setsid`, double forks), as the local backend's
/// `HERMES_PROCESS_TAG`.
const SESSION_VAR: &str = "HERMES_BACKEND_SESSION";

/// The longest a file operation or a setup script may take.
const EXEC_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of a client's stderr kept for an error.
const STDERR_CAP: usize = 16 * 1024;

/// What a session keeps between calls.
#[derive(Debug, Default, Clone)]
struct State {
    /// The machine's own environment (listed on first use).
    base: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
    /// `Some(value)`: set; `None`: unset.
    env: BTreeMap<String, Option<String>>,
}

/// A shell on another machine: runs scripts there, with or without the
/// session's state. The file tools use it (`Files::Remote`).
#[derive(Debug)]
pub struct Shell {
    pub(crate) transport: Box<dyn Transport>,
    pub(crate) profile: Profile,
    state: Mutex<State>,
    /// The session's folder on the machine (pid files).
    dir: String,
    /// The value of [`SESSION_VAR`] in its commands.
    tag: String,
    next: AtomicU64,
    closed: AtomicBool,
}

/// One finished script.
#[derive(Debug)]
pub struct Exec {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A random-enough token for names on the machine and output markers.
pub(crate) fn token() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos
        ^ N.fetch_add(1, Ordering::Relaxed).rotate_left(40)
        ^ u64::from(std::process::id()).rotate_left(20);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    format!("{:016x}", x ^ (x >> 31))
}

/// Whether `name` can be a variable's name in `sh`.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME=VALUE` entries each ended by a NUL.
fn env_entries(bytes: &[u8]) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for entry in bytes.split(|b| *b == 0) {
        let entry = String::from_utf8_lossy(entry);
        if let Some((name, value)) = entry.split_once('=') {
            if is_name(name) {
                env.insert(name.to_string(), value.to_string());
            }
        }
    }
    env
}

impl Shell {
    pub fn new(transport: Box<dyn Transport>, profile: &Profile) -> Self {
        let tag = token();
        Shell {
            transport,
            profile: profile.clone(),
            state: Mutex::new(State::default()),
            dir: format!("/tmp/.hermes-{tag}"),
            tag,
            next: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// The backend's name, for messages.
    pub fn name(&self) -> &'static str {
        self.transport.name()
    }

    pub(crate) fn env(&self) -> ChildEnv {
        ChildEnv::for_profile(&self.profile)
    }

    /// Runs `script` on the machine with `stdin` (none: `/dev/null`),
    /// within `timeout`; stdout kept up to `max_stdout` bytes (more is an
    /// error). Connects first when needed.
    pub fn exec(
        &self,
        script: &str,
        stdin: Option<&[u8]>,
        timeout: Duration,
        max_stdout: usize,
    ) -> Result<Exec, String> {
        let start = Instant::now();
        self.ready(timeout)?;
        let left = timeout.saturating_sub(start.elapsed());
        let exec = self.run_client(script, stdin, left, max_stdout)?;
        if let Some(why) = self.transport.failure(exec.code, &exec.stderr) {
            return Err(why);
        }
        Ok(exec)
    }

    /// One run of the client, no connection check.
    pub(crate) fn run_client(
        &self,
        script: &str,
        stdin: Option<&[u8]>,
        timeout: Duration,
        max_stdout: usize,
    ) -> Result<Exec, String> {
        let argv = self.transport.client(script);
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| format!("{} backend: no client command", self.name()))?;
        let mut cmd = self.env().command(program);
        cmd.args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| {
            format!(
                "{} backend: could not start `{program}`: {e}; install it or fix the backend's \
                 settings",
                self.name()
            )
        })?;
        let input = stdin.map(<[u8]>::to_vec);
        let mut pipe_in = child.stdin.take();
        let writer = std::thread::spawn(move || {
            if let (Some(pipe), Some(bytes)) = (pipe_in.as_mut(), input) {
                let _ = pipe.write_all(&bytes);
            }
            drop(pipe_in);
        });
        let mut out = child.stdout.take();
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(out) = out.as_mut() {
                let cap = u64::try_from(max_stdout).unwrap_or(u64::MAX);
                let _ = out.take(cap + 1).read_to_end(&mut bytes);
                // Drain the rest so the client never blocks on a full pipe.
                let _ = std::io::copy(out, &mut std::io::sink());
            }
            bytes
        });
        let mut err = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(err) = err.as_mut() {
                let _ = err.take(STDERR_CAP as u64).read_to_end(&mut bytes);
                let _ = std::io::copy(err, &mut std::io::sink());
            }
            String::from_utf8_lossy(&bytes).trim().to_string()
        });
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() >= deadline => break None,
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(_) => break None,
            }
        };
        let Some(status) = status else {
            let _ = child.kill();
            let _ = child.wait();
            let _ = writer.join();
            return Err(format!(
                "{} backend: no answer within {} s; the machine may be unreachable or busy",
                self.name(),
                timeout.as_secs().max(1)
            ));
        };
        let _ = writer.join();
        let stdout = reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        if stdout.len() > max_stdout {
            return Err(format!(
                "{} backend: the answer exceeded {max_stdout} bytes",
                self.name()
            ));
        }
        use std::os::unix::process::ExitStatusExt;
        let code = status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
        Ok(Exec {
            code,
            stdout,
            stderr,
        })
    }

    /// Connected, and the session's folder and the machine's environment
    /// known.
    pub(crate) fn ready(&self, timeout: Duration) -> Result<(), String> {
        if self.transport.ensure(&self.env(), timeout)? {
            // A new connection (a new container): the folder is made
            // again, and a directory that is gone is not kept.
            lock(&self.state).base = None;
        }
        if lock(&self.state).base.is_some() {
            return Ok(());
        }
        // Whether the session's directory is still there (`Y`), then the
        // machine's environment.
        let kept = lock(&self.state).cwd.clone().unwrap_or_else(|| "/".into());
        let script = format!(
            "mkdir -p {dir} && chmod 700 {dir} || exit 1\n[ -d {cwd} ] && printf Y || printf N\nprintf '\\000'; env -0",
            dir = shell_quote(&self.dir),
            cwd = shell_quote(&kept)
        );
        let exec = self.run_client(&script, None, timeout.min(EXEC_TIMEOUT), 1 << 20)?;
        if let Some(why) = self.transport.failure(exec.code, &exec.stderr) {
            return Err(why);
        }
        if exec.code != 0 {
            return Err(format!(
                "{} backend: the machine's shell could not start the session (exit {}): {}",
                self.name(),
                exec.code,
                exec.stderr
            ));
        }
        let (found, listed) = match exec.stdout.iter().position(|b| *b == 0) {
            Some(at) => (&exec.stdout[..at], &exec.stdout[at + 1..]),
            None => (&b"N"[..], &exec.stdout[..]),
        };
        let base = env_entries(listed);
        let mut state = lock(&self.state);
        if found != b"Y" {
            // Gone (a new container): the session starts where a new one does.
            state.cwd = None;
        }
        if state.cwd.is_none() {
            let configured = self
                .profile
                .config()
                .terminal
                .cwd
                .value
                .clone()
                .filter(|p| p.is_absolute())
                .map(|p| p.display().to_string());
            state.cwd = configured
                .or_else(|| self.transport.default_cwd())
                .or_else(|| base.get("HOME").cloned())
                .or_else(|| Some("/".to_string()));
        }
        state.base = Some(base);
        Ok(())
    }

    /// The session's working directory on the machine.
    pub fn cwd(&self) -> String {
        lock(&self.state).cwd.clone().unwrap_or_else(|| "/".into())
    }

    /// The machine's `$HOME` (`/` when unknown).
    pub fn home(&self) -> String {
        lock(&self.state)
            .base
            .as_ref()
            .and_then(|b| b.get("HOME").cloned())
            .unwrap_or_else(|| "/".into())
    }

    /// Connects and sets the session up when it is not yet (its working
    /// directory and home are known after this): the file tools call it
    /// before resolving a path.
    pub fn prepare(&self) -> Result<(), String> {
        self.ready(EXEC_TIMEOUT)
    }

    /// A new name for one command's pid file.
    pub(crate) fn tag(&self) -> String {
        format!("c{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    fn pid_file(&self, tag: &str) -> String {
        shell_quote(&format!("{}/{tag}.pid", self.dir))
    }

    /// The script of a command: the session's directory and variables,
    /// the pid file, the command, and for a foreground one the trailer
    /// (after `marker`) and the teardown of what it left running.
    pub(crate) fn script(
        &self,
        command: &str,
        workdir: Option<&str>,
        tag: &str,
        marker: Option<&str>,
    ) -> String {
        let state = lock(&self.state).clone();
        let mut s = String::new();
        let cwd = state.cwd.clone().unwrap_or_else(|| "/".into());
        let dir = match workdir.map(str::trim).filter(|w| !w.is_empty()) {
            Some(w) if w.starts_with('/') => w.to_string(),
            Some(w) => format!("{}/{w}", cwd.trim_end_matches('/')),
            None => cwd,
        };
        s.push_str(&format!(
            "cd {d} 2>/dev/null || {{ echo \"working directory \"{d}\" does not exist or is not a directory\" >&2; exit 126; }}\n",
            d = shell_quote(&dir)
        ));
        for (name, value) in &state.env {
            match value {
                Some(v) => s.push_str(&format!("export {name}={}\n", shell_quote(v))),
                None => s.push_str(&format!("unset {name}\n")),
            }
        }
        s.push_str(&format!("export {SESSION_VAR}={}\n", self.tag));
        s.push_str(&format!("echo $$ > {}\n", self.pid_file(tag)));
        s.push_str(&format!("eval {}\n", shell_quote(command)));
        if let Some(marker) = marker {
            s.push_str(&format!(
                "__hermes_status=$?\n: > {pid}\nprintf '\\n%s\\n' {m}; pwd -P; printf '\\000'; env -0\ntrap '' TERM; kill -TERM -$$ 2>/dev/null\nexit $__hermes_status\n",
                pid = self.pid_file(tag),
                m = shell_quote(marker)
            ));
        } else {
            s.push_str(&format!(
                "__hermes_status=$?\n: > {}\nexit $__hermes_status\n",
                self.pid_file(tag)
            ));
        }
        s
    }

    /// Keeps what a foreground command's trailer reported.
    pub(crate) fn keep_state(&self, reported: &str) -> Option<String> {
        let (cwd, rest) = reported.split_once('\0')?;
        let env = env_entries(rest.as_bytes());
        if env.is_empty() {
            return Some(
                "the session's directory and variables were not kept: they could not be read \
                 back"
                    .into(),
            );
        }
        let mut state = lock(&self.state);
        let cwd = cwd.trim_end_matches('\n');
        if !cwd.is_empty() {
            state.cwd = Some(cwd.to_string());
        }
        let base = state.base.clone().unwrap_or_default();
        let mut kept = BTreeMap::new();
        for (name, value) in &env {
            if !NOT_KEPT.contains(&name.as_str()) && base.get(name) != Some(value) {
                kept.insert(name.clone(), Some(value.clone()));
            }
        }
        for name in base.keys() {
            if !env.contains_key(name) && !NOT_KEPT.contains(&name.as_str()) {
                kept.insert(name.clone(), None);
            }
        }
        state.env = kept;
        None
    }

    /// Signals the process group a command's pid file names: TERM, up to
    /// `grace` for it to end, then KILL.
    pub(crate) fn kill_tag(&self, tag: &str, grace: Duration) {
        let tenths = (grace.as_millis() / 100).max(1);
        let script = format!(
            "p=$(cat {f} 2>/dev/null); [ -n \"$p\" ] || exit 0\nkill -TERM -$p 2>/dev/null\ni=0; while kill -0 -$p 2>/dev/null && [ $i -lt {tenths} ]; do sleep 0.1; i=$((i+1)); done\nkill -KILL -$p 2>/dev/null; : > {f}\n",
            f = self.pid_file(tag)
        );
        let _ = self.exec(&script, None, grace + Duration::from_secs(10), 4096);
    }

    /// Signals every group still listed, removes the session's folder,
    /// closes the transport. Once.
    pub(crate) fn close(&self, grace: Duration) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if lock(&self.state).base.is_some() {
            let tenths = (grace.as_millis() / 100).max(1);
            let script = format!(
                "cd {d} 2>/dev/null || exit 0\nps=''\nfor f in *.pid; do p=$(cat \"$f\" 2>/dev/null); [ -n \"$p\" ] && kill -TERM -$p 2>/dev/null && ps=\"$ps $p\"; done\ni=0; for p in $ps; do while kill -0 -$p 2>/dev/null && [ $i -lt {tenths} ]; do sleep 0.1; i=$((i+1)); done; kill -KILL -$p 2>/dev/null; done\ncd / && rm -rf {d}\nfor e in /proc/[0-9]*/environ; do if tr '\\000' '\\n' < \"$e\" | grep -qx {var}; then p=${{e%/environ}}; kill -KILL ${{p#/proc/}}; fi; done 2>/dev/null\nexit 0\n",
                d = shell_quote(&self.dir),
                var = shell_quote(&format!("{SESSION_VAR}={}", self.tag))
            );
            // A dead connection is not re-opened only to find nothing.
            let _ = self.run_client(&script, None, grace + Duration::from_secs(10), 4096);
        }
        self.transport.close(&self.env());
    }
}

/// The docker command line: `HERMES_DOCKER_BINARY` (the agent's
/// environment, else the profile's `.env`), else `docker`, else `podman`
/// on `PATH`, as the reference finds it.
pub fn docker_binary(profile: &Profile) -> Option<String> {
    let explicit = std::env::var("HERMES_DOCKER_BINARY")
        .ok()
        .or_else(|| profile.secret("HERMES_DOCKER_BINARY"))
        .filter(|p| !p.trim().is_empty());
    if let Some(path) = explicit {
        return Some(path);
    }
    let path = ChildEnv::for_profile(profile)
        .get("PATH")
        .map(str::to_string)
        .unwrap_or_default();
    ["docker", "podman"].into_iter().find_map(|name| {
        path.split(':')
            .map(|dir| Path::new(dir).join(name))
            .find(|p| p.is_file())
            .map(|p| p.display().to_string())
    })
}
