//! The command sandbox on the real kernel (Landlock, seccomp, namespaces),
//! through the `hermes-tools` binary and through dispatch: what
//! `workspace-write` lets a root command write (the working directory) and
//! refuses (`~/.ssh`, the profile's files, `/etc`) with the rule named;
//! the network modes against a listener of the test's own; `read-only`
//! and `full`; a kernel without Landlock (the test knob); one escalation
//! through the approval callback; and two sessions of the HTTP server that
//! cannot reach each other's resident shells.
//!
//! Writes aimed at system paths run in a private mount namespace (`unshare
//! -m`) where `/etc` is an overlay whose upper layer is a scratch tmpfs and
//! the home is a scratch folder: a failing sandbox writes to scratch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_runtime::context::{ApprovalAnswer, ApprovalCallback, ApprovalRequest};
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `hermes-tools --profile PROFILE call terminal ARGS` in `cwd`, with
/// `env` added; the answer.
fn call_in(cwd: &Path, profile: &Path, args: Value, env: &[(&str, &str)]) -> Value {
    let out = Command::new(BIN)
        .args(["--yolo", "--profile"])
        .arg(profile)
        .args(["call", "terminal", &args.to_string()])
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A scratch working directory and profile with `config` as config.yaml.
fn scratch(config: &str) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let profile = dir.path().join("profile");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(profile.join("config.yaml"), config).unwrap();
    (dir, work, profile)
}

fn output(v: &Value) -> &str {
    v["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output: {v}"))
}

fn note(v: &Value) -> &str {
    v["note"].as_str().unwrap_or("")
}

