//! The execution backends (`terminal.backend`) through the real registry's
//! dispatch: one contract (the session keeps its directory and exports; a
//! background process is polled and killed; write, read, patch, search;
//! a guard refusal; the session's end leaves nothing running) run against
//! each backend with a real counterpart started by the test: `local`;
//! `ssh` against Debian's OpenSSH server on 127.0.0.1 (its own host key,
//! a key-only login, in a private mount namespace so nothing outside the
//! scratch folder changes); `docker` through podman with an image the test
//! imports from a static busybox, podman's storage in the scratch folder.
//! Then each remote backend's errors: an unreachable host, a dead
//! connection re-established, a missing image, a removed container.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod backend_hosts;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use backend_hosts::{free_port, import_image, podman, run_ok, start_sshd, user, Sshd};

use hermes_runtime::{Profile, ToolContext};
use hermes_tools::Session;
use serde_json::{json, Value};

async fn call(ctx: &ToolContext, tool: &str, args: Value) -> Value {
    let out = hermes_tools::registry().dispatch(tool, args, ctx).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

async fn sh(ctx: &ToolContext, command: &str) -> Value {
    call(
        ctx,
        "terminal",
        json!({ "command": command, "timeout": 60 }),
    )
    .await
}

fn out(v: &Value) -> String {
    v["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output: {v}"))
        .trim_end()
        .to_string()
}

/// A profile whose `config.yaml` is `config` and `.env` is `env`.
fn profile(dir: &Path, config: &str, env: &str) -> Profile {
    let home = dir.join(".hermes");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.yaml"), config).unwrap();
    std::fs::write(home.join(".env"), env).unwrap();
    Profile::new(home)
}

/// How many processes on the machine the session's commands run on have
/// a command line starting with `needle` (asked through the backend
/// itself).
async fn count_on_machine(ctx: &ToolContext, needle: &str) -> usize {
    // `[x]yz` so the scan does not find its own command line.
    let (first, rest) = needle.split_at(1);
    let v = sh(
        ctx,
        &format!(
            "for f in /proc/[0-9]*/cmdline; do tr '\\000' ' ' < \"$f\"; echo; done 2>/dev/null \
             | grep -c '^[{first}]{rest}' || true"
        ),
    )
    .await;
    out(&v)
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {v}"))
}

