//! What keeps a command inside its box: the agent's own hardening (its
//! environment unreadable to the commands it runs, orphans adopted), and a
//! bound on the processes one command may start.
//!
//! **Hardening** ([`harden_process`], [`harden_thread`], both run by
//! `spawn` before it starts anything):
//!
//! - the agent process is made non-dumpable (`PR_SET_DUMPABLE 0`): its
//!   `/proc/PID/{environ,mem,fd,…}` and `ptrace` are closed to every
//!   process without `CAP_SYS_PTRACE`, the agent's own user included;
//! - `CAP_SYS_PTRACE` is dropped from the bounding set of each thread that
//!   starts commands, so that a command run by a root agent does not get it
//!   back at `exec` (root children otherwise hold every capability); this
//!   needs `CAP_SETPCAP`, which a root agent normally has;
//! - without command cgroups, the agent becomes a child subreaper
//!   (`PR_SET_CHILD_SUBREAPER`): a descendant whose parent exits (`setsid
//!   cmd &`, a double fork) is re-parented to the agent rather than to
//!   init, and teardown finds it by the tag in its environment.
//!
//! **A user namespace** ([`user_namespace_for`], opt-in for a root agent):
//! its commands hold no capability outside it, so every `/proc` file of the
//! agent behind a ptrace check is closed to them.
//!
//! **Containment** ([`containment`]): each command gets a `pids` cgroup of
//! its own when the agent can create one (cgroup v2 with the `pids`
//! controller delegated to the agent's cgroup, or a writable cgroup v1
//! `pids` hierarchy, as for root on most machines). The shell moves itself
//! into it before the first line of the command runs (a sandboxed shell's
//! helper does it for it; for a resident shell's subshell the agent
//! does), so every process the command starts is a member, whatever its session or process group, and
//! `pids.max` bounds their number (processes and threads). Without a cgroup
//! a non-root agent bounds the command with `RLIMIT_NPROC` (`ulimit -u`),
//! which the kernel counts per user: every process and thread of the
//! agent's user counts toward it. A root agent without a cgroup has no
//! bound (the kernel does not apply `RLIMIT_NPROC` to root).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Once};
use std::time::{Duration, Instant};

use hermes_runtime::Profile;

/// The processes (and threads) one command may have at once, unless the
/// profile sets [`MAX_PROCESSES_SETTING`]: room for a parallel build.
pub const DEFAULT_MAX_PROCESSES: u64 = 4096;
/// The profile setting (in its `.env`) for the bound.
pub const MAX_PROCESSES_SETTING: &str = "TERMINAL_MAX_PROCESSES";
/// The smallest bound accepted: the shell, a pipeline, a subshell.
pub const MIN_MAX_PROCESSES: u64 = 8;

/// The process bound for a profile: [`MAX_PROCESSES_SETTING`] from its
/// `.env` (at least [`MIN_MAX_PROCESSES`]), else [`DEFAULT_MAX_PROCESSES`].
pub fn max_processes_for(profile: &Profile) -> u64 {
    profile
        .secret(MAX_PROCESSES_SETTING)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_MAX_PROCESSES, |n| n.max(MIN_MAX_PROCESSES))
}

/// How commands are contained on this machine, decided once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// A cgroup per command under `parent` (`v2`: the unified hierarchy).
    Cgroup { parent: PathBuf, v2: bool },
    /// No cgroup; `RLIMIT_NPROC` per user (a non-root agent).
    Rlimit,
    /// No cgroup and no bound (a root agent without a writable cgroup).
    None,
}

impl Containment {
    /// A short name for reports: `cgroup-v2`, `cgroup-v1`, `rlimit`, `none`.
    pub fn name(&self) -> &'static str {
        match self {
            Containment::Cgroup { v2: true, .. } => "cgroup-v2",
            Containment::Cgroup { v2: false, .. } => "cgroup-v1",
            Containment::Rlimit => "rlimit",
            Containment::None => "none",
        }
    }
}

/// The profile setting (in its `.env`) that runs a root agent's commands
/// in a user namespace of their own ([`user_namespace_for`]).
pub const USER_NAMESPACE_SETTING: &str = "TERMINAL_USER_NAMESPACE";