#[test]
fn workspace_write_refuses_ssh_the_profile_and_etc_even_as_root() {
    if !is_root() {
        eprintln!("skipped: needs root for the private mount namespace of the scratch /etc");
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir(scratch.path().join("mnt")).unwrap();
    let home = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .dir;
    let command = "echo ok > in-cwd.txt && cat in-cwd.txt; \
                   echo key >> .ssh/authorized_keys; \
                   echo x > /etc/hermes-sandbox-probe; \
                   echo bad > prof/config.yaml; \
                   cp /dev/null prof/.env; \
                   mv prof prof-moved; \
                   exit 1";
    // Inside the namespace only: a tmpfs for every scratch layer, /etc as
    // an overlay over it, the home a scratch folder with no `.ssh` and none
    // of the other credential files: the sandbox makes `.ssh` (empty,
    // read-only to the command), and the home stays writable.
    let script = r#"
        set -e
        T="$1"; BIN="$2"; ARGS="$3"; H="$4"
        mount -t tmpfs tmpfs "$T/mnt"
        mkdir -p "$T/mnt/up" "$T/mnt/work" "$T/mnt/home/prof"
        printf 'terminal:\n  sandbox: workspace-write\n' > "$T/mnt/home/prof/config.yaml"
        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/mnt/up,workdir=$T/mnt/work" /etc
        mount --bind "$T/mnt/home" "$H"
        cd "$H"
        set +e
        HOME="$H" "$BIN" --yolo --profile "$H/prof" call terminal "$ARGS"
        echo
        echo "=== etc: $(ls -A "$T/mnt/up")"
        echo "=== ssh: $(ls -A "$H/.ssh")"
        echo "=== home: $(ls -A "$H" | tr '\n' ' ')"
        echo "=== config: $(cat "$H/prof/config.yaml" | tr '\n' ' ')"
        echo "=== env: $(ls -A "$H/prof" | tr '\n' ' ')"
    "#;
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
        .arg(scratch.path())
        .arg(BIN)
        .arg(json!({ "command": command }).to_string())
        .arg(&home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let (answer, after) = text
        .split_once("\n=== ")
        .unwrap_or_else(|| panic!("{text}\n{}", String::from_utf8_lossy(&out.stderr)));
    let v: Value = serde_json::from_str(answer.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    // The working directory is writable.
    assert!(output(&v).starts_with("ok\n"), "{v}");
    assert!(after.contains("in-cwd.txt"), "{after}");
    // Nothing reached /etc, ~/.ssh or the profile.
    assert!(after.contains("etc: \n"), "{after}");
    assert!(after.contains("ssh: \n"), "{after}");
    assert!(
        after.contains("config: terminal:   sandbox: workspace-write"),
        "{after}"
    );
    assert!(!after.contains(".env"), "{after}");
    assert!(
        after.contains(" prof "),
        "the profile was not moved away: {after}"
    );
    assert!(!after.contains("prof-moved"), "{after}");
    // The model reads which path and which rule.
    let note = note(&v);
    assert!(note.starts_with("sandbox: "), "{v}");
    for (path, rule) in [
        (".ssh/authorized_keys", "SSH"),
        ("/etc/hermes-sandbox-probe", "system"),
        ("prof/config.yaml", "config"),
        ("prof/.env", "secrets"),
    ] {
        let at = note
            .find(path)
            .unwrap_or_else(|| panic!("{path} not named: {note}"));
        let clause = note[at..].split(';').next().unwrap();
        assert!(
            clause.contains("protected") && clause.contains(rule),
            "{path}: {clause}"
        );
    }
}

#[test]
fn read_only_refuses_a_write_in_the_working_directory_and_full_allows_it() {
    let (_dir, work, profile) = scratch("terminal:\n  sandbox: read-only\n");
    let v = call_in(
        &work,
        &profile,
        json!({"command": "echo x > f && echo wrote"}),
        &[],
    );
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(!work.join("f").exists(), "{v}");
    assert!(note(&v).contains("read-only"), "{v}");
    // /dev/null stays writable, and reading works.
    let v = call_in(
        &work,
        &profile,
        json!({"command": "echo x > /dev/null && ls / >/dev/null && echo fine"}),
        &[],
    );
    assert_eq!(output(&v).trim(), "fine", "{v}");

    std::fs::write(profile.join("config.yaml"), "terminal:\n  sandbox: full\n").unwrap();
    let v = call_in(
        &work,
        &profile,
        json!({"command": "echo x > f && echo wrote"}),
        &[],
    );
    assert_eq!(output(&v).trim(), "wrote", "{v}");
    assert!(work.join("f").exists());
}

/// A command that reports whether it reached `port` on the machine's
/// loopback, whether a loopback server of its own answers it, and whether
/// a Unix socket works.
/// The capability bounding set a command of `config` runs with, from its
/// own `/proc/self/status`.
fn bounding_set(config: &str) -> u64 {
    let (_dir, work, profile) = scratch(config);
    let v = call_in(
        &work,
        &profile,
        json!({"command": "grep CapBnd /proc/self/status"}),
        &[],
    );
    let line = output(&v).trim().to_string();
    let hex = line
        .strip_prefix("CapBnd:")
        .unwrap_or_else(|| panic!("{v}"))
        .trim();
    u64::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("{e}: {v}"))
}

#[test]
fn a_sandboxed_root_command_has_none_of_the_machines_capabilities() {
    if !is_root() {
        eprintln!("skipped: a command of an agent that is not root has no capability to drop");
        return;
    }
    // Bits of capability(7): SYS_MODULE 16, SYS_RAWIO 17, SYS_ADMIN 21,
    // SYS_BOOT 22, SYS_TIME 25, NET_ADMIN 12; CHOWN 0 and DAC_OVERRIDE 1
    // are what root commands use every day.
    let machine = [12u32, 16, 17, 21, 22, 25];
    let everyday = [0u32, 1];
    let sandboxed = bounding_set("terminal:\n  sandbox: workspace-write\n");
    for bit in machine {
        assert_eq!(sandboxed & (1 << bit), 0, "capability {bit}: {sandboxed:x}");
    }
    for bit in everyday {
        assert_ne!(sandboxed & (1 << bit), 0, "capability {bit}: {sandboxed:x}");
    }
    // `full` is the agent's own authority (the contrast the test rests on).
    let full = bounding_set("terminal:\n  sandbox: full\n");
    assert_ne!(full & (1 << 16), 0, "{full:x}");
}

fn network_probe(port: u16) -> String {
    format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo host-reached || echo host-unreachable; \
         python3 -c '\
import socket
try:
    s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
    c = socket.create_connection(s.getsockname(), timeout=5); print(\"own-loopback\")
except OSError as e:
    print(\"no-own-loopback\", e)
u = socket.socket(socket.AF_UNIX); u.bind(\"u.sock\"); u.listen(1)
v = socket.socket(socket.AF_UNIX); v.connect(\"u.sock\"); print(\"unix-works\")
'"
    )
}

fn accepted(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    listener.accept().is_ok()
}

#[test]
fn network_off_loopback_and_on() {
    let cases = [
        ("off", "host-unreachable", "no-own-loopback", false),
        ("loopback", "host-unreachable", "own-loopback", false),
        ("on", "host-reached", "own-loopback", true),
    ];
    for (mode, host, own, reached) in cases {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (_dir, work, profile) = scratch(&format!("terminal:\n  sandbox_network: \"{mode}\"\n"));
        let v = call_in(
            &work,
            &profile,
            json!({"command": network_probe(port)}),
            &[],
        );
        let out = output(&v);
        assert!(out.contains(host), "{mode}: {v}");
        assert!(out.lines().any(|l| l.starts_with(own)), "{mode}: {v}");
        assert!(out.contains("unix-works"), "{mode}: {v}");
        assert_eq!(accepted(&listener), reached, "{mode}: {v}");
    }
}

#[test]
fn without_landlock_a_sandboxed_mode_refuses_unless_the_fallback_allows() {
    let knob = [(hermes_procs::sandbox::FORCE_NO_LANDLOCK_VAR, "1")];
    let (_dir, work, profile) = scratch("terminal:\n  sandbox: workspace-write\n");
    let v = call_in(&work, &profile, json!({"command": "touch ran"}), &knob);
    let error = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        error.contains("Landlock") && error.contains("sandbox_fallback"),
        "{v}"
    );
    assert!(!work.join("ran").exists());

    std::fs::write(
        profile.join("config.yaml"),
        "terminal:\n  sandbox_fallback: unsandboxed\n",
    )
    .unwrap();
    let v = call_in(&work, &profile, json!({"command": "touch ran"}), &knob);
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(work.join("ran").exists());
    assert!(note(&v).contains("without the sandbox"), "{v}");
}

#[test]
fn with_approvals_off_a_refused_command_is_not_escalated() {
    let _ = hermes_procs::sandbox::set_helper_program(BIN);
    let (_dir, work, profile) =
        scratch("terminal:\n  sandbox: read-only\napprovals:\n  mode: \"off\"\n");
    let asked = Arc::new(Mutex::new(0));
    let count = asked.clone();
    let cb: ApprovalCallback = Arc::new(move |_req: ApprovalRequest| {
        *count.lock().unwrap() += 1;
        Box::pin(async { ApprovalAnswer::Once })
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = ToolContext::new(Profile::new(&profile), &work)
        .with_task_id("t-off")
        .with_approval_callback(cb);
    let out = rt.block_on(hermes_tools::registry().dispatch(
        "terminal",
        json!({ "command": "echo x > f" }),
        &ctx,
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(!work.join("f").exists(), "{v}");
    assert!(note(&v).contains("read-only"), "{v}");
    assert_eq!(
        *asked.lock().unwrap(),
        0,
        "never asked to leave the sandbox"
    );
}

#[test]
fn one_escalation_runs_one_command_outside_and_the_next_is_sandboxed_again() {
    let _ = hermes_procs::sandbox::set_helper_program(BIN);
    let (_dir, work, profile) = scratch("terminal:\n  sandbox: read-only\n");
    let asked: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
    let answers = Arc::new(Mutex::new(vec![ApprovalAnswer::Deny, ApprovalAnswer::Once]));
    let (log, queue) = (asked.clone(), answers.clone());
    let cb: ApprovalCallback = Arc::new(move |req: ApprovalRequest| {
        log.lock().unwrap().push(req);
        let answer = queue.lock().unwrap().pop().unwrap_or(ApprovalAnswer::Deny);
        Box::pin(async move { answer })
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ctx = ToolContext::new(Profile::new(&profile), &work)
        .with_task_id("t-escalate")
        .with_yolo(false)
        .with_approval_callback(cb);
    let run = |command: &str| -> Value {
        let out = rt.block_on(hermes_tools::registry().dispatch(
            "terminal",
            json!({ "command": command }),
            &ctx,
        ));
        serde_json::from_str(&out).unwrap()
    };
    // Approved once: it ran again, outside.
    let v = run("echo one > a.txt");
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(
        std::fs::read_to_string(work.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(note(&v).contains("approved"), "{v}");
    // The next one is sandboxed again, and a refusal leaves its result.
    let v = run("echo two > b.txt");
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(!work.join("b.txt").exists(), "{v}");
    assert!(note(&v).contains("not run outside the sandbox"), "{v}");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2, "asked once per refused command");
    for (req, command) in asked.iter().zip(["a.txt", "b.txt"]) {
        assert_eq!(req.key, hermes_procs::sandbox::ESCALATION_KEY);
        assert!(req.detail.contains(command), "{:?}", req.detail);
        assert!(
            req.reason.contains("protected paths"),
            "says what it lifts: {}",
            req.reason
        );
    }
}

mod http_sessions {
    use super::*;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;
    use tokio::io::{AsyncBufReadExt, BufReader};

    const TOKEN: &str = "sandbox-test-token";

    async fn call(
        client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
        command: &str,
    ) -> Value {
        let Value::Object(args) = json!({ "command": command }) else {
            unreachable!()
        };
        let result = client
            .call_tool(CallToolRequestParams::new("terminal").with_arguments(args))
            .await
            .unwrap();
        let text: String = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        serde_json::from_str(&text).unwrap_or_else(|_| json!({ "output": text }))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_session_cannot_reach_another_sessions_shell_files() {
        two_sessions("", true).await;
    }

    /// The issue's attack without the sandbox: a file renamed over another
    /// session's resident script is never read (the shell reads the one it
    /// opened at its start).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unsandboxed_a_script_renamed_over_is_never_run() {
        two_sessions("terminal:\n  sandbox: full\n", false).await;
    }

    async fn two_sessions(config: &str, sandboxed: bool) {
        let dir = tempfile::tempdir().unwrap();
        let profile = tempfile::tempdir().unwrap();
        std::fs::write(profile.path().join("config.yaml"), config).unwrap();
        let mut child = tokio::process::Command::new(BIN)
            .args([
                "--yolo",
                "serve",
                "--mcp",
                "--http",
                "127.0.0.1:0",
                "--profile",
            ])
            .arg(profile.path())
            .env("HERMES_MCP_TOKEN", TOKEN)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let server_pid = child.id().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let line = lines.next_line().await.unwrap().expect("an address");
                if let Some(at) = line.find("http://") {
                    break line[at..].split_whitespace().next().unwrap().to_string();
                }
            }
        })
        .await
        .unwrap();
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        hermes_mcp_client::install_tls_provider();
        let connect = || async {
            let transport = StreamableHttpClientTransport::with_client(
                reqwest::Client::builder().no_proxy().build().unwrap(),
                StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(TOKEN),
            );
            ().serve(transport).await.unwrap()
        };
        let (a, b) = (connect().await, connect().await);
        tokio::time::timeout(Duration::from_secs(60), async {
            let v = call(&b, "export B_SECRET=bee; echo b-ready").await;
            assert_eq!(output(&v).trim(), "b-ready", "{v}");
            // Session A goes after every file of the server's private folder.
            let attack = format!(
                "for P in /dev/shm/hermes-terminal-{server_pid}-* /tmp/hermes-terminal-{server_pid}-*; do \
                   [ -d \"$P\" ] || continue; echo \"seen: $(ls -A \"$P\" | wc -l)\"; \
                   for d in \"$P\"/*/; do \
                     echo 'echo pwned' > \"$d/script.new\" && mv -f \"$d/script.new\" \"$d/script\" && echo \"replaced $d\"; \
                     echo 'B_SECRET=pwned' > \"$d/state\"; \
                   done; \
                 done; echo a-done"
            );
            let v = call(&a, &attack).await;
            let out = output(&v);
            assert!(out.contains("a-done"), "{v}");
            if sandboxed {
                // It sees one folder: its own shell's (its command runs there).
                assert!(out.contains("seen: 1"), "{v}");
            } else {
                // It sees and replaces B's script too.
                assert!(out.contains("seen: 2") && out.matches("replaced").count() == 2, "{v}");
            }
            // B's commands, exports and output are B's.
            let v = call(&b, "echo \"[$B_SECRET]\"").await;
            assert_eq!(output(&v).trim(), "[bee]", "{v}");
            let v = call(&b, "echo again").await;
            assert_eq!(output(&v).trim(), "again", "{v}");
        })
        .await
        .expect("in time");
        a.cancel().await.unwrap();
        b.cancel().await.unwrap();
        child.kill().await.unwrap();
    }
}

#[test]
fn as_a_user_the_profile_inside_the_workspace_is_protected_through_a_user_namespace() {
    if !is_root() || which("setpriv").is_none() {
        eprintln!("skipped: needs root to start the binary as another user (setpriv)");
        return;
    }
    // A scratch workspace of `nobody`, holding the profile.
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let profile = work.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(
        profile.join("config.yaml"),
        "terminal:\n  sandbox: workspace-write\n",
    )
    .unwrap();
    for p in [dir.path(), &work, &profile, &profile.join("config.yaml")] {
        nix::unistd::chown(p, Some(65534.into()), Some(65534.into())).unwrap();
    }
    let command = "echo ok > mine.txt && cat mine.txt; echo bad > profile/config.yaml; exit 1";
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(BIN)
        .args(["--yolo", "--profile"])
        .arg(&profile)
        .args([
            "call",
            "terminal",
            &json!({ "command": command }).to_string(),
        ])
        .env("HOME", &work)
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    if v["output"]
        .as_str()
        .is_some_and(|o| o.contains("cannot make a private mount"))
    {
        eprintln!("skipped: this kernel gives users no user namespace: {v}");
        return;
    }
    assert!(output(&v).starts_with("ok\n"), "{v}");
    assert_eq!(
        std::fs::read_to_string(profile.join("config.yaml")).unwrap(),
        "terminal:\n  sandbox: workspace-write\n",
        "{v}"
    );
    assert!(note(&v).contains("protected"), "{v}");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// `hermes-tools --profile PROFILE config ARGS`: its stdout.
fn config(profile: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--profile")
        .arg(profile)
        .arg("config")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn shown_line<'a>(show: &'a str, key: &str) -> &'a str {
    show.lines()
        .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with("  ")))
        .unwrap_or_else(|| panic!("no {key} in {show}"))
}

#[test]
fn config_shows_and_checks_the_sandbox_keys() {
    let (_dir, _work, profile) = scratch("");
    let show = config(&profile, &["show"]);
    for (key, value) in [
        ("terminal.sandbox", "workspace-write"),
        ("terminal.sandbox_network", "on"),
        ("terminal.sandbox_writable_roots", "[]"),
        ("terminal.sandbox_fallback", "refuse"),
    ] {
        let line = shown_line(&show, key);
        assert!(
            line.contains(value) && line.ends_with("(default)"),
            "{line}"
        );
    }
    std::fs::write(
        profile.join("config.yaml"),
        "terminal:\n  sandbox: danger-full-access\n  sandbox_network: off\n  \
         sandbox_writable_roots: [/srv/data, relative/dir]\n  sandbox_fallback: maybe\n",
    )
    .unwrap();
    let show = config(&profile, &["show"]);
    assert!(
        shown_line(&show, "terminal.sandbox").contains("full"),
        "{show}"
    );
    // A bare `off` is YAML's false: the network is off.
    assert!(
        shown_line(&show, "terminal.sandbox_network").contains("off"),
        "{show}"
    );
    assert!(
        shown_line(&show, "terminal.sandbox_writable_roots").contains("[/srv/data]"),
        "{show}"
    );
    let check = config(&profile, &["check"]);
    assert!(
        check.contains("terminal.sandbox_writable_roots[1]"),
        "{check}"
    );
    assert!(check.contains("terminal.sandbox_fallback"), "{check}");
}

#[test]
fn with_the_profile_as_the_workspace_only_its_policy_files_are_read_only() {
    // The profile folder is the workspace: its config.yaml is protected,
    // the rest of it is writable.
    let (_dir, _work, profile) = scratch("terminal:\n  sandbox: workspace-write\n");
    let v = call_in(
        &profile,
        &profile,
        json!({"command": "echo x > other.txt; echo bad > config.yaml; exit 1"}),
        &[],
    );
    assert!(profile.join("other.txt").exists(), "{v}");
    assert_eq!(
        std::fs::read_to_string(profile.join("config.yaml")).unwrap(),
        "terminal:\n  sandbox: workspace-write\n",
        "{v}"
    );
    assert!(note(&v).contains("protected"), "{v}");
}
