//! Runs `hermes-tools` (`call`, `config check`) under limits and reads
//! what it cost.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

/// The resident memory a call may peak at, with the default limits (KiB).
pub const RSS_CEILING_KB: i64 = 256 * 1024;

/// The address space a child may map (KiB): far above the ceiling (threads
/// reserve stacks and allocator arenas they never touch), far below what
/// would hurt the machine.
const ADDRESS_SPACE_KB: u64 = 2 * 1024 * 1024;

/// Starts the call under the address-space limit, waits for it with
/// `wait4` (the child's own resource usage, whatever else this test
/// process runs meanwhile) and writes its peak resident memory as the last
/// line of stderr, after the child's own: [`PEAK_MARK`] and KiB. Python
/// because it reaches `wait4` without `unsafe` (the tests need Python 3
/// already, for the MCP servers).
const WAIT4: &str = r#"
import os, resource, subprocess, sys
limit = int(sys.argv[1]) * 1024
def bound():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
child = subprocess.Popen(sys.argv[2:], preexec_fn=bound)
_, status, usage = os.wait4(child.pid, 0)
sys.stderr.write("\nhermes-peak-rss-kb %d\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"#;

/// The last line of the wrapper's stderr, before the peak in KiB.
const PEAK_MARK: &str = "hermes-peak-rss-kb ";

/// What one call printed and cost (not every case reads every field).
#[derive(Debug)]
#[allow(dead_code)]
pub struct Outcome {
    /// The JSON document `call` printed.
    pub json: Value,
    pub stderr: String,
    pub peak_rss_kb: i64,
    pub elapsed: Duration,
}

#[allow(dead_code)]
impl Outcome {
    /// The error text; fails the test when the answer is not an error.
    pub fn error(&self) -> &str {
        match self.json.get("error").and_then(Value::as_str) {
            Some(e) => e,
            None => panic!("expected an error, got {}", self.json),
        }
    }
}

/// What one run of the binary printed and cost.
pub struct Run {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    /// The binary's stderr (the wrapper's line taken off).
    pub stderr: String,
    pub peak_rss_kb: i64,
    pub elapsed: Duration,
}

/// `hermes-tools --profile PROFILE ARGS...` in `cwd`, with `env` added,
/// under the address-space limit; killed after `timeout`. Fails the test
/// when it runs longer or peaks over [`RSS_CEILING_KB`]. Runs of parallel
/// tests measure each their own child.
pub fn run(
    args: &[&str],
    cwd: &Path,
    profile: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Run {
    let what = args.first().copied().unwrap_or_default();
    let mut cmd = Command::new("python3");
    cmd.args(["-c", WAIT4, &ADDRESS_SPACE_KB.to_string()])
        .arg(BIN)
        .arg("--profile")
        .arg(profile)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group: a timeout ends the wrapper and the call together.
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start hermes-tools");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > timeout {
            let group = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
            let _ = killpg(group, Signal::SIGKILL);
            let _ = child.wait();
            panic!("`{what}` still running after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let stdout = out_reader.join().unwrap_or_default();
    let mut stderr = err_reader.join().unwrap_or_default();
    let Some(mark) = stderr.rfind(PEAK_MARK) else {
        panic!("`{what}`: the wrapper reported no peak ({status}); stderr: {stderr}");
    };
    let peak_rss_kb: i64 = stderr[mark + PEAK_MARK.len()..]
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("`{what}`: peak in {stderr:?}: {e}"));
    stderr.truncate(mark);
    stderr.truncate(stderr.trim_end().len());
    assert!(
        peak_rss_kb < RSS_CEILING_KB,
        "`{what}` peaked at {peak_rss_kb} KiB resident (ceiling {RSS_CEILING_KB} KiB)"
    );
    Run {
        status,
        stdout,
        stderr,
        peak_rss_kb,
        elapsed,
    }
}

/// `hermes-tools --profile PROFILE call NAME ARGS` as [`run`] runs it.
/// Fails the test unless it exited 0 with one JSON document on stdout.
pub fn call(
    name: &str,
    args: &Value,
    cwd: &Path,
    profile: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Outcome {
    let run = run(
        &["call", name, &args.to_string()],
        cwd,
        profile,
        env,
        timeout,
    );
    assert!(
        run.status.success(),
        "`call {name}` died ({}); stderr: {}",
        run.status,
        run.stderr
    );
    let stdout = &run.stdout;
    let json: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("`call {name}` printed no JSON document ({e}): {stdout:.500}"));
    Outcome {
        json,
        stderr: run.stderr,
        peak_rss_kb: run.peak_rss_kb,
        elapsed: run.elapsed,
    }
}

/// A fresh working directory and profile home.
pub fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (
        tempfile::tempdir().expect("cwd"),
        tempfile::tempdir().expect("profile"),
    )
}