/// The contract every backend keeps. `marker` makes the test's sleeps
/// its own.
async fn contract(session: &Session, marker: &str) {
    let ctx = session.context();

    // The session keeps its directory and exported variables.
    let v = sh(
        &ctx,
        "mkdir -p sub && cd sub && export HERMES_T=kept && LOCAL_T=no",
    )
    .await;
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = sh(
        &ctx,
        "basename \"$(pwd)\"; echo \"$HERMES_T/${LOCAL_T-unset}\"",
    )
    .await;
    assert_eq!(out(&v), "sub\nkept/unset", "{v}");
    let v = sh(&ctx, "unset HERMES_T; cd ..").await;
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = sh(&ctx, "echo \"${HERMES_T-gone}\"; ls -d sub").await;
    assert_eq!(out(&v), "gone\nsub", "{v}");
    // A failing command's exit code comes back as it is.
    let v = sh(&ctx, "exit 3").await;
    assert_eq!(v["exit_code"], 3, "{v}");

    // A background process: poll sees it run and its output; kill ends it
    // on the machine.
    let sleeper = format!("sleep {marker}1");
    let v = call(
        &ctx,
        "terminal",
        json!({"command": format!("echo started; {sleeper}"), "background": true}),
    )
    .await;
    let id = v["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    let polled = loop {
        let p = call(&ctx, "process", json!({"action": "poll", "session_id": id})).await;
        if p["output_preview"]
            .as_str()
            .unwrap_or("")
            .contains("started")
        {
            break p;
        }
        assert!(Instant::now() < deadline, "never saw its output: {p}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(polled["status"], "running", "{polled}");
    assert_eq!(
        polled["command"],
        format!("echo started; {sleeper}"),
        "{polled}"
    );
    assert_eq!(count_on_machine(&ctx, &sleeper).await, 1);
    let k = call(&ctx, "process", json!({"action": "kill", "session_id": id})).await;
    assert_eq!(k["status"], "killed", "{k}");
    assert_eq!(
        count_on_machine(&ctx, &sleeper).await,
        0,
        "kill left it running"
    );

    // Input reaches a background process on the machine.
    let v = call(
        &ctx,
        "terminal",
        json!({"command": "read line; echo \"got $line\"", "background": true}),
    )
    .await;
    let id = v["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    let w = call(
        &ctx,
        "process",
        json!({"action": "submit", "session_id": id, "data": "hello"}),
    )
    .await;
    assert_eq!(w["status"], "ok", "{w}");
    let w = call(
        &ctx,
        "process",
        json!({"action": "wait", "session_id": id, "timeout": 20}),
    )
    .await;
    assert_eq!(w["exit_code"], 0, "{w}");
    assert!(
        w["output"].as_str().unwrap_or("").contains("got hello"),
        "{w}"
    );

    // A foreground timeout ends the command on the machine, in time.
    let slow = format!("sleep {marker}4");
    let begun = Instant::now();
    let v = call(&ctx, "terminal", json!({"command": slow, "timeout": 2})).await;
    assert_eq!(v["exit_code"], 124, "{v}");
    assert!(begun.elapsed() < Duration::from_secs(30), "{v}");
    assert_eq!(
        count_on_machine(&ctx, &slow).await,
        0,
        "the timeout left it running"
    );

    // What a foreground command leaves running is ended with it.
    let left = format!("sleep {marker}2");
    let v = sh(&ctx, &format!("{left} & echo bye")).await;
    assert_eq!(out(&v), "bye", "{v}");
    assert_eq!(count_on_machine(&ctx, &left).await, 0, "left running: {v}");

    // Write, read, patch, search, on the machine the commands see.
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "notes/a.txt", "content": "alpha\nbeta\n"}),
    )
    .await;
    assert_eq!(v["bytes_written"], 11, "{v}");
    let v = sh(&ctx, "cat notes/a.txt").await;
    assert_eq!(out(&v), "alpha\nbeta", "{v}");
    let v = call(&ctx, "read_file", json!({"path": "notes/a.txt"})).await;
    assert!(
        v["content"].as_str().unwrap_or("").contains("2|beta"),
        "{v}"
    );
    let v = call(
        &ctx,
        "patch",
        json!({"path": "notes/a.txt", "old_string": "beta", "new_string": "gamma"}),
    )
    .await;
    assert_eq!(v["success"], true, "{v}");
    assert!(v["diff"].as_str().unwrap_or("").contains("+gamma"), "{v}");
    let v = sh(&ctx, "cat notes/a.txt").await;
    assert_eq!(out(&v), "alpha\ngamma", "{v}");
    let v = call(
        &ctx,
        "search_files",
        json!({"pattern": "gam+a", "path": "notes"}),
    )
    .await;
    let found = &v["matches"][0];
    assert_eq!(found["line"], 2, "{v}");
    assert!(
        found["path"].as_str().unwrap_or("").ends_with("a.txt"),
        "{v}"
    );
    // A V4A patch: update one file, add another.
    let v4a = "*** Begin Patch\n*** Update File: notes/a.txt\n alpha\n-gamma\n+delta\n\
               *** Add File: notes/b.txt\n+bee\n*** End Patch";
    let v = call(&ctx, "patch", json!({"mode": "patch", "patch": v4a})).await;
    assert_eq!(v["success"], true, "{v}");
    let v = sh(&ctx, "cat notes/a.txt notes/b.txt").await;
    assert_eq!(out(&v), "alpha\ndelta\nbee", "{v}");
    let v = call(
        &ctx,
        "patch",
        json!({"path": "notes/a.txt", "old_string": "delta", "new_string": "gamma"}),
    )
    .await;
    assert_eq!(v["success"], true, "{v}");
    let v = call(
        &ctx,
        "search_files",
        json!({"pattern": "*.txt", "target": "files"}),
    )
    .await;
    assert!(v["files"].to_string().contains("a.txt"), "{v}");
    // A file made by a command is read by read_file: the same machine.
    sh(&ctx, "printf 'from the shell\\n' > made.txt").await;
    let v = call(&ctx, "read_file", json!({"path": "made.txt"})).await;
    assert!(
        v["content"]
            .as_str()
            .unwrap_or("")
            .contains("1|from the shell"),
        "{v}"
    );

    // The guards, on the machine's paths.
    let v = call(
        &ctx,
        "write_file",
        json!({"path": "/etc/hermes-backend-test", "content": "x"}),
    )
    .await;
    assert!(v["error"].as_str().unwrap_or("").contains("Refused"), "{v}");
    sh(&ctx, "echo SECRET=1 > .env").await;
    let v = call(&ctx, "read_file", json!({"path": ".env"})).await;
    assert!(v["error"].as_str().unwrap_or("").contains("Refused"), "{v}");
}

