//! What a `terminal` call costs next to starting the shell by hand: a
//! `terminal` call of `true` through the registry's dispatch against
//! spawning `sh -c true` directly (stdout and stderr captured, as
//! `terminal` does), side by side in one run. `terminal` runs its commands
//! under `bash` where it is installed, so `bash -c true` is shown too: the
//! difference between the two baselines is the shells', not ours.
//!
//! After divan's table, each ratio is measured paired (`paired/mod.rs`):
//! short alternating batches of the two sides, one ratio per pair. The
//! goal for `terminal / sh -c true` is at most 1.5x, and for a sandboxed
//! call (the default `workspace-write`) against an unsandboxed one
//! (`terminal.sandbox: full`) at most 1.5x.
//!
//! This `main` calls `hermes_procs::sandbox::sandbox_helper()` first, as an agent's
//! does: the bench's own binary is its commands' sandbox helper.
//!
//! Run: `cargo bench -p hermes-tests --bench terminal`.

use std::process::{Command, Stdio};

use divan::{black_box, Bencher};
use hermes_runtime::{Profile, ToolContext};
use paired::{batch_ns, paired};

mod paired;

fn main() {
    hermes_procs::sandbox::sandbox_helper();
    divan::main();
    paired_ratio();
}

/// One `terminal` call of `true` through dispatch, as an agent makes it.
struct Terminal {
    runtime: tokio::runtime::Runtime,
    ctx: ToolContext,
    _dir: tempfile::TempDir,
}

impl Terminal {
    /// Under the default sandbox.
    fn new() -> Self {
        Self::with_config("")
    }

    /// With `config` as the profile's config.yaml.
    fn with_config(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("config.yaml"), config).unwrap_or_else(|e| panic!("{e}"));
        let ctx = ToolContext::new(Profile::new(dir.path()), dir.path());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        Terminal {
            runtime,
            ctx,
            _dir: dir,
        }
    }

    fn call(&self) -> String {
        let out = self
            .runtime
            .block_on(hermes_tools::registry().dispatch_json(
                "terminal",
                black_box(r#"{"command": "true"}"#),
                &self.ctx,
            ));
        assert!(out.contains("\"exit_code\":0"), "{out}");
        out
    }
}

/// `shell -c true`, spawned directly with its output captured.
fn direct(shell: &str) -> std::process::Output {
    Command::new(shell)
        .args(["-c", "true"])
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[divan::bench(sample_count = 40)]
fn terminal_true(bencher: Bencher) {
    let t = Terminal::new();
    bencher.bench_local(|| t.call());
}

#[divan::bench(sample_count = 40)]
fn terminal_true_unsandboxed(bencher: Bencher) {
    let t = Terminal::with_config("terminal:\n  sandbox: full\n");
    bencher.bench_local(|| t.call());
}

#[divan::bench(sample_count = 40)]
fn sh_c_true(bencher: Bencher) {
    bencher.bench_local(|| direct("/bin/sh"));
}

#[divan::bench(sample_count = 40)]
fn bash_c_true(bencher: Bencher) {
    bencher.bench_local(|| direct("/bin/bash"));
}

/// Calls per batch of a pair (each call is a process, about a millisecond).
const CALLS: u32 = 4;

fn paired_ratio() {
    let t = Terminal::new();
    let full = Terminal::with_config("terminal:\n  sandbox: full\n");
    let mut terminal = |n| batch_ns(n, || (), |()| t.call());
    let mut unsandboxed = |n| batch_ns(n, || (), |()| full.call());
    let mut sh = |n| batch_ns(n, || (), |()| direct("/bin/sh"));
    let mut bash = |n| batch_ns(n, || (), |()| direct("/bin/bash"));
    println!();
    paired(
        "terminal true sandboxed / unsandboxed",
        CALLS,
        &mut terminal,
        &mut unsandboxed,
    );
    paired("terminal true / sh -c true", CALLS, &mut terminal, &mut sh);
    paired(
        "terminal true / bash -c true",
        CALLS,
        &mut terminal,
        &mut bash,
    );
}
