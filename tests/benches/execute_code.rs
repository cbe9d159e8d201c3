//! What one tool call from an `execute_code` script costs next to the
//! same call made by the agent itself: `read_file` of a one-line file,
//! `CALLS` times from one script (through the execution's Unix socket
//! and dispatch), against `CALLS` `dispatch_json` calls of the same tool
//! with the same arguments in the same session plus Python's own cost of
//! `CALLS` function calls returning a dict. Every side runs in the same
//! run; the script sides also pay python3's start, which a script without
//! calls measures and the per-call figures subtract:
//!
//! - through the socket, per call: (script with tool calls − empty script) / CALLS
//! - the baseline, per call: dispatch_json / CALLS + (script with plain
//!   Python calls − empty script) / CALLS
//!
//! After divan's table, `ROUNDS` rounds of the four sides alternate and the
//! medians give the ratio (goal: within 3×).
//!
//! This `main` calls `hermes_procs::sandbox::sandbox_helper()` first, as an
//! agent's does: the bench's own binary is its commands' sandbox helper.
//!
//! Run: `cargo bench -p hermes-tests --bench execute_code`.

use std::time::Instant;

use divan::{black_box, Bencher};
use hermes_runtime::{Profile, ToolContext};
use serde_json::json;

/// Tool calls per script (and `dispatch_json` calls per batch).
const CALLS: usize = 400;
/// Rounds of the side-by-side measurement after divan's table.
const ROUNDS: usize = 15;

fn main() {
    hermes_procs::sandbox::sandbox_helper();
    divan::main();
    side_by_side();
}

struct Bench {
    runtime: tokio::runtime::Runtime,
    ctx: ToolContext,
    _dir: tempfile::TempDir,
}

impl Bench {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let config = format!("code_execution:\n  max_tool_calls: {}\n", CALLS + 10);
        std::fs::write(dir.path().join("config.yaml"), config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap_or_else(|e| panic!("{e}"));
        let ctx =
            ToolContext::new(Profile::new(dir.path()), dir.path()).with_session_id("bench-code");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        Bench {
            runtime,
            ctx,
            _dir: dir,
        }
    }

    /// One `execute_code` call of `code`; its answer.
    fn script(&self, code: &str) -> String {
        let out = self.runtime.block_on(hermes_tools::registry().dispatch(
            "execute_code",
            json!({ "code": code }),
            &self.ctx,
        ));
        assert!(out.contains("\"status\":\"success\""), "{out}");
        out
    }

    /// `CALLS` calls of `read_file` through `dispatch_json`.
    fn direct(&self) {
        self.runtime.block_on(async {
            for _ in 0..CALLS {
                let out = hermes_tools::registry()
                    .dispatch_json("read_file", black_box(r#"{"path": "a.txt"}"#), &self.ctx)
                    .await;
                black_box(out);
            }
        });
    }
}

fn tool_calls() -> String {
    format!(
        "from hermes_tools import read_file\nfor _ in range({CALLS}):\n    r = read_file('a.txt')\nprint('ok')\n"
    )
}

fn python_calls() -> String {
    format!(
        "def read_file(path):\n    return {{'content': path}}\nfor _ in range({CALLS}):\n    r = read_file('a.txt')\nprint('ok')\n"
    )
}

const EMPTY: &str = "print('ok')\n";

#[divan::bench(sample_count = 10)]
fn script_with_tool_calls(bencher: Bencher) {
    let b = Bench::new();
    let code = tool_calls();
    bencher.bench_local(|| b.script(&code));
}

#[divan::bench(sample_count = 10)]
fn script_with_python_calls(bencher: Bencher) {
    let b = Bench::new();
    let code = python_calls();
    bencher.bench_local(|| b.script(&code));
}

#[divan::bench(sample_count = 10)]
fn script_empty(bencher: Bencher) {
    let b = Bench::new();
    bencher.bench_local(|| b.script(EMPTY));
}

#[divan::bench(sample_count = 10)]
fn dispatch_json_calls(bencher: Bencher) {
    let b = Bench::new();
    bencher.bench_local(|| b.direct());
}

fn timed(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_nanos() as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn side_by_side() {
    let b = Bench::new();
    let (tools, python) = (tool_calls(), python_calls());
    // Warm: the session's terminal state, the file read state.
    b.script(&tools);
    b.direct();
    let (mut t, mut p, mut e, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        t.push(timed(|| drop(b.script(&tools))));
        p.push(timed(|| drop(b.script(&python))));
        e.push(timed(|| drop(b.script(EMPTY))));
        d.push(timed(|| b.direct()));
    }
    let n = CALLS as f64;
    let (t, p, e, d) = (
        median(&mut t),
        median(&mut p),
        median(&mut e),
        median(&mut d),
    );
    let socket = (t - e) / n;
    let python_call = ((p - e) / n).max(0.0);
    let baseline = d / n + python_call;
    println!();
    println!(
        "execute_code, one call through the socket: {:.1} us; dispatch_json {:.1} us + a Python call {:.2} us; ratio {:.2}x \
         (medians of {ROUNDS} rounds, {CALLS} calls each; script start {:.1} ms)",
        socket / 1e3,
        d / n / 1e3,
        python_call / 1e3,
        socket / baseline,
        e / 1e6
    );
}
