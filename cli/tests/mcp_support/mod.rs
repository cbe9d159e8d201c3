//! Shared by the MCP tests: a `hermes-tools serve --mcp --http` child whose
//! stderr is collected, and plain HTTP/1.1 over `std::net::TcpStream`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

/// A `serve --mcp --http 127.0.0.1:0 ARGS...` child; killed on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts the server with `args` after `serve --mcp --http 127.0.0.1:0`,
    /// through `sh -c` when `shell_prefix` is given (e.g. `ulimit -n 64;`).
    pub fn start(dir: &std::path::Path, args: &[&str], shell_prefix: Option<&str>) -> Server {
        // The tests' HTTP clients are reqwest's, built with no TLS provider.
        hermes_mcp_client::install_tls_provider();
        let mut command = match shell_prefix {
            Some(prefix) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("{prefix} exec \"$0\" \"$@\""))
                    .arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        command
            .args(["serve", "--mcp", "--http", "127.0.0.1:0", "--profile"])
            .arg(dir.join("profile"))
            .args(args)
            .env_remove("HERMES_MCP_TOKEN")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = Arc::clone(&stderr);
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(at) = line.find("http://") {
                    let rest = &line[at + "http://".len()..];
                    let addr = rest.split('/').next().unwrap().to_string();
                    let _ = tx.send(addr);
                }
                lines.lock().unwrap().push(line);
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the server reports its address")
            .parse()
            .unwrap();
        Server {
            child,
            addr,
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The stderr lines so far.
    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Resident memory of the server, in KiB.
    pub fn rss_kb(&self) -> u64 {
        rss_kb(self.pid())
    }

    pub fn initialize(&self) -> Response {
        request(self.addr, "POST", &[], &initialize_body())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// VmRSS of a process, in KiB.
pub fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

pub fn initialize_body() -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}},
    })
    .to_string()
}

#[derive(Debug)]
pub struct Response {
    /// 0 when the connection closed without an answer.
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

/// One request on its own connection (`Connection: close`), to `/mcp`.
/// The body of an SSE answer is returned as it came (chunk sizes included).
pub fn request(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head += &format!("{name}: {value}\r\n");
    }
    head += "\r\n";
    // The server may answer and close before reading everything (a refusal).
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()));
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> Response {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Response {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// Polls `check` every 50 ms until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if check() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a process is gone (no entry, or a zombie waiting to be reaped).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// `GET PATH` on its own connection: the status and the body.
pub fn get(addr: SocketAddr, path: &str) -> Response {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return parse_response(b"");
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    let _ = stream.write_all(head.as_bytes());
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

/// An MCP session over raw HTTP: `initialize` answered, then
/// `notifications/initialized`. `None` (with the answer) when the server
/// did not open one.
pub fn open_session(addr: SocketAddr) -> Result<String, Response> {
    let init = request(addr, "POST", &[], &initialize_body());
    let Some(id) = init.header("mcp-session-id").filter(|_| init.status == 200) else {
        return Err(init);
    };
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let initialized =
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let accepted = request(addr, "POST", &headers, &initialized);
    assert_eq!(accepted.status, 202, "{accepted:?}");
    Ok(id)
}

/// `tools/call NAME ARGS` in `session` (or none: a stateless server).
pub fn call_tool(
    addr: SocketAddr,
    session: Option<&str>,
    name: &str,
    args: serde_json::Value,
) -> Response {
    let mut headers = vec![("mcp-protocol-version", "2025-06-18")];
    if let Some(id) = session {
        headers.push(("mcp-session-id", id));
    }
    // Ids unique in the process: calls of one session may overlap.
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                  "params": {"name": name, "arguments": args}});
    request(addr, "POST", &headers, &body.to_string())
}

/// The JSON-RPC result of an answer (its SSE `data:` line or its JSON body).
pub fn rpc_result(response: &Response) -> Option<serde_json::Value> {
    response
        .body
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("result").cloned())
}

/// The text of a `tools/call` result, and whether it is an error.
pub fn tool_text(response: &Response) -> Option<(String, bool)> {
    let result = rpc_result(response)?;
    let text = result["content"][0]["text"].as_str()?.to_string();
    Some((text, result["isError"] == serde_json::Value::Bool(true)))
}

/// Starts a `terminal` call (in `session`, through `addr`) that runs in
/// the host's working directory `dir` until a file `go` appears there (at
/// most 10 s), and returns once it has started (a file `started`, waited
/// for at most 20 s). The thread answers the call's response.
pub fn start_waiting_call(
    addr: SocketAddr,
    session: &str,
    dir: &std::path::Path,
) -> std::thread::JoinHandle<Response> {
    let session = session.to_string();
    let running = std::thread::spawn(move || {
        call_tool(
            addr,
            Some(&session),
            "terminal",
            serde_json::json!({"command": "touch started; for i in $(seq 100); do \
                               [ -e go ] && break; sleep 0.1; done; echo finished-$i",
                   "timeout": 60}),
        )
    });
    assert!(wait_until(Duration::from_secs(20), || dir
        .join("started")
        .exists()));
    running
}
