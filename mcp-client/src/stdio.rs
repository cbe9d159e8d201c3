//! A stdio server: the child process and the transport rmcp talks through.
//!
//! The child starts with exactly the environment [`ChildEnv`](hermes_procs::child_env::ChildEnv) gives the
//! profile plus the entry's `env`, in the entry's `cwd`, in a process group of
//! its own. Its stdout is read here, not by rmcp: a line is at most
//! [`MAX_MESSAGE_BYTES`] (the rest of a longer one is discarded up to its
//! newline, and the call it answered gets an error), a line that is not
//! JSON is skipped (servers that print logs to stdout keep working), and a
//! JSON message that is not a valid MCP message but names a request id
//! answers that request with an error instead of leaving it waiting. Its
//! stderr keeps only its last [`STDERR_TAIL`] bytes, shown when it fails.

use std::sync::{Arc, Mutex};

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use hermes_procs::teardown::Target;

use crate::McpError;

/// The longest line (one message) read from a server.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How much of a server's stderr is kept.
pub const STDERR_TAIL: usize = 4096;
/// Messages read ahead of rmcp.
const INCOMING_QUEUE: usize = 16;

/// The resolved launch of a stdio server.
#[derive(Debug, Clone)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<std::path::PathBuf>,
    /// The entry's `max_tools`: a `tools/list` answer listing more is cut
    /// to one more than this before rmcp parses it (`cut_listing`).
    pub max_tools: usize,
}

/// A running child: its group (for teardown) and its stderr tail.
pub struct Spawned {
    pub child: Child,
    pub target: Target,
    pub stderr: Arc<Mutex<Vec<u8>>>,
    pub transport: LineTransport,
}

/// Starts the child; `Err` says why not, in words for the user.
pub fn spawn(
    launch: &Launch,
    base: &hermes_procs::child_env::ChildEnv,
) -> Result<Spawned, McpError> {
    let mut env = base.clone();
    for (k, v) in &launch.env {
        env.set(k.clone(), v.clone());
    }
    let mut std_cmd = env.command(&launch.command);
    std_cmd.args(&launch.args);
    if let Some(cwd) = &launch.cwd {
        std_cmd.current_dir(cwd);
    }
    std_cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut std_cmd, 0);
    let mut cmd = tokio::process::Command::from(std_cmd);
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|error| McpError::Spawn {
        command: launch.command.clone(),
        error,
    })?;
    let pid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .ok_or(McpError::ExitedAtOnce)?;
    let target = Target {
        pid,
        start: hermes_procs::scan::read(pid).map(|p| p.start),
        pgid: pid,
    };
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(McpError::Pipes);
    };
    let tail = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn(keep_tail(stderr, Arc::clone(&tail)));
    let (in_tx, in_rx) = mpsc::channel(INCOMING_QUEUE);
    tokio::spawn(read_messages(
        BufReader::new(stdout),
        in_tx,
        launch.max_tools,
    ));
    Ok(Spawned {
        child,
        target,
        stderr: tail,
        transport: LineTransport {
            incoming: in_rx,
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
        },
    })
}

/// The last [`STDERR_TAIL`] bytes of a stderr tail, as text.
pub fn tail_text(tail: &Mutex<Vec<u8>>) -> String {
    let bytes = tail.lock().map(|b| b.clone()).unwrap_or_default();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut t) = tail.lock() {
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            }
        }
    }
}

/// rmcp's side: messages from the reader, requests written to stdin.
pub struct LineTransport {
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
}

impl Transport<RoleClient> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = Arc::clone(&self.stdin);
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut guard = stdin.lock().await;
            let Some(pipe) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the server's stdin is closed",
                ));
            };
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        // Closing stdin is how a stdio server is asked to exit.
        self.stdin.lock().await.take();
        Ok(())
    }
}

/// What [`read_line`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A line (without its newline) is in the buffer; at EOF, the last
    /// unterminated one.
    Complete,
    /// The line was longer than the limit: consumed through its newline and
    /// dropped, but for its first `keep_head` bytes.
    TooLong,
    Eof,
}

