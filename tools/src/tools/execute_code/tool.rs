//! The `execute_code` tool: the model writes a Python script that calls
//! tools. The script runs with `python3` as the session's `terminal`
//! commands run (its environment, sandbox, containment and teardown; by
//! `code_execution.mode`, its working directory and active virtual
//! environment, or a scratch folder and the system's `python3`), beside
//! `hermes_tools.py`, the module
//! `cargo xtask gen` generates with one function per tool. A call from
//! the script travels over a Unix socket of this execution (`server.rs`)
//! back to the registry's dispatch with the call's own context, so hooks,
//! approval, result caps and the session's state apply as to any call.
//! Only the script's stdout returns to the model (and its stderr's tail
//! when it fails), with the number of tool calls it made; the limits are
//! `code_execution.*` of the profile's `config.yaml`.

mod server;

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hermes_macros::hermes_tool;
use hermes_procs::{self as procs, shell_quote};
use hermes_runtime::config::CodeExecutionMode;
use hermes_runtime::{Registry, ToolContext};
use serde_json::{json, Value};

use crate::tools::terminal::run::{wait_or_cancel, CANCEL_GRACE};
use crate::tools::terminal::session;
use server::{Family, Limits, Server};

/// The generated module scripts import (`from hermes_tools import ...`).
pub const MODULE_SOURCE: &str = include_str!("hermes_tools.py");
/// Its file name in the execution's folder.
const MODULE_FILE: &str = "hermes_tools.py";

/// Tools no script may call, whatever `code_execution.allowed_tools`
/// says: itself (no nesting), child agents, and asking the user, whom a
/// script cannot wait for.
pub const NEVER_FROM_SCRIPT: &[&str] = &[
    "execute_code",
    "delegate_task",
    "clarify",
    "send_message",
    "cronjob",
];

/// The script's stderr kept for the model when it fails (its tail).
const MAX_STDERR_BYTES: u64 = 10_000;
/// The environment variables the script finds the socket and its token in.
pub const SOCKET_VAR: &str = "HERMES_TOOLS_SOCKET";
pub const TOKEN_VAR: &str = "HERMES_TOOLS_TOKEN";

static REGISTRY: OnceLock<&'static Registry> = OnceLock::new();
static DEFAULT_REGISTRY: OnceLock<&'static Registry> = OnceLock::new();

/// Names the registry scripts' calls are dispatched through, for an agent
/// whose registry is not `hermes_tools::registry()` (the default).
/// Process-wide, once; `false` when one was set already.
pub fn set_registry(registry: &'static Registry) -> bool {
    REGISTRY.set(registry).is_ok()
}

/// `hermes_tools::registry()` names itself here when it is first used
/// (this module does not name the crate root: no module cycle).
pub(crate) fn set_default_registry(registry: &'static Registry) {
    let _ = DEFAULT_REGISTRY.set(registry);
}

fn registry() -> Result<&'static Registry, String> {
    REGISTRY
        .get()
        .or(DEFAULT_REGISTRY.get())
        .copied()
        .ok_or_else(|| {
            "execute_code has no registry to dispatch the script's calls through: the agent \
             must name it (hermes_tools::tools::execute_code::set_registry)"
                .to_string()
        })
}

