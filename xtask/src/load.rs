//! `cargo xtask mcp-load`: the project's own loopback load generator for
//! `serve --mcp --http`. It starts hosts and HAProxy with
//! `deploy/mcp-hosts` and runs, side by side in one run, the same load
//! (N clients, each its own MCP session on a keep-alive connection, calls
//! back to back) against: one host direct, one host behind the proxy, two
//! hosts behind the proxy, and two hosts of which one is killed (SIGKILL)
//! halfway. Per tool (`read_file` of a 5-line page of a 2,000-line file, `terminal` running
//! `true`) it prints calls/s, p50 and p99 latency, the errors, the
//! sessions that had to be opened again (answered 404), and the CPU time
//! the hosts, the proxy and the generator used.
//!
//! Bounded: every phase stops at `--seconds` or `--max-calls` calls per
//! client, whichever comes first; everything listens on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

#[derive(Args)]
pub(crate) struct LoadArgs {
    /// The `hermes-tools` binary (build it with `cargo build --release`).
    #[arg(long, default_value = "target/release/hermes-tools")]
    bin: PathBuf,
    /// Clients at once, each with its own session and connection.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    clients: u64,
    /// Seconds per phase.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=120))]
    seconds: u64,
    /// Calls per client per phase, at most.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_calls: u64,
}

