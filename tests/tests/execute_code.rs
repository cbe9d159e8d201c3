//! `execute_code` through the real registry's dispatch, with the system's
//! `python3`: a script that reads, searches and patches a file through the
//! generated `hermes_tools` module; the call limit, the timeout and the
//! output cap of `code_execution`; a tool outside the allowed set; a
//! script that tries the socket of another session's live execution; and
//! where each `code_execution.mode` runs a script, with which interpreter.
//! Needs the `hermes-tools` binary (the sandbox helper) built first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

struct Scratch {
    dir: tempfile::TempDir,
    home: std::path::PathBuf,
}

impl Scratch {
    /// A profile with `config` as its `config.yaml` and a workspace.
    fn new(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".hermes");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        std::fs::write(home.join(".env"), "TERMINAL_KILL_GRACE_SECONDS=0.3\n").unwrap();
        std::fs::write(home.join("config.yaml"), config).unwrap();
        Scratch { dir, home }
    }

    fn work(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }

    fn ctx(&self, session: &str) -> ToolContext {
        ToolContext::new(Profile::new(&self.home), self.work())
            .with_session_id(session)
            .with_task_id(session)
    }

    async fn run(&self, session: &str, code: &str) -> Value {
        run_in(&self.ctx(session), code).await
    }
}

