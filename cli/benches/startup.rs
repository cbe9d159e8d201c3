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
//! per pair, so the machine's drift moves both alike. The goal for
//! `schema / true` is at most 2x (issue 24).
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
}