pub(crate) fn mcp_load(args: LoadArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A `deploy/mcp-hosts` run; stopped (SIGTERM, then by id) on drop.
struct Topology {
    script: Child,
    proxy: SocketAddr,
    proxy_pid: u32,
    hosts: Vec<(SocketAddr, u32)>,
}

impl Topology {
    /// `stateless`: `--stateless --toolsets file`, else `--toolsets
    /// file,terminal` with sessions.
    fn start(
        root: &Path,
        bin: &Path,
        n: usize,
        dir: &Path,
        stateless: bool,
    ) -> Result<Topology, String> {
        // A folder of its own: no topology file of an earlier run in it.
        static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let run = dir.join(format!("run-{}", RUNS.fetch_add(1, Ordering::Relaxed)));
        let profile = dir.join("profile");
        let mut script = Command::new(root.join("deploy/mcp-hosts"))
            .arg(n.to_string())
            .arg(&run)
            .args(if stateless {
                &["--toolsets", "file", "--stateless"][..]
            } else {
                &["--toolsets", "file,terminal", "--max-sessions", "1000"][..]
            })
            .arg("--profile")
            .arg(&profile)
            .env("HERMES_TOOLS", bin)
            .env_remove("HERMES_MCP_TOKEN")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run deploy/mcp-hosts: {e}"))?;
        let file = run.join("topology");
        let start = Instant::now();
        while !file.exists() {
            if start.elapsed() > Duration::from_secs(60)
                || script.try_wait().ok().flatten().is_some()
            {
                let _ = script.kill();
                let _ = script.wait();
                return Err("deploy/mcp-hosts did not start (its stderr says why)".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let (mut proxy, mut hosts) = (None, Vec::new());
        let parse = |a: &str, p: &str| -> Result<(SocketAddr, u32), String> {
            Ok((
                a.parse().map_err(|e| format!("{a}: {e}"))?,
                p.parse().map_err(|e| format!("{p}: {e}"))?,
            ))
        };
        for line in text.lines() {
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["proxy", a, p] => proxy = Some(parse(a, p)?),
                ["host", _, a, p] => hosts.push(parse(a, p)?),
                _ => return Err(format!("unexpected topology line {line:?}")),
            }
        }
        let (proxy, proxy_pid) = proxy.ok_or("no proxy in the topology")?;
        Ok(Topology {
            script,
            proxy,
            proxy_pid,
            hosts,
        })
    }

    fn pids(&self) -> Vec<u32> {
        self.hosts.iter().map(|h| h.1).collect()
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        signal(self.script.id(), "TERM");
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30)
            && self.script.try_wait().ok().flatten().is_none()
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.script.kill();
        let _ = self.script.wait();
        for pid in self.pids().into_iter().chain([self.proxy_pid]) {
            if cpu_ticks(pid).is_some() {
                signal(pid, "KILL");
            }
        }
    }
}

/// `kill -SIG PID` (xtask has no signal crate; this is its one use).
fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status();
}

/// utime + stime of a live process, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    // Fields 14 and 15 of stat(5): the 12th and 13th after the name.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// CPU seconds of processes, the dead ones at their last reading.
fn cpu_seconds(before: &[Option<u64>], after: &[Option<u64>]) -> f64 {
    let ticks: u64 = before
        .iter()
        .zip(after)
        .map(|(b, a)| match (b, a) {
            (Some(b), Some(a)) => a.saturating_sub(*b),
            _ => 0,
        })
        .sum();
    // USER_HZ is 100 on Linux.
    ticks as f64 / 100.0
}

/// Lines of the file `read_file` reads pages of (a 60 kB file).
const PAGES: u64 = 2_000;

/// One keep-alive HTTP/1.1 connection speaking MCP in one session.
struct Client {
    addr: SocketAddr,
    reader: Option<BufReader<TcpStream>>,
    session: Option<String>,
    next_id: u64,
}

/// One answer: status, the `Mcp-Session-Id` header, the body.
struct Answer {
    status: u16,
    session: Option<String>,
    body: String,
}

impl Client {
    fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            reader: None,
            session: None,
            next_id: 1,
        }
    }

    fn post(&mut self, body: &str) -> std::io::Result<Answer> {
        if self.reader.is_none() {
            let stream = TcpStream::connect(self.addr)?;
            stream.set_read_timeout(Some(Duration::from_secs(60)))?;
            stream.set_nodelay(true)?;
            self.reader = Some(BufReader::new(stream));
        }
        let result = self.exchange(body);
        if result.is_err() {
            self.reader = None;
        }
        result
    }

    fn exchange(&mut self, body: &str) -> std::io::Result<Answer> {
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let reader = self.reader.as_mut().ok_or_else(|| bad("not connected"))?;
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
             content-type: application/json\r\nmcp-protocol-version: 2025-06-18\r\n\
             content-length: {}\r\n",
            self.addr,
            body.len()
        );
        if let Some(id) = &self.session {
            head += &format!("mcp-session-id: {id}\r\n");
        }
        head += "\r\n";
        let stream = reader.get_mut();
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no status line"))?;
        let (mut length, mut chunked, mut close, mut session) = (None, false, false, None);
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else {
                continue;
            };
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            match name.as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                "mcp-session-id" => session = Some(value.to_string()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                reader.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(|_| bad("chunk size"))?;
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk)?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            reader.read_exact(&mut body)?;
        } else {
            reader.read_to_end(&mut body)?;
            close = true;
        }
        if close {
            self.reader = None;
        }
        Ok(Answer {
            status,
            session,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    /// `initialize`, then `notifications/initialized`.
    fn open(&mut self) -> Result<(), String> {
        self.session = None;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "mcp-load", "version": "0"}}});
        let answer = self.post(&init.to_string()).map_err(|e| e.to_string())?;
        if answer.status != 200 {
            return Err(format!("initialize: {} {}", answer.status, answer.body));
        }
        self.session = answer.session;
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = self.post(&done.to_string()).map_err(|e| e.to_string())?;
        if answer.status != 202 {
            return Err(format!("initialized: {} {}", answer.status, answer.body));
        }
        Ok(())
    }

    /// One `tools/call`: its HTTP status and whether the tool answered
    /// without an error (`None`: the connection failed).
    fn call(&mut self, name: &str, args: &Value) -> Option<(u16, bool)> {
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                          "params": {"name": name, "arguments": args}});
        let answer = self.post(&body.to_string()).ok()?;
        let ok = answer
            .body
            .lines()
            .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v.get("result").cloned())
            .is_some_and(|r| r["isError"] != Value::Bool(true));
        Some((answer.status, ok))
    }
}

