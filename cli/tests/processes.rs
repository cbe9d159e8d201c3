//! No escapes, and the reference's process parameters, with real processes:
//! the agent's environment and memory out of its commands' reach (through
//! the real binary), descendants that leave the process group torn down,
//! the process bound (a fork bomb stays under it), stdin `write` /
//! `submit` / `close`, `pty`, `notify_on_complete` and `watch_patterns`
//! (the library queue and `serve --mcp`), `exit_code_meaning`.
//!
//! Every wait is bounded; every test kills what it left on the way out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_procs::contain::{containment, Containment};
use hermes_procs::scan;
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

struct Sandbox {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    ctx: ToolContext,
    /// Long-lived test processes carry `3000.<marker>` in their command
    /// line, so the test finds its own in /proc.
    marker: String,
}

impl Sandbox {
    fn new(extra_env: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".hermes");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".env"),
            format!("TERMINAL_KILL_GRACE_SECONDS=0.3\n{extra_env}"),
        )
        .unwrap();
        let ctx = ToolContext::new(Profile::new(&home), dir.path()).with_session_id("task-1");
        let marker = format!(
            "{}{:03}",
            std::process::id() % 100_000,
            N.fetch_add(1, Ordering::Relaxed)
        );
        Sandbox {
            _dir: dir,
            home,
            ctx,
            marker,
        }
    }

    fn mark(&self) -> String {
        format!("3000.{}", self.marker)
    }

    async fn call(&self, name: &str, args: Value) -> Value {
        let out = hermes_tools::registry()
            .dispatch(name, args, &self.ctx)
            .await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// Live processes whose command line holds the marker.
    fn marked(&self) -> Vec<i32> {
        let needle = self.mark();
        scan::all()
            .into_iter()
            .filter(|p| p.is_live())
            .filter(|p| {
                std::fs::read(format!("/proc/{}/cmdline", p.pid))
                    .map(|c| String::from_utf8_lossy(&c).contains(&needle))
                    .unwrap_or(false)
            })
            .map(|p| p.pid)
            .collect()
    }

    /// Waits (at most 5 s) until nothing marked runs; what still runs.
    fn settle(&self) -> Vec<i32> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = self.marked();
            if left.is_empty() || Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Polls `process poll` until its output contains `needle` (at most 10 s).
    async fn poll_until(&self, id: &str, needle: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let v = self
                .call("process", json!({"action": "poll", "session_id": id}))
                .await;
            if v["output_preview"].as_str().unwrap_or("").contains(needle) {
                return v;
            }
            assert!(Instant::now() < deadline, "never saw {needle:?}: {v}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn start(&self, args: Value) -> String {
        let v = self.call("terminal", args).await;
        v["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session_id: {v}"))
            .to_string()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        for pid in self.marked() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn is_cgroup() -> bool {
    matches!(containment(), Containment::Cgroup { .. })
}

#[test]
fn commands_cannot_read_the_agents_environment_or_memory() {
    // Through the real binary, as an agent runs: secrets in its own
    // environment (the MCP token among them).
    let dir = tempfile::tempdir().unwrap();
    let secret = format!("s3cret-{}", std::process::id());
    let script = "tr '\\0' '\\n' < /proc/$PPID/environ; echo; \
                  if (exec 3</proc/$PPID/mem) 2>/dev/null; then echo MEM-OPEN; else echo MEM-DENIED; fi; \
                  if (exec 3</proc/$PPID/maps) 2>/dev/null; then echo MAPS-OPEN; fi; \
                  grep CapEff /proc/self/status";
    let out = Command::new(BIN)
        .args([
            "--profile",
            dir.path().to_str().unwrap(),
            "call",
            "terminal",
        ])
        .arg(json!({ "command": script }).to_string())
        .env("HERMES_PROBE_SECRET", &secret)
        .env("HERMES_MCP_TOKEN", &secret)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v["output"].as_str().unwrap();
    assert!(
        !text.contains(&secret),
        "the secret reached a command: {text}"
    );
    assert!(text.contains("MEM-DENIED"), "{text}");
    // Whatever of the environ file a command can read (root can, on
    // recent kernels) holds the descriptor variable only.
    let environ: Vec<&str> = text
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.contains('='))
        .collect();
    assert!(
        environ.iter().all(|l| l.starts_with("HERMES_ENV_FD=")),
        "{text}"
    );
    if nix::unistd::geteuid().is_root() {
        // Without CAP_SYS_PTRACE, the memory stays closed to root too.
        let caps = text.lines().find(|l| l.starts_with("CapEff:")).unwrap();
        let bits = u64::from_str_radix(caps.split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_eq!(bits & (1 << 19), 0, "CAP_SYS_PTRACE is dropped: {caps}");
    } else {
        assert!(!text.contains("MAPS-OPEN"), "{text}");
    }
}

#[test]
fn mcp_servers_started_by_schema_cannot_read_the_agents_environment() {
    // `schema` moves the environment out of the initial block only when it
    // starts a process: here the profile's MCP server, whose command
    // copies what it can read of its parent's environment. The profile is
    // named by the environment, which the re-executed image must read back
    // before it looks for the profile.
    let dir = tempfile::tempdir().unwrap();
    let secret = format!("s3cret-{}", std::process::id());
    let seen = dir.path().join("seen");
    let script = format!(
        "tr '\\0' '\\n' < /proc/$PPID/environ > {0}; echo RAN >> {0}",
        seen.display()
    );
    let config = format!(
        "mcp_servers:\n  probe:\n    command: /bin/sh\n    args: [-c, {}]\n    timeout: 5\n",
        json!(script)
    );
    std::fs::write(dir.path().join("config.yaml"), config).unwrap();
    let out = Command::new(BIN)
        .arg("schema")
        .env("HERMES_HOME", dir.path())
        .env("HERMES_PROBE_SECRET", &secret)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&seen).unwrap();
    assert!(text.contains("RAN"), "the server never ran: {out:?}");
    assert!(
        !text.contains(&secret),
        "the secret reached the server: {text}"
    );
    let environ: Vec<&str> = text.lines().filter(|l| l.contains('=')).collect();
    assert!(
        environ.iter().all(|l| l.starts_with("HERMES_ENV_FD=")),
        "{text}"
    );
}

#[tokio::test]
async fn commands_cannot_open_the_embedding_agents_memory() {
    // In-process (a library embedding): non-dumpable, and no CAP_SYS_PTRACE
    // for commands.
    let sb = Sandbox::new("");
    let v = sb
        .call(
            "terminal",
            json!({"command": "if (exec 3</proc/$PPID/mem) 2>/dev/null; then echo OPEN; else echo DENIED; fi"}),
        )
        .await;
    assert_eq!(v["output"], "DENIED\n", "{v}");
}

#[tokio::test]
async fn a_user_namespace_closes_the_agents_proc_files_to_root_commands() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: TERMINAL_USER_NAMESPACE is for root agents");
        return;
    }
    // In-process, as an embedding that never moved its environment out of
    // the initial block: a variable of this test process is the secret.
    let probe = "for f in environ maps mem; do \
                   if (exec 3</proc/$PPID/$f) 2>/dev/null; then echo $f-OPEN; else echo $f-DENIED; fi; \
                 done; tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c CARGO_; \
                 id -u; echo written > own-file && cat own-file";
    let plain = Sandbox::new("");
    let v = plain.call("terminal", json!({ "command": probe })).await;
    let text = v["output"].as_str().unwrap_or_default();
    // Without the namespace a root command reads the embedding's
    // environment on this kernel (what the setting is for); another
    // kernel may close it already.
    if !text.contains("environ-OPEN") {
        eprintln!("note: environ already closed without a namespace: {text}");
    }
    assert!(text.contains("mem-DENIED"), "{v}");

    let sb = Sandbox::new("TERMINAL_USER_NAMESPACE=1\n");
    let v = sb.call("terminal", json!({ "command": probe })).await;
    let text = v["output"].as_str().unwrap_or_default();
    if text.contains("unshare") {
        // A kernel or container that refuses user namespaces: the command
        // fails with the reason and never runs outside one.
        assert_ne!(v["exit_code"], 0, "{v}");
        assert!(!text.contains("environ-"), "ran outside the namespace: {v}");
        eprintln!("skipped: no user namespaces here: {text}");
        return;
    }
    assert_eq!(v["exit_code"], 0, "{v}");
    for f in ["environ", "maps", "mem"] {
        assert!(text.contains(&format!("{f}-DENIED")), "{f}: {v}");
    }
    // Still root for root's files, in the session's directory.
    assert!(text.contains("\n0\nwritten\n"), "{v}");
    // Sessions, the cgroup, teardown hold inside it too.
    let v = sb
        .call(
            "terminal",
            json!({"command": "export HN_USERNS=kept; cd /tmp"}),
        )
        .await;
    assert_eq!(v["exit_code"], 0, "{v}");
    let m = sb.mark();
    let v = sb
        .call(
            "terminal",
            json!({"command": format!("echo $HN_USERNS $(pwd); grep pids /proc/self/cgroup; setsid sleep {m} & echo ok")}),
        )
        .await;
    let text = v["output"].as_str().unwrap_or_default();
    assert!(text.starts_with("kept /tmp\n"), "{v}");
    if is_cgroup() {
        assert!(text.contains("hermes-"), "not in its cgroup: {v}");
    }
    assert!(sb.settle().is_empty(), "escaped: {:?}", sb.marked());
}

