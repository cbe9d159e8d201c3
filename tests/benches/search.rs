//! `search_files` content search against ripgrep (`rg`) on a large tree:
//! the cargo registry sources (`~/.cargo/registry/src`, or the folder in
//! `HERMES_BENCH_TREE`), the same pattern, side by side in one run.
//!
//! `search_files` runs in process through the registry's dispatch (walk,
//! ignore files, matching, the JSON answer); `rg` runs as the reference
//! runs it, a child process (`rg --line-number --no-heading
//! --with-filename PATTERN TREE`), its output read whole. After divan's
//! table, the ratio is measured paired: the two alternate, one ratio per
//! pair, so a drift of the machine's speed moves both sides alike.
//!
//! Run: `cargo bench -p hermes-tests --bench search` (needs `rg` on PATH;
//! Debian: `apt-get install ripgrep`). `HERMES_BENCH_PATTERN=TEXT` keeps
//! only the patterns containing TEXT (both the table and the ratios); a
//! divan filter (`-- search_files`) narrows the table only.

use std::path::PathBuf;
use std::process::Command;
use std::sync::LazyLock;
use std::time::Instant;

use divan::black_box;
use hermes_runtime::{Profile, ToolContext};
use serde_json::json;

/// Patterns searched: a rare one (a few hits), a common one (thousands),
/// one with escaped regex characters, and one with very many matches (about
/// a hundred thousand lines on a full registry, where per-match costs show).
const PATTERNS: &[&str] = &[
    "unsafe impl Send for",
    "fn main",
    r"Err\(e\) => return",
    "pub fn",
];

/// Pairs measured per ratio (`HERMES_BENCH_PAIRS` changes it; 0 skips the
/// ratios, for profiling one side through a divan filter).
const PAIRS: usize = 9;

static TREE: LazyLock<PathBuf> = LazyLock::new(|| {
    std::env::var_os("HERMES_BENCH_TREE").map_or_else(
        || {
            let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
            home.join(".cargo/registry/src")
        },
        PathBuf::from,
    )
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
});

fn main() {
    if !TREE.is_dir() {
        eprintln!("no tree to search at {}", TREE.display());
        return;
    }
    if Command::new("rg").arg("--version").output().is_err() {
        eprintln!("rg is not on PATH: install ripgrep");
        return;
    }
    divan::main();
    let pairs = std::env::var("HERMES_BENCH_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(PAIRS);
    if pairs == 0 {
        return;
    }
    for pattern in patterns() {
        paired_ratio(pattern, pairs);
    }
}

/// The patterns of [`PATTERNS`] this run measures: those containing
/// `HERMES_BENCH_PATTERN`, when it is set.
fn patterns() -> Vec<&'static str> {
    let only = std::env::var("HERMES_BENCH_PATTERN").unwrap_or_default();
    PATTERNS
        .iter()
        .copied()
        .filter(|p| p.contains(only.as_str()))
        .collect()
}

/// One `search_files` call; answers its total count.
fn ours(pattern: &str) -> u64 {
    let ctx = ToolContext::new(Profile::new(TREE.join(".no-profile")), TREE.as_path());
    let out = RUNTIME.block_on(hermes_tools::registry().dispatch(
        "search_files",
        json!({"pattern": pattern, "limit": 50}),
        &ctx,
    ));
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    v["total_count"]
        .as_u64()
        .unwrap_or_else(|| panic!("no total_count: {out}"))
}

/// One `rg` run as the reference makes it; answers the lines printed.
fn rg(pattern: &str) -> u64 {
    let out = Command::new("rg")
        .args(["--line-number", "--no-heading", "--with-filename", pattern])
        .arg(TREE.as_path())
        .output()
        .unwrap_or_else(|e| panic!("rg: {e}"));
    out.stdout.iter().filter(|&&b| b == b'\n').count() as u64
}

#[divan::bench(args = patterns(), sample_count = 3, sample_size = 1)]
fn search_files(pattern: &str) -> u64 {
    ours(black_box(pattern))
}

#[divan::bench(args = patterns(), sample_count = 3, sample_size = 1)]
fn ripgrep(pattern: &str) -> u64 {
    rg(black_box(pattern))
}

/// Prints the median ratio of `search_files` to `rg` over `pairs` pairs,
/// and both medians; and both counts, which should agree (rg's counts
/// include hidden-file rules and binary handling of its own).
fn paired_ratio(pattern: &str, pairs: usize) {
    let time = |f: &dyn Fn(&str) -> u64| {
        let start = Instant::now();
        let n = f(pattern);
        (start.elapsed().as_secs_f64() * 1e3, n)
    };
    let (mut ratios, mut a_ms, mut b_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut a_n, mut b_n) = (0, 0);
    for pair in 0..pairs {
        let ((ta, na), (tb, nb)) = if pair % 2 == 0 {
            let a = time(&ours);
            (a, time(&rg))
        } else {
            let b = time(&rg);
            (time(&ours), b)
        };
        ratios.push(ta / tb);
        a_ms.push(ta);
        b_ms.push(tb);
        (a_n, b_n) = (na, nb);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{pattern:?}: search_files / rg = {:.2}x ({:.0} ms vs {:.0} ms; {a_n} vs {b_n} matching lines)",
        median(&mut ratios),
        median(&mut a_ms),
        median(&mut b_ms),
    );
}
