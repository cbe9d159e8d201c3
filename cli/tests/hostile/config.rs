//! Hostile `config.yaml` files: alias bombs, deep nesting, a huge file, a
//! flood of keys. Each is refused with a clear error by `config check` and
//! costs a `call` nothing: the tool answers with the defaults, within the
//! memory ceiling.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::harness;

const LIMIT: Duration = Duration::from_secs(60);

/// `hermes-tools --profile PROFILE config check` as the harness runs a
/// call (address-space limit, resident-memory ceiling): its exit code and
/// stdout.
fn check(profile: &Path) -> (i32, String) {
    let cwd = tempfile::tempdir().expect("cwd");
    let run = harness::run(&["config", "check"], cwd.path(), profile, &[], LIMIT);
    (run.status.code().unwrap_or(-1), run.stdout)
}

/// The hostile file in a fresh profile: `check` refuses it with `expected`
/// and a tool call still answers (with the defaults).
fn refused(yaml: impl AsRef<[u8]>, expected: &str) {
    let (cwd, profile) = harness::dirs();
    std::fs::write(profile.path().join("config.yaml"), yaml).expect("write");
    let (code, out) = check(profile.path());
    assert_eq!(code, 1, "{out:.2000}");
    assert!(out.contains(expected), "wanted {expected:?} in {out:.2000}");
    // Every line is short: no key or value is echoed whole.
    assert!(out.lines().all(|l| l.len() < 1_000), "{out:.2000}");
    let answer = harness::call(
        "terminal",
        &json!({"command": "echo still-here"}),
        cwd.path(),
        profile.path(),
        &[],
        LIMIT,
    );
    assert!(
        answer.json["output"]
            .as_str()
            .is_some_and(|o| o.contains("still-here")),
        "{}",
        answer.json
    );
}

#[test]
fn an_alias_bomb_is_refused() {
    // Ten levels of ten aliases: 10^10 values once expanded.
    let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        let refs = vec![format!("*a{p}"); 10].join(", ");
        yaml += &format!("a{i}: &a{i} [{refs}]\n");
    }
    yaml += "terminal:\n  timeout: *a9\n";
    refused(yaml, "more than 100000 values");
}

#[test]
fn an_alias_of_a_long_text_is_refused() {
    let long = "y".repeat(600_000);
    let refs = vec!["*big"; 50].join(", ");
    let yaml = format!("big: &big \"{long}\"\nmany: [{refs}]\n");
    refused(yaml, "exceeds 8 MiB");
}

#[test]
fn deep_flow_nesting_is_refused() {
    refused("[".repeat(200_000), "config.yaml:1:");
}

#[test]
fn deep_block_nesting_is_refused() {
    let mut yaml = String::new();
    for depth in 0..600 {
        yaml += &" ".repeat(depth);
        yaml += "k:\n";
    }
    refused(yaml, "nesting deeper than 64 levels");
}

#[test]
fn a_huge_file_is_not_read() {
    let (cwd, profile) = harness::dirs();
    let file = std::fs::File::create(profile.path().join("config.yaml")).expect("create");
    file.set_len(256 << 20).expect("a sparse 256 MiB file");
    drop(file);
    let (code, out) = check(profile.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("larger than 1024 KiB"), "{out}");
    let answer = harness::call(
        "read_file",
        &json!({"path": "missing.txt"}),
        cwd.path(),
        profile.path(),
        &[],
        LIMIT,
    );
    assert!(answer.json.get("error").is_some(), "{}", answer.json);
}

#[test]
fn a_flood_of_keys_and_a_long_name_are_summarized() {
    let mut yaml = String::new();
    let mut n = 0;
    while yaml.len() < 900_000 {
        yaml += &format!("unknown_{n}: 1\n");
        n += 1;
    }
    yaml += "terminal:\n  timeout: nope\n";
    let (cwd, profile) = harness::dirs();
    std::fs::write(profile.path().join("config.yaml"), &yaml).expect("write");
    let (code, out) = check(profile.path());
    assert!(out.contains("more problem(s) not shown"), "{out:.2000}");
    assert!(out.lines().count() < 200, "{}", out.lines().count());
    // The flood hit the value budget before the bad timeout, or the
    // dropped problems include it: either way `check` fails.
    assert_eq!(code, 1, "{out:.2000}");
    drop(cwd);

    let name = "k".repeat(900_000);
    refused(
        // An explicit key (`? `): implicit ones stop at 1024 characters.
        format!("? {name}\n: 1\nterminal:\n  timeout: nope\n"),
        "terminal.timeout: expected a whole number",
    );
}
