//! What judging a command costs (`terminal`'s approval check,
//! `hermes_tools::tools::terminal::check_command`): a 10 KB command line of ordinary
//! commands (pipes, lists, quotes, substitutions, redirections, a heredoc),
//! the same with its commands spelled to hide (quotes, `$'…'`, wrappers,
//! `sh -c`), and a 128,000-character one (the longest checked). The goal
//! for 10 KB is under 1 ms.
//!
//! Run: `cargo bench -p hermes-tests --bench command_check`.

use divan::{black_box, Bencher};
use hermes_runtime::Profile;
use hermes_tools::tools::terminal::check_command;

fn main() {
    divan::main();
}

/// Repeats `unit` up to `size` bytes.
fn line(unit: &str, size: usize) -> String {
    let mut s = String::with_capacity(size + unit.len());
    while s.len() + unit.len() <= size {
        s.push_str(unit);
    }
    s
}

const ORDINARY: &str =
    "cd src && cargo build --release 2>&1 | grep -v warning > \"$HOME/log.txt\"; \
echo \"done $(date +%s)\" && ls -la 'a b' || rm -f x.tmp\n\
for f in *.rs; do wc -l \"$f\"; done | sort -n | tail -3\n\
cat <<'EOF' > notes.md\n# notes\nEOF\n";

const SPELLED: &str = "'l's -la; \"git\" status && $'\\x65cho' ok | tee -a out.txt; \
env A=1 timeout 5 make -j2 || sudo -u root true; sh -c 'grep -r todo src'\n";

fn bench(bencher: Bencher, text: &str) {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let profile = Profile::new(home.path());
    // Warm: the rule table loads once per process.
    check_command("true", &profile);
    bencher.bench_local(|| check_command(black_box(text), &profile));
}

#[divan::bench(sample_count = 50)]
fn ordinary_10_kb(bencher: Bencher) {
    bench(bencher, &line(ORDINARY, 10_000));
}

#[divan::bench(sample_count = 50)]
fn spelled_10_kb(bencher: Bencher) {
    bench(bencher, &line(SPELLED, 10_000));
}

#[divan::bench(sample_count = 10)]
fn ordinary_128_000_chars(bencher: Bencher) {
    bench(bencher, &line(ORDINARY, 128_000));
}

#[divan::bench(sample_count = 100)]
fn one_short_command(bencher: Bencher) {
    bench(bencher, "git status");
}