/// Whether `profile`'s commands run in a user namespace of their own:
/// [`USER_NAMESPACE_SETTING`] is `1`, `true`, `yes` or `on`, and the agent
/// is root (a user agent's commands are already kept out by
/// non-dumpability; a user cannot map root).
///
/// The namespace maps root to root and nothing else: the command is still
/// root for the files root owns, but it holds no capability outside its
/// namespace. The kernel then refuses it every `/proc` file of the agent
/// that takes a ptrace check (`environ`, `maps`, `mem`, `fd`), whatever
/// the agent's environment block holds, and refuses it what root's
/// capabilities give: overriding the permissions of files other users
/// own (they show as `nobody`), raw sockets and ports below 1024,
/// mounting, loading modules, ptrace of processes outside. It runs through
/// util-linux `unshare --user --map-root-user` (one more `exec` per
/// command); where that is missing or the kernel refuses it, the command
/// fails with the reason, it never runs outside the namespace.
pub fn user_namespace_for(profile: &Profile) -> bool {
    nix::unistd::geteuid().is_root()
        && profile.secret(USER_NAMESPACE_SETTING).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
}

/// The `unshare` program and its arguments for a command in a user
/// namespace of its own; the shell and its `-c SCRIPT` follow.
pub fn unshare_prefix() -> std::io::Result<(&'static str, [&'static str; 3])> {
    static PROGRAM: LazyLock<Option<&'static str>> = LazyLock::new(|| {
        ["/usr/bin/unshare", "/bin/unshare"]
            .into_iter()
            .find(|p| Path::new(p).exists())
    });
    match *PROGRAM {
        Some(program) => Ok((program, ["--user", "--map-root-user", "--"])),
        None => Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "{USER_NAMESPACE_SETTING} is set but util-linux `unshare` is not installed; \
                 the command was not run"
            ),
        )),
    }
}

/// How this machine contains commands (detected on first use).
pub fn containment() -> &'static Containment {
    static DETECTED: LazyLock<Containment> = LazyLock::new(detect);
    &DETECTED
}

/// Process-wide hardening, once: non-dumpable; without command cgroups
/// also a child subreaper (with them, cgroup membership already finds
/// every descendant, and init reaps the orphans). Failures are reported
/// once as warnings.
pub fn harden_process() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Err(e) = nix::sys::prctl::set_dumpable(false) {
            tracing::warn!(target: "hermes::procs", "cannot make the agent non-dumpable: {e}");
        }
        if !matches!(containment(), Containment::Cgroup { .. }) {
            if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
                tracing::warn!(target: "hermes::procs", "cannot become a child subreaper: {e}");
            }
        }
        if *containment() == Containment::None {
            tracing::warn!(
                target: "hermes::procs",
                "no cgroup for commands and running as root: the processes a command may \
                 start are not bounded"
            );
        }
    });
}