/// Run a Python script that calls tools, and get back what it prints.
///
/// Use it for three or more tool calls with logic between them: filtering
/// large results before they reach you, loops over files or pages,
/// conditional steps. `from hermes_tools import NAME, ...` gives one
/// function per tool, taking the tool's parameters and returning its
/// result as a dict. A call of a tool scripts may not use, or past the
/// call limit, raises `hermes_tools.ToolError`. The script runs with
/// python3 in the session's working directory and its active virtual
/// environment, as shell commands run (with config.yaml
/// `code_execution.mode: strict`, in a scratch folder with the system's
/// python3); print the result you want to stdout: only stdout returns
/// (the tail of stderr too when the script fails). Limits (config.yaml
/// `code_execution`): 300 seconds, 50 tool calls, 50,000 bytes of stdout;
/// by default scripts may use web search and extraction, reading, writing,
/// searching and patching files, and foreground shell commands.
#[hermes_tool(
    toolset = "code_execution",
    emoji = "🐍",
    destructive,
    idempotent = false,
    open_world,
    concurrency = "exclusive"
)]
pub fn execute_code(
    ctx: &ToolContext,
    /// The Python script. Import tools with `from hermes_tools import
    /// NAME, ...` and print the final result to stdout.
    code: String,
) -> Result<Value, String> {
    if code.trim().is_empty() {
        return Err("code is empty: give the Python script to run".into());
    }
    if code.contains('\0') {
        return Err("code contains a NUL character, which no Python script can hold".into());
    }
    let config = ctx.profile().config();
    let backend = config.terminal.backend.value.as_str();
    if backend != "local" {
        return Err(format!(
            "execute_code runs scripts on this machine only, and terminal.backend is '{backend}': \
             its tools are called back over a Unix socket of this machine, which a script on \
             another host or in a container cannot reach. Use terminal and the other tools \
             directly, or terminal.backend: local"
        ));
    }
    let settings = &config.code_execution;
    let allowed = allowed_tools(ctx, &settings.allowed_tools.value);
    let timeout = Duration::from_secs(settings.timeout.value);
    let max_stdout = settings.max_stdout_bytes.value;
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| "execute_code needs a tokio runtime to dispatch the script's calls")?;
    let registry = registry()?;

    let scratch = tempfile::Builder::new()
        .prefix("hermes-code-")
        .tempdir()
        .map_err(|e| format!("could not create the script's folder: {e}"))?;
    let dir = scratch.path();
    // tempfile makes it 0700 already; said here so it never depends on that.
    std::fs::set_permissions(
        dir,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700),
    )
    .map_err(|e| format!("could not make the script's folder private: {e}"))?;
    let script = dir.join("script.py");
    let stderr = dir.join("stderr.txt");
    let socket = dir.join("tools.sock");
    std::fs::write(&script, &code).map_err(|e| format!("could not write the script: {e}"))?;
    std::fs::write(dir.join(MODULE_FILE), MODULE_SOURCE)
        .map_err(|e| format!("could not write {MODULE_FILE}: {e}"))?;

    // The nested calls stop when this call is cancelled or ends.
    let calls_cancel = ctx.cancellation().child();
    let calls_ctx = ctx.clone().with_cancellation(calls_cancel.clone());
    let token = random_token()?;
    let limits = Limits {
        token: token.clone(),
        allowed,
        max_calls: settings.max_tool_calls.value,
    };
    let (mut server, listener) = Server::bind(&socket, limits, registry, calls_ctx, runtime)?;

    let start = session::start(ctx);
    let (python, cwd) = match settings.mode.value {
        CodeExecutionMode::Project => (project_python(&start.env), start.cwd.clone()),
        CodeExecutionMode::Strict => {
            let python = procs::child_env::system_program("python3").ok_or_else(|| {
                format!(
                    "code_execution.mode is strict and no python3 is in the system's folders \
                     ({}): install Python 3, or use mode: project",
                    procs::child_env::DEFAULT_PATH
                )
            })?;
            (python.display().to_string(), dir.to_path_buf())
        }
    };
    let mut env = start.env.clone();
    let pythonpath = match env.get("PYTHONPATH") {
        Some(p) if !p.is_empty() => format!("{}:{p}", dir.display()),
        _ => dir.display().to_string(),
    };
    env.set("PYTHONPATH", pythonpath)
        .set("PYTHONDONTWRITEBYTECODE", "1")
        .set("PYTHONUNBUFFERED", "1")
        .set(SOCKET_VAR, socket.display().to_string())
        .set(TOKEN_VAR, token);
    let sandbox = hermes_procs::sandbox::decide(ctx, &env)?;
    // The script's own folder is writable to it (its stderr file), and to
    // nothing else.
    let policy = sandbox.policy().map(|p| {
        let mut p = (*p).clone();
        if let Ok(real) = std::fs::canonicalize(dir) {
            p.writable.push(real);
        }
        Arc::new(p)
    });
    let command = format!(
        "exec {} -B {} 2>{}",
        shell_quote(&python),
        shell_quote(&script.display().to_string()),
        shell_quote(&stderr.display().to_string())
    );
    let head = max_stdout.saturating_mul(2) / 5;
    let options = procs::SpawnOptions {
        max_processes: procs::contain::max_processes_for(ctx.profile()),
        inline: true,
        user_namespace: procs::contain::user_namespace_for(ctx.profile()),
        sandbox: policy,
        ..procs::SpawnOptions::new(head, max_stdout - head)
    };
    let began = Instant::now();
    let run = procs::spawn_with(&env, &command, &cwd, &options)
        .map_err(|e| format!("could not start {python}: {e}"))?;
    let _tracked = procs::table().track_foreground(&run);
    let grace = procs::grace_for(ctx.profile());
    let family = Family {
        pid: run.pid,
        cgroup: run.cgroup.clone(),
    };
    if let Err(e) = server.serve(listener, family) {
        run.teardown(grace.min(CANCEL_GRACE));
        return Err(e);
    }

    let finished = wait_or_cancel(ctx, timeout, |slice| run.wait_exit(slice));
    let cancelled = finished.is_none() && ctx.cancellation().is_cancelled();
    run.teardown(if cancelled {
        grace.min(CANCEL_GRACE)
    } else {
        grace
    });
    calls_cancel.cancel();
    server.stop();
    let calls = server.calls();
    let elapsed = (began.elapsed().as_secs_f64() * 100.0).round() / 100.0;

    let stdout = procs::lock(&run.output).render();
    let stdout = procs::redact::redact_command_output(ctx.profile(), &code, &stdout).into_owned();
    let stderr_tail = read_tail(&stderr, MAX_STDERR_BYTES);
    let stderr_tail =
        procs::redact::redact_command_output(ctx.profile(), &code, &stderr_tail).into_owned();
    let mut answer = json!({
        "output": stdout,
        "tool_calls_made": calls,
        "duration_seconds": elapsed,
    });
    let (status, error) = match finished {
        None if cancelled => (
            "interrupted",
            Some(
                "The call was cancelled; the script and every process it started were terminated"
                    .to_string(),
            ),
        ),
        None => (
            "timeout",
            Some(format!(
                "The script timed out after {} seconds (code_execution.timeout) and was \
                 terminated with every process it started",
                timeout.as_secs()
            )),
        ),
        Some(0) => ("success", None),
        Some(code) => ("error", Some(format!("The script exited with code {code}"))),
    };
    answer["status"] = json!(status);
    if let Some(error) = error {
        answer["error"] = json!(error);
        if !stderr_tail.trim().is_empty() {
            answer["stderr"] = json!(stderr_tail);
        }
    }
    Ok(answer)
}

