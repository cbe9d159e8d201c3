//! The socket an execution's script calls tools through: one per
//! execution, in the execution's own 0700 folder, served by threads of the
//! call until the script ends.
//!
//! Who may call: a connection is accepted only from a process of this
//! execution's family (the peer's pid, from `SO_PEERCRED`, is the script's
//! shell or a descendant of it, or a member of its cgroup), and each
//! request must carry the execution's token (random, 128 bits, given to
//! the script in its environment only). A process of another execution,
//! another session's included, is refused even when it learned the path
//! and the token. What passes is dispatched through the registry with the
//! call's own context (same session, hooks, approval, caps).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hermes_procs::contain::CommandCgroup;
use hermes_runtime::{Registry, ToolContext};
use serde_json::{json, Value};

/// The longest request line read (a `write_file` of a large file fits).
const MAX_REQUEST_BYTES: u64 = 16 * 1024 * 1024;
/// Connections one execution may open (a script uses one; threads of it
/// may use a few).
const MAX_CONNECTIONS: usize = 16;
/// How often a waiting connection looks whether the execution ended.
const POLL: Duration = Duration::from_millis(100);
/// `terminal` arguments a script may not set: what it starts ends with it.
const FOREGROUND_ONLY: &[&str] = &["background", "pty", "notify_on_complete", "watch_patterns"];
/// Parents walked from a peer up to the script's shell.
const MAX_ANCESTRY: usize = 64;

/// The script's process family, known once it is started.
#[derive(Debug)]
pub(super) struct Family {
    pub pid: i32,
    pub cgroup: Option<Arc<CommandCgroup>>,
}

/// What the serving threads share.
struct Shared {
    token: String,
    allowed: Vec<String>,
    max_calls: usize,
    calls: AtomicUsize,
    stop: AtomicBool,
    family: OnceLock<Family>,
    registry: &'static Registry,
    ctx: ToolContext,
    runtime: tokio::runtime::Handle,
    connections: AtomicUsize,
}

/// A running server; [`Server::stop`] ends it.
pub(super) struct Server {
    shared: Arc<Shared>,
    path: PathBuf,
    /// The listening socket, to shut down: wakes the accept loop even
    /// when the script removed the socket's path.
    waker: Option<UnixListener>,
    accept: Option<std::thread::JoinHandle<()>>,
}

/// What the execution allows.
pub(super) struct Limits {
    pub token: String,
    pub allowed: Vec<String>,
    pub max_calls: usize,
}

impl Server {
    /// Binds the socket at `path` (it exists when this returns, so the
    /// script may connect at once; connections wait until [`Server::serve`]).
    pub fn bind(
        path: &Path,
        limits: Limits,
        registry: &'static Registry,
        ctx: ToolContext,
        runtime: tokio::runtime::Handle,
    ) -> Result<(Self, UnixListener), String> {
        let listener = UnixListener::bind(path)
            .map_err(|e| format!("could not create the tools socket {}: {e}", path.display()))?;
        let shared = Arc::new(Shared {
            token: limits.token,
            allowed: limits.allowed,
            max_calls: limits.max_calls,
            calls: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            family: OnceLock::new(),
            registry,
            ctx,
            runtime,
            connections: AtomicUsize::new(0),
        });
        Ok((
            Server {
                shared,
                path: path.to_path_buf(),
                waker: None,
                accept: None,
            },
            listener,
        ))
    }

    /// Starts answering, now that the script's family is known.
    pub fn serve(&mut self, listener: UnixListener, family: Family) -> Result<(), String> {
        let _ = self.shared.family.set(family);
        self.waker = listener.try_clone().ok();
        let shared = self.shared.clone();
        let thread = std::thread::Builder::new()
            .name("execute_code-accept".into())
            .spawn(move || accept_loop(&listener, &shared))
            .map_err(|e| format!("could not start the tools socket's thread: {e}"))?;
        self.accept = Some(thread);
        Ok(())
    }

    /// Tool calls answered or refused so far.
    pub fn calls(&self) -> usize {
        self.shared.calls.load(Ordering::Acquire)
    }

    /// Stops accepting and tells every connection to end (each does
    /// within [`POLL`] once its current call returned).
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // Wakes the accept loop, which then sees `stop`: a shut-down
        // listening socket fails `accept` (Linux), and a connection wakes
        // it where that does not.
        if let Some(listener) = self.waker.take() {
            let _ = nix::sys::socket::shutdown(
                std::os::fd::AsRawFd::as_raw_fd(&listener),
                nix::sys::socket::Shutdown::Both,
            );
        }
        drop(UnixStream::connect(&self.path));
        if let Some(thread) = self.accept.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &UnixListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let Ok(stream) = stream else {
            // Out of descriptors, say: not a busy loop.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if let Err(why) = admit(&stream, shared) {
            refuse(stream, &why);
            continue;
        }
        if shared.connections.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            refuse(
                stream,
                &format!("at most {MAX_CONNECTIONS} connections per execution"),
            );
            continue;
        }
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("execute_code-conn".into())
            .spawn(move || serve_connection(stream, &shared));
        drop(spawned);
    }
}

