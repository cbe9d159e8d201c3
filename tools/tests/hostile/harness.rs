//! Runs `hermes-tools call` under limits and reads what it cost.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::resource::{getrusage, UsageWho};
use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

/// The resident memory a call may peak at, with the default limits (KiB).
pub const RSS_CEILING_KB: i64 = 256 * 1024;

/// The address space a child may map (KiB): far above the ceiling (threads
/// reserve stacks and allocator arenas they never touch), far below what
/// would hurt the machine.
const ADDRESS_SPACE_KB: u64 = 2 * 1024 * 1024;

/// Children run one at a time, so the peak of all children waited for so
/// far is the peak of the last one (or of an earlier one, whose own check
/// already failed).
static SERIAL: Mutex<()> = Mutex::new(());

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

/// `hermes-tools --profile PROFILE call NAME ARGS` in `cwd`, with `env`
/// added, under the address-space limit; killed after `timeout`. Fails the
/// test unless it exited 0 with one JSON document on stdout and stayed
/// under [`RSS_CEILING_KB`].
pub fn call(
    name: &str,
    args: &Value,
    cwd: &Path,
    profile: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Outcome {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KB} && exec \"$0\" \"$@\""
        ))
        .arg(BIN)
        .arg("--profile")
        .arg(profile)
        .args(["call", name, &args.to_string()])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
            let _ = child.kill();
            let _ = child.wait();
            panic!("`call {name}` still running after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let peak_rss_kb = getrusage(UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage")
        .max_rss();
    assert!(
        status.success(),
        "`call {name}` died ({status}); stderr: {stderr}"
    );
    assert!(
        peak_rss_kb < RSS_CEILING_KB,
        "`call {name}` peaked at {peak_rss_kb} KiB resident (ceiling {RSS_CEILING_KB} KiB)"
    );
    let json: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("`call {name}` printed no JSON document ({e}): {stdout:.500}"));
    Outcome {
        json,
        stderr,
        peak_rss_kb,
        elapsed,
    }
}

/// A fresh working directory and profile home.
pub fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (
        tempfile::tempdir().expect("cwd"),
        tempfile::tempdir().expect("profile"),
    )
}