async fn run_in(ctx: &ToolContext, code: &str) -> Value {
    let out = hermes_tools::registry()
        .dispatch("execute_code", json!({ "code": code }), ctx)
        .await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn output(answer: &Value) -> &str {
    answer["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output: {answer}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_reads_searches_and_patches_through_the_tools() {
    let s = Scratch::new("");
    let file = s.work().join("app.py");
    std::fs::write(
        &file,
        "def greet():\n    return 'hello'\n\nGREETING = 'hello'\n",
    )
    .unwrap();
    let code = r#"
import json
from hermes_tools import read_file, search_files, patch, terminal, ToolError

try:
    terminal("sleep 30", background=True)
    background = "started"
except ToolError as e:
    background = str(e)
page = read_file("app.py")
found = search_files("hello", path=".", file_glob="*.py")
done = patch(path="app.py", old_string="return 'hello'", new_string="return 'goodbye'")
print(json.dumps({
    "read_has_def": "def greet" in page["content"],
    "found": found,
    "patched": "error" not in done,
    "background": background,
}))
"#;
    let answer = s.run("s1", code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(answer["tool_calls_made"], 3, "{answer}");
    let printed: Value = serde_json::from_str(output(&answer).trim()).unwrap();
    assert_eq!(printed["read_has_def"], true, "{printed}");
    assert_eq!(printed["patched"], true, "{printed}");
    assert!(
        printed["background"]
            .as_str()
            .unwrap_or_default()
            .contains("foreground"),
        "a script starts no background process: {printed}"
    );
    assert!(
        printed["found"].to_string().contains("app.py"),
        "search found the file: {printed}"
    );
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.contains("return 'goodbye'"), "{now}");
    assert!(now.contains("GREETING = 'hello'"), "one place only: {now}");
    // Only stdout returns; nothing on stderr, no error.
    assert!(answer.get("error").is_none(), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_limit_raises_in_the_script() {
    let s = Scratch::new("code_execution:\n  max_tool_calls: 3\n");
    std::fs::write(s.work().join("a.txt"), "alpha\n").unwrap();
    let code = r#"
from hermes_tools import read_file, ToolError
ok = 0
message = ""
for i in range(10):
    try:
        read_file("a.txt", offset=1 + (i % 2))
        ok += 1
    except ToolError as e:
        message = str(e)
        break
print(ok)
print(message)
"#;
    let answer = s.run("s1", code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(answer["tool_calls_made"], 3, "{answer}");
    let out = output(&answer);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("3"), "{out}");
    assert!(
        lines.next().unwrap_or_default().contains("max_tool_calls"),
        "the refusal names the setting: {out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_past_its_timeout_is_terminated() {
    let s = Scratch::new("code_execution:\n  timeout: 2\n");
    let pid_file = s.work().join("pid");
    let code = format!(
        "import os, time\nprint('started', flush=True)\nopen({:?}, 'w').write(str(os.getpid()))\ntime.sleep(60)\nprint('never')\n",
        pid_file.display().to_string()
    );
    let began = Instant::now();
    let answer = s.run("s1", &code).await;
    let took = began.elapsed();
    assert_eq!(answer["status"], "timeout", "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap_or_default()
            .contains("2 seconds"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let out = output(&answer);
    assert!(out.contains("started") && !out.contains("never"), "{out}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || hermes_procs::scan::read(pid).is_none_or(|p| !p.is_live()),
        "the script's python ({pid}) still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdout_past_the_cap_keeps_its_start_and_end() {
    let s = Scratch::new("code_execution:\n  max_stdout_bytes: 1000\n");
    let code = "import sys\nsys.stdout.write('BEGIN' + 'x' * 200000 + 'END\\n')\nsys.stderr.write('noise on stderr\\n')\n";
    let answer = s.run("s1", code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    let out = output(&answer);
    assert!(out.len() < 2_000, "{} bytes came back", out.len());
    assert!(
        out.starts_with("BEGIN") && out.trim_end().ends_with("END"),
        "{out}"
    );
    assert!(out.contains("TRUNCATED"), "the cut is marked: {out}");
    // stderr is not the model's on success.
    assert!(!answer.to_string().contains("noise on stderr"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_outside_the_allowed_set_raise_in_the_script() {
    let s = Scratch::new("code_execution:\n  allowed_tools: [read_file, execute_code]\n");
    std::fs::write(s.work().join("a.txt"), "alpha\n").unwrap();
    let code = r#"
from hermes_tools import memory, execute_code, read_file, skill_view, ToolError
for name, call in [("memory", lambda: memory(action="add", target="memory", content="from a script")),
                   ("execute_code", lambda: execute_code(code="print(1)")),
                   ("skill_view", lambda: skill_view(name="some-skill"))]:
    try:
        call()
        print(name, "ran")
    except ToolError as e:
        print(name, "refused:", e)
print("read", "alpha" in read_file("a.txt")["content"])
raise ToolError("uncaught on purpose")
"#;
    let answer = s.run("s1", code).await;
    let out = output(&answer);
    assert!(
        out.contains("memory refused:") && out.contains("allowed_tools"),
        "{out}"
    );
    // Never callable, even when the configuration lists it.
    assert!(out.contains("execute_code refused:"), "{out}");
    // A parameter may be called `name` (call_tool's own is positional).
    assert!(out.contains("skill_view refused:"), "{out}");
    assert!(out.contains("read True"), "{out}");
    assert_eq!(answer["tool_calls_made"], 1, "{answer}");
    // An uncaught exception: a failed script, with its stderr's tail.
    assert_eq!(answer["status"], "error", "{answer}");
    let stderr = answer["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("uncaught on purpose"), "{answer}");
    let memories = s.home.join("memories");
    let wrote = std::fs::read_dir(&memories)
        .map(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path())
                    .unwrap_or_default()
                    .contains("from a script")
            })
        })
        .unwrap_or(false);
    assert!(!wrote, "memory was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_script_cannot_use_another_sessions_socket() {
    let s = Scratch::new("");
    std::fs::write(s.work().join("secret.txt"), "the secret of session a\n").unwrap();
    let handoff = s.work().join("handoff.json");
    let done = s.work().join("done");
    // Session a: publishes its socket and token, then stays alive until b
    // is done (at most 20 s).
    let a_code = format!(
        r#"
import json, os, time
tmp = {handoff:?} + ".tmp"
with open(tmp, "w") as f:
    json.dump({{"socket": os.environ["HERMES_TOOLS_SOCKET"], "token": os.environ["HERMES_TOOLS_TOKEN"]}}, f)
os.rename(tmp, {handoff:?})
for _ in range(200):
    if os.path.exists({done:?}):
        break
    time.sleep(0.1)
print("a done")
"#,
        handoff = handoff.display().to_string(),
        done = done.display().to_string()
    );
    // Session b: connects to a's socket with a's token and asks for a file.
    let b_code = format!(
        r#"
import json, os, socket, time
for _ in range(200):
    if os.path.exists({handoff:?}):
        break
    time.sleep(0.1)
info = json.load(open({handoff:?}))
assert info["socket"] != os.environ["HERMES_TOOLS_SOCKET"]
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(info["socket"])
conn.sendall(json.dumps({{"token": info["token"], "tool": "read_file", "args": {{"path": "secret.txt"}}}}).encode() + b"\n")
conn.settimeout(10)
reply = conn.makefile("rb").readline().decode()
print("reply:", reply)
open({done:?}, "w").close()
"#,
        handoff = handoff.display().to_string(),
        done = done.display().to_string()
    );
    let (ctx_a, ctx_b) = (s.ctx("session-a"), s.ctx("session-b"));
    let (a, b) = tokio::join!(run_in(&ctx_a, &a_code), run_in(&ctx_b, &b_code));
    assert_eq!(a["status"], "success", "{a}");
    assert_eq!(b["status"], "success", "{b}");
    assert!(output(&a).contains("a done"), "{a}");
    let reply = output(&b);
    assert!(reply.contains("refused"), "{reply}");
    assert!(
        !reply.contains("the secret"),
        "b read a's file through a's socket: {reply}"
    );
    assert_eq!(a["tool_calls_made"], 0, "{a}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_backends_are_refused_with_the_reason() {
    let s = Scratch::new("terminal:\n  backend: ssh\n");
    let out = hermes_tools::registry()
        .dispatch("execute_code", json!({ "code": "print(1)" }), &s.ctx("s1"))
        .await;
    assert!(
        out.contains("terminal.backend") && out.contains("Unix socket"),
        "{out}"
    );
}

/// Blocks `read_file` for the session it names, and records the tool call
/// ids it saw there.
struct BlockReads {
    session: String,
    seen: std::sync::Mutex<Vec<String>>,
}

impl hermes_runtime::hooks::PreCallHook for BlockReads {
    fn pre_call(
        &self,
        call: &hermes_runtime::hooks::CallInfo<'_>,
    ) -> hermes_runtime::hooks::PreCallDecision {
        if call.ctx.session_id() != Some(self.session.as_str()) {
            return hermes_runtime::hooks::PreCallDecision::Continue;
        }
        let id = call.ctx.tool_call_id().unwrap_or_default().to_string();
        self.seen
            .lock()
            .unwrap()
            .push(format!("{}:{id}", call.tool));
        if call.tool == "read_file" {
            hermes_runtime::hooks::PreCallDecision::Block("blocked by the test's hook".into())
        } else {
            hermes_runtime::hooks::PreCallDecision::Continue
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripts_calls_pass_the_registrys_hooks() {
    let s = Scratch::new("");
    std::fs::write(s.work().join("a.txt"), "alpha\n").unwrap();
    let hook = std::sync::Arc::new(BlockReads {
        session: "hooked".into(),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    hermes_tools::registry().add_pre_call_hook(hook.clone());
    let ctx = s.ctx("hooked").with_tool_call_id("call-7");
    let code =
        "import json\nfrom hermes_tools import read_file\nprint(json.dumps(read_file('a.txt')))\n";
    let answer = run_in(&ctx, code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    let out = output(&answer);
    assert!(out.contains("blocked by the test's hook"), "{out}");
    assert!(!out.contains("alpha"), "{out}");
    let seen = hook.seen.lock().unwrap().clone();
    assert!(
        seen.contains(&"read_file:call-7/1".to_string()),
        "the hook saw the script's call as the call's own: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_sandbox_still_runs_scripts_and_keeps_them_from_writing() {
    let s = Scratch::new("terminal:\n  sandbox: read-only\n");
    let target = s.work().join("made.txt");
    let code = format!(
        "try:\n    open({:?}, 'w').write('x')\n    print('wrote')\nexcept OSError as e:\n    print('refused', e.errno)\n",
        target.display().to_string()
    );
    let answer = s.run("s1", &code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    assert!(output(&answer).contains("refused"), "{answer}");
    assert!(!target.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_that_removes_its_socket_still_ends() {
    let s = Scratch::new("");
    let code = "import os\nos.unlink(os.environ['HERMES_TOOLS_SOCKET'])\nprint('gone')\n";
    let answer = tokio::time::timeout(Duration::from_secs(30), s.run("s1", code))
        .await
        .expect("execute_code returned");
    assert_eq!(answer["status"], "success", "{answer}");
    assert!(output(&answer).contains("gone"), "{answer}");
}

/// Calls from two threads of a script run at the same time: one thread's
/// command waits (bounded, 10 s) for a file that the other thread's call
/// writes once the command has started. One call at a time, the command
/// would hold the other call back until it gave up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripts_threads_call_tools_at_the_same_time() {
    let s = Scratch::new("");
    let code = r#"
import os, threading, time
from hermes_tools import terminal, write_file

seen = {}

def wait_for_flag():
    seen["terminal"] = terminal(
        "touch started; for i in $(seq 200); do [ -f flag ] && echo seen && exit 0; sleep 0.05; done; echo never"
    )["output"].strip()

def write_flag():
    for _ in range(200):
        if os.path.exists("started"):
            break
        time.sleep(0.05)
    seen["write"] = write_file(path="flag", content="x").get("error", "written")

threads = [threading.Thread(target=wait_for_flag), threading.Thread(target=write_flag)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(seen["terminal"], seen["write"])
"#;
    let answer = s.run("s1", code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(output(&answer).trim(), "seen written", "{answer}");
    assert_eq!(answer["tool_calls_made"], 2, "{answer}");
}

/// Where a script of `s` runs: a virtual environment of the system's
/// `python3` (made by `venv`, no pip) is named in the profile's `.env` by
/// `env_line(venv)`; the script prints its `sys.prefix`, its working
/// directory and whether `read_file("a.txt")` read the session's file.
/// Returns what it printed and the venv's real path.
async fn where_a_script_runs(s: &Scratch, env_line: impl Fn(&str) -> String) -> (Value, String) {
    std::fs::write(s.work().join("a.txt"), "alpha\n").unwrap();
    let venv = s.dir.path().join("venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let env = s.home.join(".env");
    let vars = std::fs::read_to_string(&env).unwrap() + &env_line(&venv.display().to_string());
    std::fs::write(&env, vars).unwrap();
    let code = r#"
import json, os, sys
from hermes_tools import read_file
print(json.dumps({
    "prefix": os.path.realpath(sys.prefix),
    "cwd": os.path.realpath(os.getcwd()),
    "read": "alpha" in read_file("a.txt")["content"],
}))
"#;
    let answer = s.run("s1", code).await;
    assert_eq!(answer["status"], "success", "{answer}");
    let printed: Value = serde_json::from_str(output(&answer).trim()).unwrap();
    assert_eq!(printed["read"], true, "{printed}");
    (printed, real(&venv))
}

fn real(p: &Path) -> String {
    std::fs::canonicalize(p).unwrap().display().to_string()
}

/// `code_execution.mode: project` (the default): the session's folder and
/// the interpreter of the virtual environment its environment names
/// (`VIRTUAL_ENV`, here from the profile's `.env`, without a `PATH` to it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_mode_runs_in_the_sessions_folder_with_its_virtual_environment() {
    let s = Scratch::new("");
    let (printed, venv) = where_a_script_runs(&s, |v| format!("VIRTUAL_ENV={v}\n")).await;
    assert_eq!(printed["prefix"], venv, "{printed}");
    assert_eq!(printed["cwd"], real(&s.work()), "{printed}");
}

/// `code_execution.mode: strict`: a scratch folder of the execution (gone
/// after it) and the system's `python3`, though the session's `PATH` and
/// `VIRTUAL_ENV` both name a virtual environment; tools still resolve
/// relative paths against the session's folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_mode_runs_in_a_scratch_folder_with_the_system_python() {
    let s = Scratch::new("code_execution:\n  mode: strict\n");
    let (printed, venv) = where_a_script_runs(&s, |v| {
        format!("VIRTUAL_ENV={v}\nPATH={v}/bin:/usr/local/bin:/usr/bin:/bin\n")
    })
    .await;
    assert_ne!(printed["prefix"], venv, "{printed}");
    let cwd = printed["cwd"].as_str().unwrap();
    assert_ne!(cwd, real(&s.work()), "{printed}");
    assert!(
        !Path::new(cwd).exists(),
        "the scratch folder is removed: {printed}"
    );
}
