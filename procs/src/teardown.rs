//! Parent-first teardown of a command and everything it started.
//!
//! 1. Snapshot the family: the descendants of the recorded parent (through
//!    parent ids) and every member of its process group (which still finds
//!    children already re-parented after an intermediate shell exited).
//! 2. SIGTERM only the parent, and give it `grace` to exit: a shell that
//!    traps the signal gets the chance to stop and reap its own children.
//! 3. SIGTERM every survivor of the family (the snapshot plus anything the
//!    parent started meanwhile) and give them `grace` too.
//! 4. SIGKILL whatever ignored both (the parent included), then wait
//!    briefly until nothing of the family runs.
//!
//! With a command cgroup ([`super::contain`]) every member of the cgroup
//! belongs to the family too, whatever its session, group or parent: that
//! is what finds a `setsid` child or a double fork. Without one, processes
//! the agent adopted as child subreaper are matched to the command by the
//! tag in their environment ([`TAG_VAR`]).
//!
//! Each process is named by (pid, start time), so an id the kernel recycled
//! onto a stranger is never signalled. Our own process and pid 1 never are.
//! Adopted processes of the family that exited are reaped.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde::Serialize;

use super::contain::CommandCgroup;
use super::scan::{self, reap_adopted, signal, ProcInfo};

/// The environment variable that names a command's family: every command
/// gets `HERMES_PROCESS_TAG=<tag>`, and a process the agent adopted (its
/// parent exited) that still carries the tag is torn down with the command.
pub const TAG_VAR: &str = "HERMES_PROCESS_TAG";

/// How often liveness is probed while waiting.
const POLL: Duration = Duration::from_millis(10);
/// How long to wait for SIGKILLed processes to disappear.
const KILL_SETTLE: Duration = Duration::from_secs(2);

/// The process a teardown starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The recorded parent (the shell a command runs in).
    pub pid: i32,
    /// Its start time, when known.
    pub start: Option<u64>,
    /// Its process group (the parent leads its own group).
    pub pgid: i32,
}

/// What a teardown did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TeardownReport {
    /// SIGTERM was sent to the parent (it was still running).
    pub parent_signalled: bool,
    /// The parent exited within the grace period after its SIGTERM.
    pub parent_exited_in_grace: bool,
    /// Descendants sent SIGTERM after the parent's grace.
    pub terminated: Vec<i32>,
    /// Processes (the parent included) sent SIGKILL after ignoring SIGTERM.
    pub killed: Vec<i32>,
    /// Processes still running at the end (empty unless something is stuck
    /// in the kernel).
    pub survivors: Vec<i32>,
}

/// Tears down `target` and its family; see the module docs.
pub fn teardown(target: Target, grace: Duration) -> TeardownReport {
    teardown_in(target, None, None, grace)
}

/// [`teardown`], with the command's cgroup (every member is family) and
/// its tag (adopted processes carrying it are family).
pub fn teardown_in(
    target: Target,
    cgroup: Option<&CommandCgroup>,
    tag: Option<&str>,
    grace: Duration,
) -> TeardownReport {
    let mut report = TeardownReport::default();
    let parent = (target.pid, target.start);
    // The common case, fast: the command exited and its cgroup is empty,
    // so nothing of it is left (no /proc walk).
    if let Some(cg) = cgroup {
        if !alive(parent) && cg.members().is_empty() {
            return report;
        }
    }
    let mut family = Family {
        cgroup,
        tag,
        ..Family::default()
    };
    family.extend(&scan::all(), target);

    if alive(parent) {
        signal(target.pid, Signal::SIGTERM);
        report.parent_signalled = true;
        report.parent_exited_in_grace = wait_until(grace, || !alive(parent));
    }

    family.extend(&scan::all(), target);
    let survivors = family.alive();
    for &(pid, _) in &survivors {
        signal(pid, Signal::SIGTERM);
        report.terminated.push(pid);
    }
    if !survivors.is_empty() || alive(parent) {
        wait_until(grace, || !alive(parent) && family.alive().is_empty());
    }

    family.extend(&scan::all(), target);
    let mut stubborn = family.alive();
    if alive(parent) {
        stubborn.insert(0, parent);
    }
    for &(pid, _) in &stubborn {
        signal(pid, Signal::SIGKILL);
        report.killed.push(pid);
    }
    if !stubborn.is_empty() {
        wait_until(KILL_SETTLE, || {
            stubborn.iter().all(|&p| !alive(p)) && family.alive().is_empty()
        });
    }
    report.survivors = family.alive().into_iter().map(|(pid, _)| pid).collect();
    if alive(parent) {
        report.survivors.insert(0, target.pid);
    }
    let members: Vec<i32> = family.members.keys().copied().collect();
    reap_adopted(&members);
    report
}

/// The family of a target: descendants and group members, by (pid, start).
#[derive(Debug, Default)]
struct Family<'a> {
    members: BTreeMap<i32, u64>,
    cgroup: Option<&'a CommandCgroup>,
    tag: Option<&'a str>,
}

impl Family<'_> {
    /// Adds, from a fresh scan, the target's descendants, the members of
    /// its process group and of its cgroup, and adopted processes carrying
    /// its tag (never the target itself, us, or pid 1).
    fn extend(&mut self, procs: &[ProcInfo], target: Target) {
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        let own_group = nix::unistd::getpgrp().as_raw();
        let mut children: BTreeMap<i32, Vec<&ProcInfo>> = BTreeMap::new();
        for p in procs {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut found: Vec<&ProcInfo> = Vec::new();
        let mut stack = vec![target.pid];
        while let Some(pid) = stack.pop() {
            for child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
                if !found.iter().any(|f| f.pid == child.pid) {
                    found.push(child);
                    stack.push(child.pid);
                }
            }
        }
        if target.pgid > 1 && target.pgid != own_group {
            found.extend(procs.iter().filter(|p| p.pgid == target.pgid));
        }
        let in_cgroup: Vec<ProcInfo> = self
            .cgroup
            .map(|cg| cg.members().into_iter().filter_map(scan::read).collect())
            .unwrap_or_default();
        found.extend(in_cgroup.iter());
        if let Some(tag) = self.tag {
            let needle = format!("{TAG_VAR}={tag}");
            found.extend(procs.iter().filter(|p| {
                p.ppid == me
                    && p.pid != target.pid
                    && std::fs::read(format!("/proc/{}/environ", p.pid))
                        .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
            }));
        }
        for p in found {
            if p.pid != target.pid && p.pid != me && p.pid > 1 && p.is_live() {
                self.members.entry(p.pid).or_insert(p.start);
            }
        }
    }

    /// The members still running.
    fn alive(&self) -> Vec<(i32, Option<u64>)> {
        self.members
            .iter()
            .map(|(&pid, &start)| (pid, Some(start)))
            .filter(|&p| alive(p))
            .collect()
    }
}

fn alive((pid, start): (i32, Option<u64>)) -> bool {
    scan::is_alive(pid, start)
}

/// Polls `done` until it holds or `limit` passes; whether it held.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}