/// Reads one JSON-RPC line into `buf` (cleared first), never holding more
/// than `max` bytes of it: a longer line is consumed up to its newline and
/// dropped, keeping only its first `keep_head` bytes (where a request id
/// is). One reader for both ends of MCP over stdio: `serve --mcp` reading
/// its client, the client reading a server.
pub async fn read_line(
    input: &mut (impl AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
    max: usize,
    keep_head: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let newline = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        if !too_long {
            if buf.len() + part.len() > max {
                too_long = true;
                let room = keep_head.min(max).saturating_sub(buf.len().min(keep_head));
                buf.extend_from_slice(&part[..room.min(part.len())]);
                buf.truncate(keep_head);
            } else {
                buf.extend_from_slice(part);
            }
        }
        let used = newline.map_or(chunk.len(), |at| at + 1);
        input.consume(used);
        if newline.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

/// The id of a JSON-RPC response in the head of its text.
fn id_in_head(head: &[u8]) -> Option<Value> {
    static ID: std::sync::LazyLock<Option<regex::bytes::Regex>> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r#""id"\s*:\s*(-?\d{1,19}|"(?:[^"\\]|\\.){0,200}")"#).ok()
    });
    let re = ID.as_ref()?;
    let caps = re.captures(head)?;
    serde_json::from_slice(caps.get(1)?.as_bytes()).ok()
}

/// An error response to request `id`, as the server should have sent.
fn error_for(id: Value, message: String) -> Option<ServerJsonRpcMessage> {
    serde_json::from_value(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32700, "message": message},
    }))
    .ok()
}

/// Below this a line is parsed as it is: cutting cannot save much.
const CUT_FROM_BYTES: usize = 256 * 1024;

/// A `tools/list` answer, each tool kept as its text.
#[derive(serde::Deserialize)]
struct Listing<'a> {
    id: Value,
    #[serde(borrow)]
    result: ListedTools<'a>,
}

#[derive(serde::Deserialize)]
struct ListedTools<'a> {
    #[serde(borrow)]
    tools: Vec<&'a serde_json::value::RawValue>,
}

/// A long line that answers a `tools/list` with more than `max_tools`
/// tools, rewritten with only the first `max_tools + 1` (so the listing
/// still reads as longer than the cap, which the client notes) and no
/// further cursor. Every other line: `None`, parsed as it is.
///
/// rmcp builds a schema map for every tool it parses (about 30 times the
/// text: one page of 100,000 small tools took 434 MB); the tools cut here
/// are only scanned, each kept as a slice of the line.
fn cut_listing(line: &[u8], max_tools: usize) -> Option<Vec<u8>> {
    if line.len() < CUT_FROM_BYTES {
        return None;
    }
    let listing: Listing<'_> = serde_json::from_slice(line).ok()?;
    let keep = max_tools.saturating_add(1);
    let kept = listing.result.tools.get(..keep)?;
    if kept.len() == listing.result.tools.len() {
        return None;
    }
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": listing.id,
        "result": {"tools": kept},
    }))
    .ok()
}

/// Reads stdout until EOF; dropping `messages` at EOF ends the session.
async fn read_messages(
    mut input: impl AsyncBufRead + Unpin,
    messages: mpsc::Sender<ServerJsonRpcMessage>,
    max_tools: usize,
) {
    let mut line = Vec::new();
    loop {
        let message = match read_line(&mut input, &mut line, MAX_MESSAGE_BYTES, 256).await {
            Err(_) | Ok(Line::Eof) => return,
            Ok(Line::TooLong) => id_in_head(&line).and_then(|id| {
                error_for(
                    id,
                    format!(
                        "the server's answer is longer than {MAX_MESSAGE_BYTES} bytes; it was discarded"
                    ),
                )
            }),
            Ok(Line::Complete) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let cut = cut_listing(&line, max_tools);
                match serde_json::from_slice::<ServerJsonRpcMessage>(cut.as_deref().unwrap_or(&line)) {
                    Ok(m) => Some(m),
                    Err(e) => serde_json::from_slice::<Value>(&line)
                        .ok()
                        .and_then(|v| v.get("id").cloned())
                        .filter(|id| id.is_number() || id.is_string())
                        .and_then(|id| {
                            error_for(id, format!("the server's answer is not a valid MCP message: {e}"))
                        }),
                }
            }
        };
        if let Some(m) = message {
            if messages.send(m).await.is_err() {
                return;
            }
        }
    }
}