/// After the session's end nothing it started runs: checked on the
/// machine by `check` (a fresh look that does not use the session).
/// `survives_command`: whether a `setsid` process outlives its command on
/// this backend until the session ends (`Some(false)` on `local`, whose
/// cgroup per command finds it; `Some(true)` on `ssh`; `None` on
/// `docker`, where podman may end an `exec`'s leftovers itself, and the
/// container goes whole).
async fn end_leaves_nothing(
    session: Session,
    marker: &str,
    survives_command: Option<bool>,
) -> String {
    let ctx = session.context();
    let sleeper = format!("sleep {marker}3");
    let v = call(
        &ctx,
        "terminal",
        json!({"command": sleeper, "background": true}),
    )
    .await;
    assert!(v["session_id"].is_string(), "{v}");
    // One that left the command's process group (`setsid`), which only
    // the session's end finds. The command ends only once it has left (its
    // session id is its pid; waited for at most 10 s): ended before, the
    // command's own teardown would take it as one of its own.
    let escaped = format!("sleep {marker}5");
    let v = sh(
        &ctx,
        &format!(
            "setsid {escaped} </dev/null >/dev/null 2>&1 & p=$!; \
             for i in $(seq 200); do \
             read -r _ _ _ _ _ sid _ < /proc/$p/stat && [ \"$sid\" = \"$p\" ] && break; \
             sleep 0.05; done; echo left"
        ),
    )
    .await;
    assert_eq!(out(&v), "left", "{v}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(survives) = survives_command {
        let running = count_on_machine(&ctx, &escaped).await;
        if running == usize::from(survives) {
            break;
        }
        assert!(Instant::now() < deadline, "{escaped}: {running} running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while count_on_machine(&ctx, &sleeper).await != 1 {
        assert!(
            Instant::now() < deadline,
            "the background process never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    session.end();
    assert_eq!(
        local_count(&escaped),
        0,
        "the session's end left {escaped} running"
    );
    sleeper
}

/// Processes of this machine whose command line starts with `needle`.
fn local_count(needle: &str) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if text.starts_with(needle) {
                n += 1;
            }
        }
    }
    n
}

fn marker() -> String {
    format!("30{}", std::process::id() % 1000 + 1000)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_backend_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let p = profile(dir.path(), "terminal:\n  backend: local\n", "");
    let m = format!("{}1", marker());
    let session = Session::new(p.clone(), &work);
    contract(&session, &m).await;
    let gone = end_leaves_nothing(Session::new(p, &work), &m, Some(false)).await;
    assert_eq!(local_count(&gone), 0);
}

// ---- ssh ----

fn ssh_config(sshd: &Sshd, port: u16, cwd: &Path) -> String {
    format!(
        "terminal:\n  backend: ssh\n  ssh_host: 127.0.0.1\n  ssh_port: {port}\n  ssh_user: {}\n  \
         ssh_key: {}\n  cwd: {}\n",
        user(),
        sshd.key.display(),
        cwd.display()
    )
}