/// Answers the first request of a refused connection with `why` and
/// closes it: its request is read first (for at most [`POLL`] times ten,
/// on a thread of its own), so the peer sees the refusal rather than a
/// broken pipe.
fn refuse(stream: UnixStream, why: &str) {
    let line = as_line(&json!({ "refused": why }));
    let drain = move || {
        let _ = stream.set_read_timeout(Some(POLL * 10));
        let mut first = Vec::new();
        let _ = BufReader::new(&stream)
            .take(MAX_REQUEST_BYTES)
            .read_until(b'\n', &mut first);
        let _ = (&stream).write_all(&line);
    };
    drop(
        std::thread::Builder::new()
            .name("execute_code-refuse".into())
            .spawn(drain),
    );
}

/// Whether the peer of `stream` is a process of this execution.
fn admit(stream: &UnixStream, shared: &Shared) -> Result<(), String> {
    let refused = "this socket serves another execution's script only: the connecting process \
                   is not one this execute_code call started";
    let creds = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|e| format!("the peer of the tools socket is unknown ({e})"))?;
    let Some(family) = shared.family.get() else {
        return Err(refused.into());
    };
    let peer = creds.pid();
    if family
        .cgroup
        .as_ref()
        .is_some_and(|cg| cg.members().contains(&peer))
    {
        return Ok(());
    }
    let mut pid = peer;
    for _ in 0..MAX_ANCESTRY {
        if pid == family.pid {
            return Ok(());
        }
        match hermes_procs::scan::read(pid) {
            Some(info) if info.ppid > 1 => pid = info.ppid,
            _ => break,
        }
    }
    Err(refused.into())
}

fn serve_connection(stream: UnixStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(POLL));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let before = line.len();
        let read = (&mut reader)
            .take(MAX_REQUEST_BYTES + 1 - before as u64)
            .read_until(b'\n', &mut line);
        match read {
            Ok(0) if line.len() == before => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(_) => return,
        }
        if line.last() != Some(&b'\n') {
            if line.len() as u64 > MAX_REQUEST_BYTES {
                let why = format!("a request is longer than {MAX_REQUEST_BYTES} bytes");
                let _ = writer.write_all(&as_line(&json!({ "refused": why })));
                return;
            }
            // EOF in the middle of a line, or more to come.
            if matches!(read, Ok(0)) {
                return;
            }
            continue;
        }
        let answer = answer(&line, shared);
        line.clear();
        if writer.write_all(&as_line(&answer)).is_err() {
            return;
        }
    }
}

/// `value` as one line of JSON, written with one `write_all`: the
/// script's reader wakes once per answer, not once per token.
fn as_line(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}

/// The answer line to one request line.
fn answer(line: &[u8], shared: &Shared) -> Value {
    let request: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return json!({ "refused": format!("the request is not JSON: {e}") }),
    };
    if request.get("token").and_then(Value::as_str) != Some(shared.token.as_str()) {
        return json!({ "refused": "wrong token: this socket serves another execution" });
    }
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return json!({ "refused": "the request names no tool" });
    };
    if !shared.allowed.iter().any(|t| t == tool) {
        return json!({ "refused": format!(
            "{tool} is not callable from execute_code scripts; they may call: {} \
             (code_execution.allowed_tools in config.yaml)",
            shared.allowed.join(", ")
        ) });
    }
    let args = request.get("args").cloned().unwrap_or_else(|| json!({}));
    if tool == "terminal" {
        let set = |k: &str| {
            args.get(k)
                .is_some_and(|v| !v.is_null() && v != &json!(false))
        };
        if let Some(k) = FOREGROUND_ONLY.iter().find(|k| set(k)) {
            return json!({ "refused": format!(
                "terminal from a script runs foreground commands only: leave out `{k}` \
                 (start background processes with terminal itself)"
            ) });
        }
    }
    let n = shared.calls.fetch_add(1, Ordering::AcqRel);
    if n >= shared.max_calls {
        shared.calls.store(shared.max_calls, Ordering::Release);
        return json!({ "refused": format!(
            "the limit of {} tool calls per script is reached \
             (code_execution.max_tool_calls in config.yaml)",
            shared.max_calls
        ) });
    }
    let raw = args.to_string();
    let ctx = match shared.ctx.tool_call_id() {
        Some(id) => shared
            .ctx
            .clone()
            .with_tool_call_id(format!("{id}/{}", n + 1)),
        None => shared.ctx.clone(),
    };
    let result = shared
        .runtime
        .block_on(shared.registry.dispatch_json(tool, &raw, &ctx));
    json!({ "result": result })
}
