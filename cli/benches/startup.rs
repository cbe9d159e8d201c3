//! What a client pays each time it starts `hermes-tools` (an MCP client
//! spawns the server per session; a script runs `schema` per model call):
//! the whole process, from spawn to exit, next to `/bin/true`, the floor of
//! any process, side by side in one run. `--version` does no work: it is
//! the cost of loading the binary alone (its size, relocations, shared
//! libraries), which bounds what any command can reach.
//!
//! Every command runs with an empty profile (a new folder, no
//! `config.yaml`, so no MCP server and no re-execution) and an empty
//! environment, its output captured as a client reads it.
//!
//! After divan's table, each ratio is measured paired (`tests/benches/
//! paired/mod.rs`): short alternating batches of the two sides, one ratio
//! per pair, so the machine's drift moves both alike; then as the ratio of
//! the fastest single runs, interleaved. The goal for `schema / true` is
//! at most 2x (issue 24).
//!
//! Run: `cargo bench -p hermes-cli --bench startup` (it builds the
//! binary with the bench profile, the release one). `HERMES_TOOLS_BIN=PATH`
//! measures another build of it instead (an older commit's, to compare).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../tests/benches/paired/mod.rs"]
mod paired;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use divan::Bencher;
use paired::{batch_ns, paired};

/// The binary measured: `HERMES_TOOLS_BIN`, else the one cargo built.
fn hermes_tools() -> String {
    std::env::var("HERMES_TOOLS_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_hermes-tools").to_string())
}

fn main() {
    println!("measuring {}", hermes_tools());
    divan::main();
    paired_ratios();
}

/// Runs `program` with `args` to its end, output captured; panics unless
/// it succeeded.
fn run(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// An empty profile folder, kept for the whole run.
fn profile() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn schema_args(profile: &Path) -> [&str; 3] {
    ["--profile", profile.to_str().unwrap(), "schema"]
}

#[divan::bench(sample_count = 100)]
fn hermes_tools_schema(bencher: Bencher) {
    let dir = profile();
    let args = schema_args(dir.path());
    let bin = hermes_tools();
    let out = run(&bin, &args);
    assert!(out.stdout.starts_with(b"["), "not a list of definitions");
    bencher.bench_local(|| run(&bin, &args));
}

#[divan::bench(sample_count = 100)]
fn hermes_tools_version(bencher: Bencher) {
    let bin = hermes_tools();
    bencher.bench_local(|| run(&bin, &["--version"]));
}

#[divan::bench(sample_count = 100)]
fn bin_true(bencher: Bencher) {
    bencher.bench_local(|| run("/bin/true", &[]));
}

/// Processes per batch of a pair (each a millisecond or so).
const CALLS: u32 = 4;

fn paired_ratios() {
    let dir = profile();
    let args = schema_args(dir.path());
    let bin = hermes_tools();
    let mut schema = |n| batch_ns(n, || (), |()| run(&bin, &args));
    let mut version = |n| batch_ns(n, || (), |()| run(&bin, &["--version"]));
    let mut floor = |n| batch_ns(n, || (), |()| run("/bin/true", &[]));
    println!();
    paired("hermes-tools schema / true", CALLS, &mut schema, &mut floor);
    paired(
        "hermes-tools --version / true",
        CALLS,
        &mut version,
        &mut floor,
    );
    fastest_ratios(&bin, &args);
}

/// Rounds of [`fastest_ratios`].
const ROUNDS: usize = 300;

/// The fastest of `ROUNDS` single runs of each command, interleaved (one of
/// each per round, in turns), and their ratios to `/bin/true`'s fastest.
/// This VM's timings are bimodal (a run lands in a fast or a slow state,
/// `/bin/true` included), which widens the paired ratios above; the
/// fastest run of each is the steadier figure of what loading and running
/// cost.
fn fastest_ratios(bin: &str, schema_args: &[&str]) {
    let commands: [(&str, &str, &[&str]); 3] = [
        ("true", "/bin/true", &[]),
        ("hermes-tools schema", bin, schema_args),
        ("hermes-tools --version", bin, &["--version"]),
    ];
    let mut fastest = [f64::INFINITY; 3];
    for round in 0..ROUNDS {
        for k in 0..commands.len() {
            let i = (round + k) % commands.len();
            let (_, program, args) = commands[i];
            let start = std::time::Instant::now();
            divan::black_box(run(program, args));
            fastest[i] = fastest[i].min(start.elapsed().as_nanos() as f64);
        }
    }
    for i in 1..commands.len() {
        println!(
            "fastest of {ROUNDS}: {} / true: {:.2}x ({:.0} ns vs {:.0} ns)",
            commands[i].0,
            fastest[i] / fastest[0],
            fastest[i],
            fastest[0]
        );
    }
}
