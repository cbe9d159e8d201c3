//! Many tool hosts behind Debian's HAProxy, as `deploy/mcp-hosts` starts
//! them from `deploy/haproxy.cfg` (all on 127.0.0.1): a host killed under
//! load loses only its own sessions (their clients get 404, then a new
//! session works), the other host's clients see no error, and SIGTERM
//! drains a host while new sessions go to the other one.
//!
//! Needs `haproxy` on PATH (`.ci/run` installs Debian's package).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_support::{call_tool, open_session, start_waiting_call, tool_text, wait_until, BIN};
use serde_json::json;

/// A `deploy/mcp-hosts N` run: the proxy and its hosts.
struct Topology {
    script: Child,
    proxy: SocketAddr,
    proxy_pid: u32,
    /// (address, pid) per host.
    hosts: Vec<(SocketAddr, u32)>,
}

impl Topology {
    fn start(n: usize, dir: &Path, serve_args: &[&str]) -> Topology {
        let haproxy = Command::new("haproxy").arg("-v").output();
        assert!(
            haproxy.is_ok_and(|o| o.status.success()),
            "this test needs HAProxy: apt-get install haproxy (.ci/run does)"
        );
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/mcp-hosts");
        let run = dir.join("run");
        let mut child = Command::new(script)
            .arg(n.to_string())
            .arg(&run)
            .args(serve_args)
            .env("HERMES_TOOLS", BIN)
            .env_remove("HERMES_MCP_TOKEN")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let file = run.join("topology");
        let started = wait_until(Duration::from_secs(60), || {
            file.exists() || child.try_wait().unwrap().is_some()
        });
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            started && !text.is_empty(),
            "mcp-hosts did not start: {:?}",
            {
                let _ = child.kill();
                child
                    .wait_with_output()
                    .map(|o| String::from_utf8_lossy(&o.stderr).to_string())
            }
        );
        let mut proxy = None;
        let mut hosts = Vec::new();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["proxy", addr, pid] => proxy = Some((addr.parse().unwrap(), pid.parse().unwrap())),
                ["host", _, addr, pid] => hosts.push((addr.parse().unwrap(), pid.parse().unwrap())),
                _ => panic!("unexpected topology line {line:?}"),
            }
        }
        let (proxy, proxy_pid) = proxy.unwrap();
        Topology {
            script: child,
            proxy,
            proxy_pid,
            hosts,
        }
    }

    /// The host holding `session` (asked of each host directly: the others
    /// answer 404).
    fn owner(&self, session: &str) -> Option<usize> {
        let owners: Vec<usize> = (0..self.hosts.len())
            .filter(|&i| {
                call_tool(
                    self.hosts[i].0,
                    Some(session),
                    "read_file",
                    json!({"path": "probe"}),
                )
                .status
                    == 200
            })
            .collect();
        assert!(owners.len() <= 1, "{session} on several hosts: {owners:?}");
        owners.first().copied()
    }
}

fn signal(pid: u32, signal: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
        signal,
    );
}