/// What the clients of one phase saw.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u64>,
    errors: u64,
    /// Sessions answered 404 and opened again.
    renewed: u64,
    /// Errors seen by clients whose first session was on a host that lived
    /// (none counted without sessions).
    errors_on_live_hosts: u64,
}

/// Runs `clients` clients against `addr` for `seconds`, calling `tool`;
/// `kill_halfway`: (the host to kill, the hosts' addresses to tell owners).
fn phase(
    addr: SocketAddr,
    tool: &str,
    args: &LoadArgs,
    dir: &Path,
    kill_halfway: Option<(u32, SocketAddr)>,
) -> Result<(Tally, Duration), String> {
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Duration::from_secs(args.seconds);
    let mut workers = Vec::new();
    let start = Instant::now();
    for c in 0..args.clients {
        let stop = Arc::clone(&stop);
        let tool = tool.to_string();
        let (max_calls, page_file) = (args.max_calls, dir.join("pages.txt"));
        let killed = kill_halfway.map(|k| k.1);
        workers.push(std::thread::spawn(
            move || -> Result<(Tally, bool), String> {
                let mut client = Client::new(addr);
                client.open()?;
                // Whether this client's first session lives on the host to kill.
                let doomed = match (killed, &client.session) {
                    (Some(host), Some(id)) => {
                        let mut probe = Client::new(host);
                        probe.session = Some(id.clone());
                        probe
                            .call("read_file", &json!({"path": page_file, "limit": 1}))
                            .is_some_and(|(status, _)| status == 200)
                    }
                    // Stateless: no host of its own; its errors are in
                    // the errors column only.
                    (_, None) => true,
                    _ => false,
                };
                let mut tally = Tally::default();
                for i in 0..max_calls {
                    if stop.load(Ordering::Relaxed) || start.elapsed() >= deadline {
                        break;
                    }
                    let call_args = if tool == "terminal" {
                        json!({"command": "true"})
                    } else {
                        // A page not among the session's last 1000 reads: one
                        // read again unchanged is answered with a note, then
                        // refused (2,000 pages cycle past the 1000 remembered).
                        json!({"path": page_file, "offset": 1 + (i + c * 7) % PAGES, "limit": 5})
                    };
                    let began = Instant::now();
                    let outcome = client.call(&tool, &call_args);
                    let took = began.elapsed();
                    match outcome {
                        Some((200, true)) => tally
                            .latencies_us
                            .push(u64::try_from(took.as_micros()).unwrap_or(u64::MAX)),
                        Some((404, _)) => {
                            tally.renewed += 1;
                            client.open()?;
                        }
                        _ => tally.errors += 1,
                    }
                }
                Ok((tally, doomed))
            },
        ));
    }
    if let Some((pid, _)) = kill_halfway {
        std::thread::sleep(deadline / 2);
        signal(pid, "KILL");
    }
    let mut total = Tally::default();
    for worker in workers {
        let (tally, doomed) = worker
            .join()
            .map_err(|_| "a client thread panicked".to_string())??;
        total.latencies_us.extend(tally.latencies_us);
        total.errors += tally.errors;
        total.renewed += tally.renewed;
        if !doomed {
            total.errors_on_live_hosts += tally.errors + tally.renewed;
        }
    }
    stop.store(true, Ordering::Relaxed);
    Ok((total, start.elapsed()))
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)] as f64 / 1000.0
}

