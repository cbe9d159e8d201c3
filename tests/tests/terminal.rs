//! The `terminal` toolset (`terminal`, `process`) through the real
//! registry's dispatch: foreground and background commands, the clean child
//! environment, timeouts, output caps, and parent-first teardown that leaves
//! no process behind (shells that trap signals, children that ignore SIGHUP,
//! grandchildren whose parent already exited).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod workspace;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use hermes_procs::scan;
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

struct Sandbox {
    dir: tempfile::TempDir,
    ctx: ToolContext,
    /// A unique number: every long-lived test process sleeps `3000.<marker>`
    /// seconds, so the test can find its own processes in /proc.
    marker: String,
}

impl Sandbox {
    fn new() -> Self {
        Sandbox::with_env("")
    }

    fn with_env(extra: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".hermes");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".env"),
            format!("TERMINAL_KILL_GRACE_SECONDS=0.3\n{extra}"),
        )
        .unwrap();
        let ctx = ToolContext::new(Profile::new(&home), dir.path()).with_session_id("s1");
        let marker = format!(
            "{}{:03}",
            std::process::id() % 100_000,
            N.fetch_add(1, Ordering::Relaxed)
        );
        Sandbox { dir, ctx, marker }
    }

    /// `sleep` with this sandbox's marker: `sleep 3000.MARKER`.
    fn sleeper(&self) -> String {
        format!("sleep 3000.{}", self.marker)
    }

    async fn call(&self, name: &str, args: Value) -> Value {
        let out = hermes_tools::registry()
            .dispatch(name, args, &self.ctx)
            .await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// Live `sleep` processes carrying this sandbox's marker. The shells
    /// that start them carry the marker in their command line too, but are
    /// not counted: a shell can be seen before it ran a line of its script
    /// (its `trap`, say), a sleeper only after the lines before it ran.
    fn survivors(&self) -> Vec<i32> {
        let needle = format!("3000.{}", self.marker);
        scan::all()
            .into_iter()
            .filter(|p| p.is_live())
            .filter(|p| {
                std::fs::read(format!("/proc/{}/cmdline", p.pid))
                    .map(|c| {
                        let mut argv = c.split(|&b| b == 0);
                        argv.next().is_some_and(|a0| a0.ends_with(b"sleep"))
                            && argv.next().is_some_and(|a1| a1 == needle.as_bytes())
                    })
                    .unwrap_or(false)
            })
            .map(|p| p.pid)
            .collect()
    }

    /// Waits until `n` marked processes run (they start asynchronously).
    fn await_survivors(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.survivors().len() < n {
            assert!(Instant::now() < deadline, "processes did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sandbox {
    /// Whatever a failing test left behind is killed, so no test leaks.
    fn drop(&mut self) {
        let left = self.survivors();
        if !left.is_empty() {
            let _ = std::process::Command::new("kill")
                .arg("-9")
                .args(left.iter().map(i32::to_string))
                .status();
        }
    }
}

#[tokio::test]
async fn foreground_output_exit_code_and_workdir() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.dir.path().join("sub")).unwrap();
    let v = sb
        .call(
            "terminal",
            json!({"command": "echo out; echo err >&2; pwd; exit 3", "workdir": "sub"}),
        )
        .await;
    assert_eq!(v["exit_code"], 3, "{v}");
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("out\n") && out.contains("err\n"), "{out}");
    assert!(out.trim_end().ends_with("/sub"), "{out}");
    assert!(
        v.get("error").is_none(),
        "a plain exit is not an error: {v}"
    );

    let v = sb
        .call("terminal", json!({"command": "true", "workdir": "missing"}))
        .await;
    assert!(v["error"].as_str().unwrap().contains("missing"), "{v}");
    let v = sb.call("terminal", json!({"command": "  "})).await;
    assert!(v["error"].as_str().unwrap().contains("empty"), "{v}");
    let v = sb
        .call("terminal", json!({"command": "true", "timeout": 601}))
        .await;
    assert!(v["error"].as_str().unwrap().contains("background"), "{v}");
}

#[tokio::test]
async fn the_child_environment_is_clean_plus_the_profiles_secrets() {
    let sb = Sandbox::with_env("DEPLOY_TOKEN=s3cret\n");
    // Cargo sets CARGO_* in this test process; none of it may reach the child.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let v = sb.call("terminal", json!({"command": "env"})).await;
    let out = v["output"].as_str().unwrap();
    let vars: Vec<(&str, &str)> = out.lines().filter_map(|l| l.split_once('=')).collect();
    let get = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    // An environment dump is redacted (`redact`); the variable is there.
    assert!(get("DEPLOY_TOKEN").is_some(), "{out}");
    let v = sb
        .call(
            "terminal",
            json!({"command": "printf '%s' \"$DEPLOY_TOKEN\""}),
        )
        .await;
    assert_eq!(v["output"], "s3cret", "{v}");
    assert_eq!(get("PATH"), Some(hermes_procs::child_env::DEFAULT_PATH));
    assert_eq!(
        get("HERMES_HOME"),
        Some(sb.ctx.profile().home().to_str().unwrap())
    );
    assert!(get("CARGO_MANIFEST_DIR").is_none(), "{out}");
    assert!(!out.contains("CARGO_"), "{out}");
    // Exactly the builder's variables (plus what the shell itself exports).
    let expected = hermes_procs::child_env::ChildEnv::for_profile(sb.ctx.profile());
    for (name, _) in &vars {
        let shell_own = ["PWD", "SHLVL", "_", "OLDPWD"].contains(name);
        assert!(
            shell_own || expected.get(name).is_some(),
            "{name} is not from the environment builder"
        );
    }
}