#[tokio::test]
async fn descendants_that_leave_the_group_are_torn_down() {
    let sb = Sandbox::new("");
    let m = sb.mark();
    // A new session, a double fork, and a daemon whose parent exits.
    let mut script = format!(
        "printf 'sleep {m} &\\n' > daemon.sh; setsid sleep {m} & disown; (sleep {m} &); (setsid sh daemon.sh &); sleep 0.2; echo started"
    );
    if is_cgroup() {
        // With a cgroup even an empty environment does not help.
        script += &format!("; env -i setsid sleep {m} &");
    }
    let v = sb.call("terminal", json!({ "command": script })).await;
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(
        v["note"].as_str().unwrap_or("").contains("terminated"),
        "{v}"
    );
    assert!(sb.settle().is_empty(), "escaped: {:?}", sb.marked());

    // The same from the background, ended by `process kill`.
    let id = sb
        .start(json!({
            "command": format!("setsid sleep {m} & (sleep {m} &); echo up; sleep {m}"),
            "background": true,
        }))
        .await;
    sb.poll_until(&id, "up").await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while sb.marked().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "did not start: {:?}",
            sb.marked()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let v = sb
        .call("process", json!({"action": "kill", "session_id": id}))
        .await;
    assert_eq!(v["status"], "killed", "{v}");
    assert!(sb.settle().is_empty(), "escaped: {:?}", sb.marked());
}