/// Per-thread hardening (capabilities are per thread): drops
/// `CAP_SYS_PTRACE` from this thread's bounding set, once per thread.
pub fn harden_thread() {
    thread_local! {
        static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if DONE.get() {
        return;
    }
    DONE.set(true);
    use caps::{CapSet, Capability};
    if caps::has_cap(None, CapSet::Bounding, Capability::CAP_SYS_PTRACE).unwrap_or(false) {
        if let Err(e) = caps::drop(None, CapSet::Bounding, Capability::CAP_SYS_PTRACE) {
            static WARNED: Once = Once::new();
            WARNED.call_once(|| {
                tracing::warn!(
                    target: "hermes::procs",
                    "cannot drop CAP_SYS_PTRACE for commands ({e}): commands of a root agent \
                     may read its memory"
                );
            });
        }
    }
}

/// The cgroup of one command; when dropped, what is left in it is killed
/// and the emptied cgroup goes back to a small pool for the next command
/// (or is removed when the pool is full).
#[derive(Debug)]
pub struct CommandCgroup {
    dir: PathBuf,
    /// Its `pids.max`.
    limit: u64,
    /// `pids.events` `max` when this command got it (a pooled cgroup
    /// keeps the count of its earlier commands).
    hits_before: u64,
    /// Whether it may go back to the pool once empty.
    reusable: bool,
}

/// Empty command cgroups kept for the next commands: creating and
/// removing one per command costs a directory's worth of kernel
/// bookkeeping each time. Every one is empty (its command and everything
/// it started are gone); [`release_pool`] removes them at shutdown, and a
/// crashed agent's are removed by the next one ([`clean_stale`]).
static POOL: std::sync::Mutex<Vec<(PathBuf, u64)>> = std::sync::Mutex::new(Vec::new());
/// Empty cgroups kept at most.
const POOL_SIZE: usize = 16;

fn pool() -> std::sync::MutexGuard<'static, Vec<(PathBuf, u64)>> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the pooled cgroups (the agent shutting down).
pub fn release_pool() {
    for (dir, _) in pool().drain(..) {
        let _ = std::fs::remove_dir(dir);
    }
}

impl CommandCgroup {
    /// A cgroup for one command with `pids.max` = `limit`: an empty one
    /// from the pool, else a new one.
    pub fn create(parent: &Path, limit: u64) -> std::io::Result<Self> {
        let pooled = {
            let mut pool = pool();
            let at = pool.iter().rposition(|(d, _)| d.parent() == Some(parent));
            at.map(|i| pool.swap_remove(i))
        };
        if let Some((dir, old_limit)) = pooled {
            let mut cg = CommandCgroup {
                dir,
                limit: old_limit,
                hits_before: 0,
                reusable: false,
            };
            cg.hits_before = cg.total_limit_hits();
            let limited = old_limit == limit
                || std::fs::write(cg.dir.join("pids.max"), limit.to_string()).is_ok();
            // Still empty (a process there would count toward the bound,
            // and be torn down with the command).
            if limited && cg.is_empty() {
                cg.limit = limit;
                cg.reusable = true;
                return Ok(cg);
            }
            // Not usable: removed when dropped here.
        }
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = parent.join(format!(
            "hermes-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let cg = CommandCgroup {
            dir,
            limit,
            hits_before: 0,
            reusable: true,
        };
        std::fs::write(cg.dir.join("pids.max"), limit.to_string())?;
        Ok(cg)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Shell text that moves the shell into this cgroup (or ends it with
    /// 125 if it cannot), before the command's first line.
    ///
    /// The shell writes `0`, which the kernel reads as the writer itself
    /// (`echo` is a builtin): never `$$`, which in a subshell (a command
    /// forked from a resident shell) names the parent shell.
    ///
    /// Under cgroup v1 it writes to `tasks`: it moves its one thread, which
    /// the kernel does without the global lock a move through
    /// `cgroup.procs` takes (that one waits for an RCU grace period:
    /// milliseconds, tens of them on a loaded machine, more than the
    /// shell's own start). The shell has one thread, so the process is
    /// moved, and everything it forks after is born inside. Under v2 a
    /// thread cannot leave its process's cgroup: `cgroup.procs` it is.
    pub fn shell_prefix(&self) -> String {
        format!(
            "echo 0 >{} || exit 125; ",
            crate::base::shell_quote(&self.join_file().to_string_lossy())
        )
    }

    /// The file a process joins this cgroup through: `tasks` under v1
    /// (one thread, no global lock: see [`Self::shell_prefix`]),
    /// `cgroup.procs` under v2.
    pub fn join_file(&self) -> PathBuf {
        let v2 = matches!(containment(), Containment::Cgroup { v2: true, .. });
        self.dir.join(if v2 { "cgroup.procs" } else { "tasks" })
    }

    /// Moves process `pid` (one thread: a shell) into this cgroup; the
    /// agent does it for a resident shell's subshell, which the sandbox
    /// keeps from writing cgroup files.
    pub fn join(&self, pid: i32) -> std::io::Result<()> {
        std::fs::write(self.join_file(), pid.to_string())
    }

    /// The processes in the cgroup now.
    pub fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Whether nothing counts toward its bound: no process, and no zombie
    /// waiting to be reaped (`pids.current` counts those too, where
    /// `cgroup.procs` no longer lists them).
    fn is_empty(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.current")).is_ok_and(|t| t.trim() == "0")
    }

    /// How many times a fork of this command failed on the bound.
    pub fn limit_hits(&self) -> u64 {
        self.total_limit_hits().saturating_sub(self.hits_before)
    }

    /// How many times a fork in this cgroup failed on its bound, for every
    /// command it held (`pids.events`: `max N`).
    fn total_limit_hits(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("max ").map(|n| n.trim().parse().ok()))
                    .flatten()
            })
            .unwrap_or(0)
    }
}

impl Drop for CommandCgroup {
    /// Whatever is still inside is killed (a finished command forgotten by
    /// the table takes what it left with it), zombies that are ours are
    /// reaped, and the cgroup is removed, or kept in the pool when it was
    /// empty and there is room.
    fn drop(&mut self) {
        if self.reusable && self.is_empty() {
            let mut pool = pool();
            if pool.len() < POOL_SIZE {
                pool.push((std::mem::take(&mut self.dir), self.limit));
                return;
            }
        }
        // Killed processes leave the cgroup within milliseconds; an empty
        // cgroup that still cannot be removed is given a few tries only.
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut empty_tries = 0;
        loop {
            let members = self.members();
            for &pid in &members {
                super::scan::signal(pid, nix::sys::signal::Signal::SIGKILL);
            }
            super::scan::reap_adopted(&members);
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => return,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
                Err(_) => {}
            }
            if members.is_empty() {
                empty_tries += 1;
            }
            if empty_tries >= 5 || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Shell text that bounds the processes of the user (`RLIMIT_NPROC`), for
/// [`Containment::Rlimit`]. Errors (a hard limit already lower) are
/// ignored: the lower limit holds.
pub fn rlimit_prefix(limit: u64) -> String {
    format!("ulimit -u {limit} 2>/dev/null || ulimit -p {limit} 2>/dev/null; ")
}

/// The environment variable that forces a containment for tests:
/// `none` (no cgroup; the rlimit or no bound, as without one). Read once.
pub const FORCE_VAR: &str = "HERMES_TEST_CONTAINMENT";

fn detect() -> Containment {
    let no_cgroup = std::env::var(FORCE_VAR).is_ok_and(|v| v == "none");
    if no_cgroup {
        return if nix::unistd::geteuid().is_root() {
            Containment::None
        } else {
            Containment::Rlimit
        };
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    if let Some(parent) = v2_parent(&mounts, &own) {
        clean_stale(&parent);
        return Containment::Cgroup { parent, v2: true };
    }
    if let Some(parent) = v1_parent(&mounts, &own) {
        clean_stale(&parent);
        return Containment::Cgroup { parent, v2: false };
    }
    if nix::unistd::geteuid().is_root() {
        Containment::None
    } else {
        Containment::Rlimit
    }
}

/// Mount points of `fstype` with their super options, from mountinfo.
fn mounts_of<'a>(mountinfo: &'a str, fstype: &'a str) -> impl Iterator<Item = (PathBuf, &'a str)> {
    mountinfo.lines().filter_map(move |line| {
        let (head, tail) = line.split_once(" - ")?;
        let mut tail = tail.split_whitespace();
        if tail.next()? != fstype {
            return None;
        }
        let options = tail.nth(1).unwrap_or("");
        let point = head.split_whitespace().nth(4)?;
        Some((PathBuf::from(unescape_octal(point)), options))
    })
}

/// Mountinfo escapes space, tab, newline and backslash as `\NNN`.
fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            if let Ok(n) = u8::from_str_radix(text.get(i + 1..i + 4).unwrap_or(""), 8) {
                out.push(n);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The agent's own cgroup in the hierarchy whose controllers match `pred`.
fn own_path(own: &str, pred: impl Fn(&str, &str) -> bool) -> Option<String> {
    own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        pred(id, controllers).then(|| path.to_string())
    })
}

fn v2_parent(mounts: &str, own: &str) -> Option<PathBuf> {
    let path = own_path(own, |id, c| id == "0" && c.is_empty())?;
    let (mount, _) = mounts_of(mounts, "cgroup2").next()?;
    let dir = mount.join(path.trim_start_matches('/'));
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    if !controllers.split_whitespace().any(|c| c == "pids") {
        return None;
    }
    // Children of our cgroup get the controller only if we may delegate it
    // (always for the root cgroup; elsewhere only when our cgroup holds no
    // process, which the kernel checks here).
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    if !enabled.split_whitespace().any(|c| c == "pids") {
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.subtree_control"))
            .and_then(|mut f| f.write_all(b"+pids"))
            .ok()?;
    }
    probe(&dir).then_some(dir)
}

fn v1_parent(mounts: &str, own: &str) -> Option<PathBuf> {
    let path = own_path(own, |_, c| c.split(',').any(|c| c == "pids"))?;
    let (mount, _) =
        mounts_of(mounts, "cgroup").find(|(_, options)| options.split(',').any(|o| o == "pids"))?;
    let dir = mount.join(path.trim_start_matches('/'));
    probe(&dir).then_some(dir)
}

/// Whether a command cgroup can be created under `dir`.
fn probe(dir: &Path) -> bool {
    CommandCgroup::create(dir, DEFAULT_MAX_PROCESSES).is_ok()
}

/// Removes the empty cgroups of agents that are gone (a crash leaves them).
fn clean_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if super::scan::left_by_gone_process(&entry.file_name(), "hermes-") {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mountinfo_and_own_cgroups() {
        let mounts = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                      39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                      40 31 0:37 / /sys/fs/cgroup/my\\040dir rw - cgroup2 cgroup2 rw\n";
        let v1: Vec<_> = mounts_of(mounts, "cgroup").collect();
        assert_eq!(v1, vec![(PathBuf::from("/sys/fs/cgroup/pids"), "rw,pids")]);
        let v2: Vec<_> = mounts_of(mounts, "cgroup2").map(|m| m.0).collect();
        assert_eq!(v2, vec![PathBuf::from("/sys/fs/cgroup/my dir")]);
        let own = "8:pids:/a/b\n4:memory:/m\n0::/user.slice\n";
        assert_eq!(
            own_path(own, |_, c| c.split(',').any(|c| c == "pids")).as_deref(),
            Some("/a/b")
        );
        assert_eq!(
            own_path(own, |id, c| id == "0" && c.is_empty()).as_deref(),
            Some("/user.slice")
        );
    }
}