#[tokio::test]
async fn a_timeout_terminates_the_command_and_its_children() {
    let sb = Sandbox::new();
    let started = Instant::now();
    let cmd = format!(
        "echo begun; {} & {} ; echo never",
        sb.sleeper(),
        sb.sleeper()
    );
    let v = sb
        .call("terminal", json!({"command": cmd, "timeout": 1}))
        .await;
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(v["error"].as_str().unwrap().contains("timed out"), "{v}");
    assert!(v["output"].as_str().unwrap().contains("begun"), "{v}");
    assert!(!v["output"].as_str().unwrap().contains("never"), "{v}");
    assert!(started.elapsed() < Duration::from_secs(6));
    assert!(sb.survivors().is_empty(), "{:?}", sb.survivors());
}

#[tokio::test]
async fn what_a_foreground_command_leaves_running_is_terminated() {
    let sb = Sandbox::new();
    let started = Instant::now();
    let cmd = format!("{} & echo left", sb.sleeper());
    let v = sb.call("terminal", json!({"command": cmd})).await;
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(v["output"], "left\n");
    assert!(
        v["note"].as_str().unwrap().contains("background=true"),
        "{v}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(sb.survivors().is_empty());
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_marks_the_cut() {
    let sb = Sandbox::new();
    let cmd = "echo FIRST; head -c 300000 /dev/zero | tr '\\0' 'x'; echo; echo LAST";
    let v = sb.call("terminal", json!({"command": cmd})).await;
    let out = v["output"].as_str().unwrap();
    assert!(out.starts_with("FIRST\n"), "{}", &out[..50]);
    assert!(out.trim_end().ends_with("LAST"));
    assert!(out.contains("[OUTPUT TRUNCATED - "), "the cut is marked");
    assert!(out.len() < 60_000, "{}", out.len());
}

#[tokio::test]
async fn background_start_poll_log_wait() {
    let sb = Sandbox::new();
    let v = sb
        .call(
            "terminal",
            json!({"command": "for i in 1 2 3 4 5; do echo line$i; done; sleep 0.3; echo done",
                   "background": true}),
        )
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("proc_"), "{v}");
    assert_eq!(v["exit_code"], 0);

    let v = sb
        .call(
            "process",
            json!({"action": "wait", "session_id": id, "timeout": 10}),
        )
        .await;
    assert_eq!(v["status"], "exited", "{v}");
    assert_eq!(v["exit_code"], 0);
    assert!(v["output"].as_str().unwrap().ends_with("done\n"), "{v}");

    let v = sb
        .call("process", json!({"action": "poll", "session_id": id}))
        .await;
    assert_eq!(v["status"], "exited");
    assert!(v["output_preview"].as_str().unwrap().contains("line3"));

    let v = sb
        .call(
            "process",
            json!({"action": "log", "session_id": id, "limit": 2}),
        )
        .await;
    assert_eq!(v["output"], "line5\ndone");
    assert_eq!(v["total_lines"], 6);
    let v = sb
        .call(
            "process",
            json!({"action": "log", "session_id": id, "offset": 1, "limit": "2"}),
        )
        .await;
    assert_eq!(v["output"], "line2\nline3");

    let v = sb.call("process", json!({"action": "list"})).await;
    let listed = v["processes"].as_array().unwrap();
    assert!(listed.iter().any(|p| p["session_id"] == id.as_str()), "{v}");
}

#[tokio::test]
async fn processes_are_scoped_to_their_profile() {
    let a = Sandbox::new();
    let b = Sandbox::new();
    let v = a
        .call("terminal", json!({"command": "true", "background": true}))
        .await;
    let id = v["session_id"].as_str().unwrap();
    let v = b
        .call("process", json!({"action": "poll", "session_id": id}))
        .await;
    assert_eq!(v["status"], "not_found", "{v}");
    let v = b.call("process", json!({"action": "list"})).await;
    assert!(!v.to_string().contains(id));
    let v = a.call("process", json!({"action": "poll"})).await;
    assert!(v["error"].as_str().unwrap().contains("session_id"), "{v}");
    let v = a.call("process", json!({"action": "explode"})).await;
    assert!(v["error"].as_str().unwrap().contains("action"), "{v}");
}

async fn start(sb: &Sandbox, script: &str, expect: usize) -> String {
    let v = sb
        .call("terminal", json!({"command": script, "background": true}))
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    sb.await_survivors(expect);
    id
}

async fn kill(sb: &Sandbox, id: &str) -> Value {
    let started = Instant::now();
    let v = sb
        .call("process", json!({"action": "kill", "session_id": id}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(5), "bounded");
    assert!(
        sb.survivors().is_empty(),
        "orphans: {:?} after {v}",
        sb.survivors()
    );
    assert_eq!(v["teardown"]["survivors"], json!([]), "{v}");
    v
}

#[tokio::test]
async fn kill_lets_a_trapping_shell_reap_its_own_children() {
    let sb = Sandbox::new();
    // On SIGTERM the shell stops its two children itself and exits.
    let script = format!(
        "trap 'kill $a $b; wait; echo cleaned; exit 0' TERM; {s} & a=$!; {s} & b=$!; wait",
        s = sb.sleeper()
    );
    let id = start(&sb, &script, 2).await;
    let v = kill(&sb, &id).await;
    assert_eq!(v["status"], "killed");
    assert_eq!(v["teardown"]["parent_signalled"], true);
    assert_eq!(v["teardown"]["parent_exited_in_grace"], true, "{v}");
    assert_eq!(
        v["teardown"]["killed"],
        json!([]),
        "nothing needed SIGKILL: {v}"
    );
    assert!(v["output"].as_str().unwrap().contains("cleaned"), "{v}");
    assert_eq!(v["exit_code"], 0);
}

#[tokio::test]
async fn kill_escalates_to_sigkill_for_what_ignores_sigterm() {
    let sb = Sandbox::new();
    // The shell ignores SIGTERM, and so do its children (inherited).
    let script = format!("trap '' TERM; {s} & {s} & wait", s = sb.sleeper());
    let id = start(&sb, &script, 2).await;
    let v = kill(&sb, &id).await;
    assert_eq!(v["teardown"]["parent_exited_in_grace"], false, "{v}");
    let killed = v["teardown"]["killed"].as_array().unwrap();
    assert_eq!(killed.len(), 3, "the shell and both children: {v}");
    assert_eq!(v["exit_code"], 128 + 9);
}

#[tokio::test]
async fn kill_reaches_children_that_ignore_sighup_and_orphaned_grandchildren() {
    let sb = Sandbox::new();
    // Two children ignore SIGHUP (nohup, trap); a grandchild's own parent
    // exits at once, so it is re-parented out of the tree but stays in the
    // process group. The shell itself dies on SIGTERM without cleaning up.
    let script = format!(
        "nohup {s} >/dev/null 2>&1 & (trap '' HUP; exec {s}) & ( ( {s} & ) ) ; wait",
        s = sb.sleeper()
    );
    let id = start(&sb, &script, 3).await;
    let v = kill(&sb, &id).await;
    assert_eq!(v["teardown"]["parent_exited_in_grace"], true, "{v}");
    assert_eq!(
        v["teardown"]["terminated"].as_array().unwrap().len(),
        3,
        "every survivor got SIGTERM: {v}"
    );
    assert_eq!(v["teardown"]["killed"], json!([]), "{v}");
}

#[tokio::test]
async fn killing_an_exited_process_still_clears_what_it_left() {
    let sb = Sandbox::new();
    let script = format!("{} & echo bye", sb.sleeper());
    let id = start(&sb, &script, 1).await;
    let v = sb
        .call(
            "process",
            json!({"action": "wait", "session_id": id, "timeout": 5}),
        )
        .await;
    assert_eq!(v["status"], "exited", "{v}");
    assert_eq!(sb.survivors().len(), 1, "the child outlives its shell");
    let v = kill(&sb, &id).await;
    assert_eq!(v["status"], "already_exited");
    assert_eq!(v["teardown"]["terminated"].as_array().unwrap().len(), 1);
}

#[test]
fn teardown_api_is_usable_directly() {
    // The same teardown the tools use, on a command started by the builder.
    let sb = Sandbox::new();
    let env = hermes_procs::child_env::ChildEnv::for_profile(sb.ctx.profile());
    let run = hermes_procs::spawn(
        &env,
        &format!("trap '' TERM; {}", sb.sleeper()),
        Path::new("/"),
        100,
        100,
    )
    .unwrap();
    sb.await_survivors(1);
    let report = run.teardown(Duration::from_millis(100));
    assert!(report.parent_signalled);
    assert!(!report.killed.is_empty());
    assert!(sb.survivors().is_empty());
}

#[test]
fn every_child_process_comes_from_the_environment_builder() {
    // `Command::new` (which would inherit the agent's environment unless
    // cleared) appears in the environment builder only.
    // The process layer and every crate built on it.
    let root = workspace::root();
    let builder = root.join("procs/src/child_env.rs");
    let metadata = workspace::metadata();
    let mut stack: Vec<PathBuf> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["name"] == "hermes-procs"
                || p["dependencies"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["name"] == "hermes-procs" && d["kind"].is_null())
        })
        .map(|p| {
            Path::new(p["manifest_path"].as_str().unwrap())
                .parent()
                .unwrap()
                .join("src")
        })
        .collect();
    assert!(stack.len() >= 2, "{stack:?}");
    let mut offenders = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && path != builder {
                let text = std::fs::read_to_string(&path).unwrap();
                if text.contains("Command::new") {
                    offenders.push(path);
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:?}");
}