#[tokio::test]
async fn a_fork_bomb_stays_under_the_process_bound() {
    if !is_cgroup() {
        // Without a cgroup the bound is RLIMIT_NPROC, counted over the whole
        // user (or none for root): no bomb here.
        eprintln!(
            "skipped: containment is {} (no cgroup for commands)",
            containment().name()
        );
        return;
    }
    const LIMIT: usize = 40;
    let sb = Sandbox::new(&format!("TERMINAL_MAX_PROCESSES={LIMIT}\n"));
    // Every copy of the bomb is a fork of the shell (some start a marked
    // `sleep`, for the check that nothing is left). The sampler counts the
    // processes of the command cgroup whose bound is LIMIT: the bomb's,
    // as the kernel lists them.
    // The bomb is sourced from a file: written in the command it is a hard
    // line (`terminal` reads the command as bash will) and never runs. The
    // shell then stays until the call's timeout, so the bomb meets its
    // bound however slowly a loaded machine forks (the bomb itself returns
    // at once: every copy is in the background).
    let script = format!(
        "printf '%s\\n' 'b() {{ sleep {} & b | b & }}; b' > bomb.sh; . ./bomb.sh; sleep 30",
        sb.mark()
    );
    let Containment::Cgroup { parent, .. } = containment().clone() else {
        unreachable!("checked above");
    };
    let peak = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let n: usize = std::fs::read_dir(&parent)
                    .unwrap()
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("hermes-"))
                    .filter(|e| {
                        std::fs::read_to_string(e.path().join("pids.max"))
                            .is_ok_and(|m| m.trim() == LIMIT.to_string())
                    })
                    .map(|e| {
                        std::fs::read_to_string(e.path().join("cgroup.procs"))
                            .map(|t| t.lines().count())
                            .unwrap_or(0)
                    })
                    .sum();
                peak.fetch_max(n, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let started = Instant::now();
    let v = sb
        .call("terminal", json!({"command": script, "timeout": 3}))
        .await;
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "{v}");
    let note = v["note"].as_str().unwrap_or("");
    assert!(
        note.contains(&format!("limit of {LIMIT} processes")),
        "the bound is reported: {v}"
    );
    let peak = peak.load(Ordering::Relaxed);
    assert!(peak <= LIMIT, "{peak} processes at once");
    assert!(peak >= 4, "the bomb did run ({peak})");
    assert!(sb.settle().is_empty(), "left: {:?}", sb.marked());
    // Emptied cgroups are reused: the next commands (the bomb's cgroup
    // among the first candidates) neither inherit its failed forks nor a
    // bound other than theirs.
    for _ in 0..3 {
        let v = sb
            .call(
                "terminal",
                json!({"command": "cat /sys/fs/cgroup/pids$(grep :pids: /proc/self/cgroup | cut -d: -f3)/pids.max 2>/dev/null || echo none"}),
            )
            .await;
        assert_eq!(v["exit_code"], 0, "{v}");
        assert!(v.get("note").is_none(), "{v}");
        let out = v["output"].as_str().unwrap_or_default();
        assert!(out == format!("{LIMIT}\n") || out == "none\n", "{v}");
    }
}