fn run(args: &LoadArgs) -> Result<(), String> {
    let root = crate::workspace::workspace_root()?;
    let bin = if args.bin.is_absolute() {
        args.bin.clone()
    } else {
        root.join(&args.bin)
    };
    if !bin.is_file() {
        return Err(format!(
            "no binary at {} (cargo build --release --bin hermes-tools)",
            bin.display()
        ));
    }
    let dir = std::env::temp_dir().join(format!("hermes-mcp-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let pages: String = (0..PAGES + 5)
        .map(|i| format!("line {i} of the page file\n"))
        .collect();
    std::fs::write(dir.join("pages.txt"), pages).map_err(|e| e.to_string())?;
    println!(
        "mcp-load: {} clients, {} s per phase (at most {} calls per client), {}",
        args.clients,
        args.seconds,
        args.max_calls,
        bin.display()
    );
    println!(
        "{:<26} {:<10} {:>9} {:>8} {:>8} {:>7} {:>8} {:>8} {:>22}",
        "setup",
        "tool",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "errors",
        "renewed",
        "live err",
        "cpu s hosts/proxy/gen"
    );
    let outcome = phases(&root, &bin, &dir, args);
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn phases(root: &Path, bin: &Path, dir: &Path, args: &LoadArgs) -> Result<(), String> {
    for tool in ["read_file", "terminal"] {
        let one = Topology::start(root, bin, 1, dir, false)?;
        let direct = one.hosts[0].0;
        report("1 host, direct", tool, &one, direct, args, dir, None)?;
        report("1 host, proxy", tool, &one, one.proxy, args, dir, None)?;
        drop(one);
        let two = Topology::start(root, bin, 2, dir, false)?;
        report("2 hosts, proxy", tool, &two, two.proxy, args, dir, None)?;
        drop(two);
        let two = Topology::start(root, bin, 2, dir, false)?;
        let kill = Some((two.hosts[1].1, two.hosts[1].0));
        let setup = "2 hosts, 1 killed halfway";
        report(setup, tool, &two, two.proxy, args, dir, kill)?;
    }
    // `read_file` with no sessions (`--stateless`): any host answers.
    let two = Topology::start(root, bin, 2, dir, true)?;
    let setup = "2 stateless hosts, proxy";
    report(setup, "read_file", &two, two.proxy, args, dir, None)?;
    drop(two);
    let two = Topology::start(root, bin, 2, dir, true)?;
    let kill = Some((two.hosts[1].1, two.hosts[1].0));
    let setup = "2 stateless, 1 killed";
    report(setup, "read_file", &two, two.proxy, args, dir, kill)?;
    Ok(())
}

fn report(
    setup: &str,
    tool: &str,
    topology: &Topology,
    addr: SocketAddr,
    args: &LoadArgs,
    dir: &Path,
    kill: Option<(u32, SocketAddr)>,
) -> Result<(), String> {
    let hosts: Vec<u32> = topology.pids();
    let me = std::process::id();
    let read = || -> (Vec<Option<u64>>, Option<u64>, Option<u64>) {
        (
            hosts.iter().map(|p| cpu_ticks(*p)).collect(),
            cpu_ticks(topology.proxy_pid),
            cpu_ticks(me),
        )
    };
    let before = read();
    let (mut tally, took) = phase(addr, tool, args, dir, kill)?;
    let after = read();
    let hosts_cpu = cpu_seconds(&before.0, &after.0);
    let proxy_cpu = cpu_seconds(&[before.1], &[after.1]);
    let gen_cpu = cpu_seconds(&[before.2], &[after.2]);
    tally.latencies_us.sort_unstable();
    let calls = tally.latencies_us.len();
    println!(
        "{:<26} {:<10} {:>9.0} {:>8.2} {:>8.2} {:>7} {:>8} {:>8} {:>22}",
        setup,
        tool,
        calls as f64 / took.as_secs_f64(),
        percentile(&tally.latencies_us, 50.0),
        percentile(&tally.latencies_us, 99.0),
        tally.errors,
        tally.renewed,
        tally.errors_on_live_hosts,
        format!(
            "{hosts_cpu:.1}/{proxy_cpu:.1}/{gen_cpu:.1} of {:.1}",
            took.as_secs_f64()
        ),
    );
    Ok(())
}