/// The interpreter of `project` mode: the session's active virtual
/// environment's (`VIRTUAL_ENV`, else `CONDA_PREFIX`: `bin/python3`, else
/// `bin/python`), else `python3` as the session's `PATH` finds it.
fn project_python(env: &procs::child_env::ChildEnv) -> String {
    ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|var| env.get(var).map(str::trim).filter(|r| !r.is_empty()))
        .flat_map(|root| ["python3", "python"].map(|exe| Path::new(root).join("bin").join(exe)))
        .find(|p| procs::child_env::is_executable(p))
        .map_or_else(|| "python3".to_string(), |p| p.display().to_string())
}

/// `code_execution.allowed_tools`, without the tools no script may call,
/// and within the session's tool scope when it has one.
fn allowed_tools(ctx: &ToolContext, configured: &[String]) -> Vec<String> {
    configured
        .iter()
        .filter(|t| !NEVER_FROM_SCRIPT.contains(&t.as_str()))
        .filter(|t| ctx.enabled_tools().is_none_or(|scope| scope.contains(t)))
        .cloned()
        .collect()
}

/// 128 random bits as hex, from the kernel.
fn random_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("could not read /dev/urandom for the socket's token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The last `max` bytes of the file at `path` (empty when unreadable).
fn read_tail(path: &Path, max: u64) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let skip = len.saturating_sub(max);
    if file.seek(SeekFrom::Start(skip)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(max).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if skip > 0 {
        format!("[... {skip} bytes of stderr omitted ...]\n{text}")
    } else {
        text
    }
}