#[tokio::test]
async fn a_normal_build_fits_the_default_bound() {
    // 64 parallel jobs (more than a build on this machine starts) pass.
    let sb = Sandbox::new("");
    let v = sb
        .call(
            "terminal",
            json!({"command": "for i in $(seq 64); do sleep 0.3 & done; wait; echo all-done"}),
        )
        .await;
    assert_eq!(v["output"], "all-done\n", "{v}");
    assert!(v.get("note").is_none(), "{v}");
}

#[tokio::test]
async fn stdin_write_submit_and_close() {
    let sb = Sandbox::new("");
    let id = sb
        .start(json!({
            "command": "while IFS= read -r line; do echo \"got:$line\"; done; echo eof",
            "background": true,
        }))
        .await;
    let v = sb
        .call(
            "process",
            json!({"action": "submit", "session_id": id, "data": "hello"}),
        )
        .await;
    assert_eq!(v, json!({"status": "ok", "bytes_written": 6}));
    sb.poll_until(&id, "got:hello").await;
    let v = sb
        .call(
            "process",
            json!({"action": "write", "session_id": id, "data": "par"}),
        )
        .await;
    assert_eq!(v["bytes_written"], 3, "{v}");
    sb.call(
        "process",
        json!({"action": "submit", "session_id": id, "data": "tial"}),
    )
    .await;
    sb.poll_until(&id, "got:partial").await;
    let v = sb
        .call("process", json!({"action": "close", "session_id": id}))
        .await;
    assert_eq!(v["status"], "ok", "{v}");
    let v = sb
        .call(
            "process",
            json!({"action": "wait", "session_id": id, "timeout": 10}),
        )
        .await;
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(v["output"].as_str().unwrap().ends_with("eof\n"), "{v}");
    let v = sb
        .call(
            "process",
            json!({"action": "write", "session_id": id, "data": "x"}),
        )
        .await;
    assert_eq!(v["status"], "already_exited", "{v}");
    assert!(v["error"].as_str().is_some(), "{v}");

    // Errors name what is wrong.
    let v = sb
        .call("process", json!({"action": "submit", "data": "x"}))
        .await;
    assert!(v["error"].as_str().unwrap().contains("session_id"), "{v}");
    let v = sb
        .call(
            "process",
            json!({"action": "close", "session_id": "proc_nope"}),
        )
        .await;
    assert_eq!(v["status"], "not_found", "{v}");

    // A process that does not read: the write gives up, and says so.
    let id = sb
        .start(json!({"command": format!("sleep {}", sb.mark()), "background": true}))
        .await;
    let big = "x".repeat(300_000);
    let started = Instant::now();
    let v = sb
        .call(
            "process",
            json!({"action": "write", "session_id": id, "data": big}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(v["status"], "partial", "{v}");
    assert!(v["bytes_written"].as_u64().unwrap() < 300_000, "{v}");
    let v = sb
        .call("process", json!({"action": "close", "session_id": id}))
        .await;
    assert_eq!(v["status"], "ok", "{v}");
    let v = sb
        .call("process", json!({"action": "close", "session_id": id}))
        .await;
    assert!(v["error"].as_str().unwrap().contains("closed"), "{v}");
    sb.call("process", json!({"action": "kill", "session_id": id}))
        .await;
}

#[tokio::test]
async fn pty_runs_interactive_programs() {
    let sb = Sandbox::new("");
    // Foreground: a terminal on every standard stream.
    let v = sb
        .call(
            "terminal",
            json!({"command": "tty; test -t 0 && test -t 1 && echo all-tty", "pty": true}),
        )
        .await;
    let out = v["output"].as_str().unwrap();
    assert!(
        out.starts_with("/dev/pts/") && out.contains("all-tty"),
        "{v}"
    );
    let v = sb.call("terminal", json!({"command": "tty"})).await;
    assert_eq!(v["output"], "not a tty\n", "{v}");

    // Background: answer a prompt, then end input with EOF.
    let id = sb
        .start(json!({
            "command": "read -p 'name? ' n; echo \"hi $n\"; cat; echo cat-ended",
            "background": true,
            "pty": true,
        }))
        .await;
    sb.poll_until(&id, "name? ").await;
    sb.call(
        "process",
        json!({"action": "submit", "session_id": id, "data": "bob"}),
    )
    .await;
    sb.poll_until(&id, "hi bob").await;
    let v = sb
        .call("process", json!({"action": "close", "session_id": id}))
        .await;
    assert_eq!(v["message"], "EOF sent", "{v}");
    let v = sb
        .call(
            "process",
            json!({"action": "wait", "session_id": id, "timeout": 10}),
        )
        .await;
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(v["output"].as_str().unwrap().contains("cat-ended"), "{v}");
}

/// The next notification about `id` (others are dropped), within 10 s.
fn next_about(id: &str) -> Option<hermes_procs::notify::ProcessNotification> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let queue = hermes_procs::notify::notifications();
    while Instant::now() < deadline {
        if let Some(n) = queue.wait(Duration::from_millis(100)) {
            if n.session_id == id {
                return Some(n);
            }
        }
    }
    None
}

#[tokio::test]
async fn notify_on_complete_and_watch_patterns_reach_the_queue() {
    // The only test of this binary that reads the process-wide queue.
    // A value of the profile's .env, whatever its name, reaches the queue
    // redacted, as it reaches `terminal`'s own answer.
    let secret = "pl41n-v4lue-0f-a-cust0m-key";
    let sb = Sandbox::new(&format!("MY_OWN_THING={secret}\n"));
    let v = sb
        .call(
            "terminal",
            json!({"command": "echo working; echo \"got $MY_OWN_THING\"; exit 3",
                   "background": true, "notify_on_complete": true}),
        )
        .await;
    assert_eq!(v["notify_on_complete"], true, "{v}");
    let id = v["session_id"].as_str().unwrap();
    let n = next_about(id).expect("a completion");
    assert_eq!(
        (n.kind, n.status, n.exit_code),
        ("completion", Some("exited"), Some(3))
    );
    assert!(n.output.contains("working"), "{n:?}");
    assert!(
        !n.output.contains(secret) && n.output.contains("«redacted:MY_OWN_THING»"),
        "{n:?}"
    );
    assert_eq!(n.task_id.as_deref(), Some("task-1"));
    assert_eq!(n.profile_home, sb.home);

    // Watching: the first match is sent, the next within 15 s is counted.
    let m = sb.mark();
    let v = sb
        .call(
            "terminal",
            json!({
                "command": format!("echo boot; echo 'server READY on :80'; sleep 0.3; echo READY again; sleep {m}"),
                "background": true,
                "watch_patterns": ["READY"],
            }),
        )
        .await;
    assert_eq!(v["watch_patterns"], json!(["READY"]), "{v}");
    let id = v["session_id"].as_str().unwrap().to_string();
    let n = next_about(&id).expect("a match");
    assert_eq!(n.kind, "watch_match");
    assert_eq!(n.pattern.as_deref(), Some("READY"));
    assert_eq!(n.output, "server READY on :80");
    sb.poll_until(&id, "READY again").await;
    sb.call("process", json!({"action": "kill", "session_id": id}))
        .await;
    // Neither the second match (rate limit) nor the kill (no
    // notify_on_complete) sends anything.
    assert!(hermes_procs::notify::notifications()
        .drain()
        .iter()
        .all(|n| n.session_id != id));

    // Both flags: the patterns are dropped, and the result says why.
    let v = sb
        .call(
            "terminal",
            json!({"command": "true", "background": true, "notify_on_complete": true, "watch_patterns": ["x"]}),
        )
        .await;
    assert!(v["watch_patterns_ignored"].as_str().is_some(), "{v}");
    assert!(v.get("watch_patterns").is_none(), "{v}");
    let id = v["session_id"].as_str().unwrap();
    assert_eq!(next_about(id).map(|n| n.kind), Some("completion"));

    // Killed with notify_on_complete: the completion says so.
    let id = sb
        .start(json!({"command": format!("sleep {m}"), "background": true, "notify_on_complete": true}))
        .await;
    sb.call("process", json!({"action": "kill", "session_id": id}))
        .await;
    let n = next_about(&id).expect("a completion");
    assert_eq!(n.status, Some("killed"), "{n:?}");
}

#[tokio::test]
async fn exit_code_meaning_explains_codes_that_are_no_failure() {
    let sb = Sandbox::new("");
    let v = sb
        .call("terminal", json!({"command": "grep -q nothing /dev/null"}))
        .await;
    assert_eq!(v["exit_code"], 1);
    assert!(
        v["exit_code_meaning"].as_str().unwrap().contains("matched"),
        "{v}"
    );
    let v = sb.call("terminal", json!({"command": "false"})).await;
    assert!(v.get("exit_code_meaning").is_none(), "{v}");
    let v = sb.call("terminal", json!({"command": "true"})).await;
    assert!(v.get("exit_code_meaning").is_none(), "{v}");
}

#[test]
fn serve_mcp_sends_process_notifications_to_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "--profile",
            dir.path().to_str().unwrap(),
            "serve",
            "--mcp",
            "--toolsets",
            "terminal",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "terminal",
        "arguments": {"command": "echo built; exit 5", "background": true, "notify_on_complete": true}}}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut id = None;
    let mut note = None;
    while note.is_none() && Instant::now() < deadline {
        let Ok(msg) = rx.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        if msg["id"] == 1 {
            assert!(
                msg["result"]["capabilities"]["logging"].is_object(),
                "{msg}"
            );
        }
        if msg["id"] == 2 {
            let text = msg["result"]["content"][0]["text"].as_str().unwrap();
            let v: Value = serde_json::from_str(text).unwrap();
            id = v["session_id"].as_str().map(str::to_string);
        }
        if msg["method"] == "notifications/message" {
            note = Some(msg);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let note = note.expect("no notification within 20 s");
    let params = &note["params"];
    assert_eq!(params["logger"], "hermes-tools.process", "{note}");
    assert_eq!(params["level"], "info", "{note}");
    assert_eq!(params["data"]["type"], "completion", "{note}");
    assert_eq!(params["data"]["exit_code"], 5, "{note}");
    assert_eq!(
        params["data"]["session_id"].as_str(),
        id.as_deref(),
        "{note}"
    );
    assert!(
        params["data"]["output"].as_str().unwrap().contains("built"),
        "{note}"
    );
}

#[tokio::test]
async fn concurrent_foreground_commands_get_their_own_output_only() {
    // Each writes more than a pipe holds, at once with the others; what
    // one command leaves writing is torn down, never read into the next.
    let sb = Arc::new(Sandbox::new(""));
    let calls: Vec<_> = (0..4)
        .map(|i| {
            let sb = sb.clone();
            tokio::spawn(async move {
                let v = sb
                    .call(
                        "terminal",
                        json!({"command": format!("for n in $(seq 3000); do echo out-{i}-$n; done")}),
                    )
                    .await;
                (i, v)
            })
        })
        .collect();
    for call in calls {
        let (i, v) = call.await.unwrap();
        assert_eq!(v["exit_code"], 0, "{v}");
        let out = v["output"].as_str().unwrap();
        let own = format!("out-{i}-");
        assert!(
            out.lines()
                .all(|l| l.is_empty() || l.starts_with(&own) || l.contains("truncated")),
            "another command's output in {i}'s: {v}"
        );
        assert!(out.contains(&format!("out-{i}-1\n")), "{v}");
        assert!(out.contains(&format!("out-{i}-3000")), "{v}");
    }
    let v = sb
        .call(
            "terminal",
            json!({"command": "(sleep 0.3; echo LATE-WRITER) & echo first"}),
        )
        .await;
    assert_eq!(v["output"], "first\n", "{v}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let v = sb.call("terminal", json!({"command": "echo second"})).await;
    assert_eq!(v["output"], "second\n", "{v}");
}

#[tokio::test]
async fn a_command_that_kills_its_shell_or_times_out_leaves_the_next_one_working() {
    let sb = Sandbox::new("");
    // `$$` names the shell the command was forked from: TERM leaves it be.
    let v = sb
        .call("terminal", json!({"command": "kill $$; echo after-term"}))
        .await;
    assert_eq!(v["output"], "after-term\n", "{v}");
    assert_eq!(v["exit_code"], 0, "{v}");
    // KILL ends it: the call still answers, and the next command runs.
    let started = Instant::now();
    let v = sb
        .call(
            "terminal",
            json!({"command": format!("kill -9 $$; sleep {}", sb.mark()), "timeout": 20}),
        )
        .await;
    assert!(v.get("exit_code").is_some(), "{v}");
    assert!(started.elapsed() < Duration::from_secs(15), "{v}");
    assert!(sb.settle().is_empty(), "left: {:?}", sb.marked());
    let v = sb
        .call(
            "terminal",
            json!({"command": format!("sleep {}", sb.mark()), "timeout": 1}),
        )
        .await;
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(sb.settle().is_empty(), "left: {:?}", sb.marked());
    let v = sb.call("terminal", json!({"command": "echo ok"})).await;
    assert_eq!(v["output"], "ok\n", "{v}");
}

#[tokio::test]
async fn resident_shells_hold_no_secret_and_commands_see_a_fresh_shell() {
    let sb = Sandbox::new("RESIDENT_SECRET=sk-resident-0123456789\n");
    let v = sb
        .call(
            "terminal",
            json!({"command": "echo \"$- $0 [$RESIDENT_SECRET]\"; [ -z \"${__hermes_s+x}${__hermes_go+x}\" ] && echo clean"}),
        )
        .await;
    assert_eq!(v["exit_code"], 0, "{v}");
    let out = v["output"].as_str().unwrap();
    // What `bash -c` gives: no job control, the profile's secret (redacted
    // in the answer), none of the resident loop's variables.
    assert!(out.starts_with("hBc "), "{v}");
    assert!(!out.contains("sk-resident-0123456789"), "{v}");
    assert!(out.ends_with("clean\n"), "{v}");
    if !is_cgroup() || !std::path::Path::new("/bin/bash").exists() {
        eprintln!("skipped the resident shell check: commands are started as shells here");
        return;
    }
    let shells = hermes_procs::resident::pids();
    assert!(!shells.is_empty(), "no resident shell");
    for pid in shells {
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let env = String::from_utf8_lossy(&env);
        assert!(!env.contains("RESIDENT_SECRET"), "{pid}: {env}");
        assert!(!env.contains("HERMES_HOME"), "{pid}: {env}");
    }
    // Nor do the scripts they read the commands from, once read.
    let dir = hermes_procs::private_dir().expect("a private folder");
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains("sk-resident-0123456789"),
            "{}",
            entry.path().display()
        );
    }
}

