//! What `/proc` says about the system's processes: id, parent, process
//! group, start time and state. Teardown uses it to find descendants and to
//! tell a live process from a zombie or a recycled id.

use std::fs;

/// One process, from `/proc/PID/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    /// Start time in clock ticks since boot: with `pid`, it names one
    /// process even after its id is reused.
    pub start: u64,
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub state: char,
}

impl ProcInfo {
    /// Running, sleeping or stopped: not a zombie, not dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses the text of `/proc/PID/stat`. The command name sits in
/// parentheses and may itself hold spaces and parentheses, so fields are
/// counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcInfo> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // Fields after the name start at field 3 (state); start time is field 22.
    Some(ProcInfo {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgid: rest.get(2)?.parse().ok()?,
        start: rest.get(19)?.parse().ok()?,
    })
}

/// Whether `name` is `<prefix><pid>-…` (how an agent names what it
/// leaves on disk) for a process that no longer exists, never this one:
/// a leftover of an agent that ended without cleaning up.
pub fn left_by_gone_process(name: &std::ffi::OsStr, prefix: &str) -> bool {
    let Some(pid) = name
        .to_str()
        .and_then(|n| n.strip_prefix(prefix))
        .and_then(|rest| rest.split('-').next())
        .and_then(|p| p.parse::<i32>().ok())
    else {
        return false;
    };
    pid > 0 && u32::try_from(pid).ok() != Some(std::process::id()) && read(pid).is_none()
}

/// One process, if it exists.
pub fn read(pid: i32) -> Option<ProcInfo> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Every process visible in `/proc`.
pub fn all() -> Vec<ProcInfo> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read)
        .collect()
}

/// Whether the process `pid` that started at `start` still runs (a zombie
/// or a recycled id does not count). Without a start time, whether any
/// live process has the id.
pub fn is_alive(pid: i32, start: Option<u64>) -> bool {
    match read(pid) {
        Some(info) => info.is_live() && start.is_none_or(|s| s == info.start),
        None => false,
    }
}

/// Reaps those of `pids` that are zombies adopted by this process (as
/// child subreaper), never anything else: the shells `spawn` starts are
/// reaped by their own waiter threads.
pub(crate) fn reap_adopted(pids: &[i32]) {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    for &pid in pids {
        if read(pid).is_some_and(|p| p.ppid == me && !p.is_live()) {
            let _ = nix::sys::wait::waitpid(
                nix::unistd::Pid::from_raw(pid),
                Some(nix::sys::wait::WaitPidFlag::WNOHANG),
            );
        }
    }
}

/// Sends `sig` to `pid`, never to pid 1 or below or to this process.
pub(crate) fn signal(pid: i32, sig: nix::sys::signal::Signal) {
    if pid > 1 && u32::try_from(pid).ok() != Some(std::process::id()) {
        // ESRCH (already gone) and EPERM (not ours) are both fine to ignore.
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_name_with_spaces_and_parentheses() {
        let text = "4242 (a (weird) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3";
        let info = parse_stat(text).unwrap_or_else(|| panic!("unparsed"));
        assert_eq!(
            info,
            ProcInfo {
                pid: 4242,
                ppid: 17,
                pgid: 4242,
                start: 987654,
                state: 'S'
            }
        );
        assert!(info.is_live());
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn sees_its_own_process() {
        let me = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
        let info = read(me).unwrap_or_else(|| panic!("/proc/self unreadable"));
        assert!(is_alive(me, Some(info.start)));
        assert!(
            !is_alive(me, Some(info.start + 1)),
            "another start time is another process"
        );
        assert!(all().iter().any(|p| p.pid == me));
    }
}