/// The sshd processes serving connections (children of the daemon).
fn sshd_connections(sshd: &Sshd) -> Vec<i32> {
    // The daemon is the child of `unshare` (which exec'd sh, then sshd):
    // the same pid.
    let daemon = sshd.child.id() as i32;
    let mut kids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a.to_string()) else {
            continue;
        };
        let ppid: i32 = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == daemon {
            if let Ok(pid) = entry.file_name().to_string_lossy().parse() {
                kids.push(pid);
            }
        }
    }
    kids
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ssh_backend_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let sshd = start_sshd(dir.path());
    let remote = dir.path().join("remote");
    std::fs::create_dir_all(&remote).unwrap();
    let local = dir.path().join("local");
    std::fs::create_dir_all(&local).unwrap();
    let p = profile(dir.path(), &ssh_config(&sshd, sshd.port, &remote), "");
    let m = format!("{}2", marker());
    let session = Session::new(p.clone(), &local);
    contract(&session, &m).await;
    // The files are where the commands ran: the remote folder, not the
    // local one.
    assert_eq!(
        std::fs::read_to_string(remote.join("notes/a.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    assert!(!local.join("notes").exists());

    // A session whose first call is a file tool resolves a relative path
    // in the session's directory there too.
    let first = Session::new(p.clone(), &local);
    let v = call(
        &first.context(),
        "write_file",
        json!({"path": "first.txt", "content": "one\n"}),
    )
    .await;
    assert_eq!(v["created"], true, "{v}");
    assert_eq!(
        std::fs::read_to_string(remote.join("first.txt")).unwrap(),
        "one\n"
    );
    first.end();

    // A dead connection is made again on the next call.
    let ctx = session.context();
    let before = sshd_connections(&sshd);
    assert!(!before.is_empty(), "no connection to sshd");
    for pid in &before {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while sshd_connections(&sshd).iter().any(|p| before.contains(p)) {
        assert!(Instant::now() < deadline, "the connection did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    let v = sh(&ctx, "echo again; basename \"$(pwd)\"").await;
    assert_eq!(
        out(&v),
        format!("again\n{}", remote.file_name().unwrap().to_string_lossy()),
        "{v}"
    );
    drop(session);

    let gone = end_leaves_nothing(Session::new(p, &local), &m, Some(true)).await;
    assert_eq!(
        local_count(&gone),
        0,
        "the session's end left {gone} running"
    );
    // The session's connection closed with it (the first session's drop
    // ran on a blocking thread: wait for it).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sshd_connections(&sshd).is_empty() {
        assert!(
            Instant::now() < deadline,
            "a connection outlived its session"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_ssh_host_is_a_clear_error_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let sshd = start_sshd(dir.path());
    let closed = free_port();
    let p = profile(dir.path(), &ssh_config(&sshd, closed, dir.path()), "");
    let session = Session::new(p, dir.path());
    let begun = Instant::now();
    let v = sh(&session.context(), "true").await;
    let err = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        err.contains("ssh backend") && err.contains("ssh_host"),
        "{v}"
    );
    assert!(begun.elapsed() < Duration::from_secs(60), "{v}");
    let v = call(&session.context(), "read_file", json!({"path": "x"})).await;
    assert!(
        v["error"].as_str().unwrap_or("").contains("ssh backend"),
        "{v}"
    );
}

// ---- docker (podman) ----

fn containers(podman: &Path) -> String {
    let out = Command::new(podman)
        .args(["ps", "-a", "--format", "{{.Names}}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn docker_config(image: &str) -> String {
    format!(
        "terminal:\n  backend: docker\n  docker_image: {image}\n  docker_mount_cwd_to_workspace: true\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_docker_backend_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let podman = podman(dir.path());
    let image = import_image(&podman, dir.path());
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let env = format!("HERMES_DOCKER_BINARY={}\n", podman.display());
    let p = profile(dir.path(), &docker_config(&image), &env);
    let m = format!("{}3", marker());
    let session = Session::new(p.clone(), &work);
    contract(&session, &m).await;
    // The working directory is mounted at /workspace, as the reference does.
    assert_eq!(
        std::fs::read_to_string(work.join("notes/a.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    let v = sh(&session.context(), "pwd").await;
    assert_eq!(out(&v), "/workspace", "{v}");

    // A container removed under the session: a clear error, then a new one,
    // which starts where a new session does (the folder the session was in
    // went with the old container).
    let v = sh(&session.context(), "mkdir -p /tmp/inside && cd /tmp/inside").await;
    assert_eq!(v["exit_code"], 0, "{v}");
    let name = containers(&podman);
    assert!(name.starts_with("hermes-"), "{name}");
    run_ok(Command::new(&podman).args(["rm", "-f", &name]));
    let v = sh(&session.context(), "echo hi").await;
    let err = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        err.contains("docker backend") && err.contains("next call"),
        "{v}"
    );
    let v = sh(&session.context(), "echo hi; pwd").await;
    assert_eq!(out(&v), "hi\n/workspace", "{v}");
    session.end();
    assert_eq!(
        containers(&podman),
        "",
        "the container outlived its session"
    );

    let _ = end_leaves_nothing(Session::new(p, &work), &m, None).await;
    assert_eq!(
        containers(&podman),
        "",
        "the container outlived its session"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_image_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let podman = podman(dir.path());
    let env = format!("HERMES_DOCKER_BINARY={}\n", podman.display());
    let p = profile(
        dir.path(),
        &docker_config("localhost/hermes-no-such-image:none"),
        &env,
    );
    let session = Session::new(p, dir.path());
    let begun = Instant::now();
    let v = sh(&session.context(), "true").await;
    let err = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        err.contains("docker backend") && err.contains("docker_image"),
        "{v}"
    );
    assert!(begun.elapsed() < Duration::from_secs(60), "{v}");
    assert_eq!(containers(&podman), "");
}

#[tokio::test]
async fn an_unknown_backend_names_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path(), "terminal:\n  backend: modal\n", "");
    let session = Session::new(p, dir.path());
    let v = sh(&session.context(), "true").await;
    let err = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        err.contains("modal") && err.contains("local, ssh, docker"),
        "{v}"
    );
}