#[tokio::test]
async fn an_environment_bash_cannot_export_still_runs_the_command() {
    // A name that is no shell name cannot be exported by a subshell: the
    // command is started as a shell of its own, with it.
    let sb = Sandbox::new("NOT.A.NAME=1\nPLAIN_NAME=2\n");
    let v = sb
        .call(
            "terminal",
            json!({"command": "echo \"$PLAIN_NAME\"; env | grep -c '^NOT\\.A\\.NAME=1$'"}),
        )
        .await;
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(v["output"], "2\n1\n", "{v}");
}

#[tokio::test]
async fn a_command_with_a_nul_is_refused_with_the_reason() {
    let sb = Sandbox::new("");
    let v = sb
        .call("terminal", json!({"command": "echo a\u{0}b"}))
        .await;
    assert!(v.to_string().contains("NUL"), "{v}");
}

#[test]
fn private_folders_that_ended_processes_left_are_removed() {
    // A process that ended: its pid is free.
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let parent = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let stale = parent.join(format!("hermes-terminal-{gone_pid}-stale"));
    let live = parent.join(format!("hermes-terminal-{}-live", std::process::id()));
    for dir in [&stale, &live] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("0.state"), "x").unwrap();
    }
    // A new agent process makes its own private folder, and clears the
    // stale one on the way.
    let out = Command::new(BIN)
        .args(["call", "terminal", r#"{"command": "echo fresh"}"#])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("fresh"),
        "{out:?}"
    );
    let stale_left = stale.exists();
    let live_kept = live.exists();
    let _ = std::fs::remove_dir_all(&live);
    let _ = std::fs::remove_dir_all(&stale);
    assert!(!stale_left, "{} was left", stale.display());
    assert!(live_kept, "a live process's folder was removed");
}