impl Drop for Topology {
    fn drop(&mut self) {
        // The script stops its hosts and the proxy; then, by id, whatever
        // of them is left.
        signal(self.script.id(), nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && self.script.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.script.kill();
        let _ = self.script.wait();
        for pid in self.hosts.iter().map(|h| h.1).chain([self.proxy_pid]) {
            if !mcp_support::process_gone(pid) {
                signal(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
}

/// What one client saw: each call's HTTP status and whether the tool said
/// error, in order, and when its session was replaced.
#[derive(Debug, Default)]
struct Seen {
    first_host: usize,
    calls: Vec<(u16, bool)>,
    /// Index into `calls` of the first answer of a new session.
    renewed_at: Option<usize>,
}

/// Per client: one session through the proxy, `terminal` and `read_file`
/// calls until `stop` (at most 400, 60 s); on 404 a new session, once.
fn client(proxy: SocketAddr, session: String, first_host: usize, stop: Arc<AtomicBool>) -> Seen {
    let mut seen = Seen {
        first_host,
        ..Seen::default()
    };
    let mut session = session;
    let start = Instant::now();
    for i in 0..400 {
        if stop.load(Ordering::SeqCst) || start.elapsed() > Duration::from_secs(60) {
            break;
        }
        let answer = if i % 2 == 0 {
            call_tool(
                proxy,
                Some(&session),
                "terminal",
                json!({"command": "true"}),
            )
        } else {
            call_tool(
                proxy,
                Some(&session),
                "read_file",
                json!({"path": "probe", "offset": i}),
            )
        };
        let is_error = tool_text(&answer).is_none_or(|(_, e)| e);
        seen.calls.push((answer.status, is_error));
        if answer.status == 404 && seen.renewed_at.is_none() {
            session = open_session(proxy).unwrap_or_else(|r| panic!("no new session: {r:?}"));
            seen.renewed_at = Some(seen.calls.len());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    seen
}

#[test]
fn a_killed_host_loses_only_its_own_sessions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("probe"), "line\n".repeat(500)).unwrap();
    let profile = dir.path().join("profile");
    let topology = Topology::start(
        2,
        dir.path(),
        &[
            "--profile",
            profile.to_str().unwrap(),
            "--toolsets",
            "file,terminal",
        ],
    );
    // Sessions through the proxy, until both hosts hold some.
    let mut sessions: Vec<(String, usize)> = Vec::new();
    for _ in 0..12 {
        let id = open_session(topology.proxy).unwrap();
        let owner = topology.owner(&id).expect("a session lives on one host");
        sessions.push((id, owner));
    }
    for host in 0..2 {
        assert!(
            sessions.iter().any(|s| s.1 == host),
            "round robin put no session on host {host}: {sessions:?}"
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = sessions
        .iter()
        .cloned()
        .map(|(id, host)| {
            let stop = Arc::clone(&stop);
            let proxy = topology.proxy;
            std::thread::spawn(move || client(proxy, id, host, stop))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    // Mid-load: host 0 dies at once (no drain).
    signal(topology.hosts[0].1, nix::sys::signal::Signal::SIGKILL);
    std::thread::sleep(Duration::from_millis(2500));
    stop.store(true, Ordering::SeqCst);
    let seen: Vec<Seen> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    for s in &seen {
        assert!(s.calls.len() >= 4, "too few calls to tell: {s:?}");
        if s.first_host == 1 {
            assert!(
                s.calls
                    .iter()
                    .all(|&(status, error)| status == 200 && !error),
                "a client of the live host saw an error: {s:?}"
            );
            assert_eq!(s.renewed_at, None, "{s:?}");
        } else {
            // Its session ended with the host: 404 (or the call in flight
            // when it died cut off), then a new session that works.
            let renewed = s.renewed_at.unwrap_or_else(|| panic!("never told: {s:?}"));
            assert!(renewed >= 1 && s.calls[renewed - 1].0 == 404, "{s:?}");
            let before = &s.calls[..renewed - 1];
            let failures = before.iter().filter(|c| c.0 != 200 || c.1).count();
            assert!(failures <= 1, "more than the call in flight failed: {s:?}");
            let after = &s.calls[renewed..];
            assert!(!after.is_empty(), "{s:?}");
            assert!(
                after.iter().all(|&(status, error)| status == 200 && !error),
                "the new session failed: {s:?}"
            );
        }
    }
}

#[test]
fn sigterm_drains_a_host_while_new_sessions_go_to_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile");
    let topology = Topology::start(
        2,
        dir.path(),
        &[
            "--profile",
            profile.to_str().unwrap(),
            "--toolsets",
            "file,terminal",
            "--drain-grace",
            "60",
        ],
    );
    // A session on host 1, with a call running.
    let mut draining = None;
    for _ in 0..8 {
        let id = open_session(topology.proxy).unwrap();
        if topology.owner(&id) == Some(1) {
            draining = Some(id);
            break;
        }
    }
    let draining = draining.expect("round robin reaches host 1");
    let proxy = topology.proxy;
    let running = start_waiting_call(proxy, &draining, dir.path());
    signal(topology.hosts[1].1, nix::sys::signal::Signal::SIGTERM);
    // Every new session lands on host 0, at once (a 503 from the draining
    // host is retried on the other by the proxy).
    for _ in 0..6 {
        let id = open_session(topology.proxy).unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!(topology.owner(&id), Some(0));
    }
    // The draining host's session is still served through the proxy.
    let read = call_tool(
        proxy,
        Some(&draining),
        "read_file",
        json!({"path": "started"}),
    );
    assert_eq!(read.status, 200, "{read:?}");
    std::fs::write(dir.path().join("go"), "").unwrap();
    let answer = running.join().unwrap();
    let (text, is_error) = tool_text(&answer).unwrap_or_else(|| panic!("{answer:?}"));
    assert!(!is_error && text.contains("finished-"), "{text}");
    assert!(
        wait_until(Duration::from_secs(20), || mcp_support::process_gone(
            topology.hosts[1].1
        )),
        "the drained host exits"
    );
    // Gone: its session is 404, a new one works.
    let gone = call_tool(
        proxy,
        Some(&draining),
        "read_file",
        json!({"path": "started"}),
    );
    assert_eq!(gone.status, 404, "{gone:?}");
    assert!(open_session(proxy).is_ok());
}
