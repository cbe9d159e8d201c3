//! Approval reads a command as the shell will (`terminal/parse.rs`,
//! `judge.rs`): the obfuscation corpus (`fixtures/obfuscation.tsv`) gets at
//! least its verdict, its scratch-deleting family sent to `terminal` with
//! no approval callback leaves the scratch folder in place, the ordinary
//! commands the reference does not flag (`fixtures/ordinary_commands.txt`)
//! run unasked, a command line past the length cap is refused clearly, and
//! `process` write/submit into a background shell meets the same check.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use hermes_runtime::{Profile, ToolContext};
use hermes_tools::tools::terminal::{check_command, Verdict as CommandVerdict};
use serde_json::{json, Value};

const OBFUSCATION: &str = include_str!("fixtures/obfuscation.tsv");
const ORDINARY: &str = include_str!("fixtures/ordinary_commands.txt");

/// A corpus field: raw, or after `json:` a JSON string.
fn field(text: &str) -> String {
    match text.strip_prefix("json:") {
        Some(json) => serde_json::from_str(json).unwrap_or_else(|e| panic!("{text}: {e}")),
        None => text.to_string(),
    }
}

struct Entry {
    hard: bool,
    run: bool,
    command: String,
}

fn corpus() -> Vec<Entry> {
    OBFUSCATION
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            let (kind, run, command) = (f.next(), f.next(), f.next());
            let (Some(kind), Some(run), Some(command)) = (kind, run, command) else {
                panic!("bad corpus line: {l:?}");
            };
            assert!(matches!(kind, "hard" | "hold"), "{l:?}");
            assert!(matches!(run, "run" | "judge"), "{l:?}");
            Entry {
                hard: kind == "hard",
                run: run == "run",
                command: field(command),
            }
        })
        .collect()
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The command with its placeholders filled for `scratch`.
fn fill(command: &str, scratch: &Path) -> String {
    let s = scratch.display().to_string();
    let payload = format!("rm -rf {s}");
    let hex: String = payload.bytes().map(|b| format!("\\x{b:02x}")).collect();
    command
        .replace("@B64@", &base64(payload.as_bytes()))
        .replace("@HEX@", &hex)
        .replace("@S@", &s)
}

#[test]
fn the_corpus_is_large_and_harmless_by_construction() {
    let entries = corpus();
    assert!(entries.len() >= 150, "{} entries", entries.len());
    // Only entries aimed at the scratch folder are ever run.
    for e in entries.iter().filter(|e| e.run) {
        assert!(
            ["@S@", "@B64@", "@HEX@"]
                .iter()
                .any(|p| e.command.contains(p)),
            "{:?}",
            e.command
        );
        assert!(!e.hard, "a run entry is never a hard line: {:?}", e.command);
    }
}

#[test]
fn every_obfuscation_gets_at_least_its_verdict() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let profile = Profile::new(home.path());
    let mut wrong = Vec::new();
    let entries = corpus();
    for e in &entries {
        let command = fill(&e.command, &scratch.path().join("victim"));
        let got = check_command(&command, &profile);
        let ok = match got {
            CommandVerdict::HardLine(_) => true,
            CommandVerdict::Approve(_) | CommandVerdict::Block(_) => !e.hard,
            CommandVerdict::Allow => false,
        };
        if !ok {
            wrong.push(format!("{command:?}: got {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        entries.len(),
        wrong.join("\n")
    );
}

fn call(ctx: &ToolContext, tool: &str, args: Value) -> Value {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(hermes_tools::registry().dispatch(tool, args, ctx));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn no_spelling_deletes_a_scratch_folder_unasked() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(home.path()), scratch.path()).with_task_id("reading");
    let mut ran = Vec::new();
    for e in corpus().iter().filter(|e| e.run) {
        let victim = scratch.path().join("victim");
        std::fs::create_dir_all(victim.join("inner")).unwrap();
        let command = fill(&e.command, &victim);
        let v = call(&ctx, "terminal", json!({ "command": command }));
        let refused = v["error"].as_str().is_some_and(|e| e.contains("BLOCKED"));
        if !victim.join("inner").exists() || !refused {
            ran.push(format!("{command:?}: {v}"));
        }
    }
    assert!(ran.is_empty(), "ran unasked:\n{}", ran.join("\n"));
    // The check is no blanket refusal: a harmless command still runs.
    let v = call(&ctx, "terminal", json!({"command": "echo 'r'm"}));
    assert_eq!(v["output"].as_str().map(str::trim), Some("rm"), "{v}");
}

fn ordinary() -> Vec<String> {
    ORDINARY
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(field)
        .collect()
}

#[test]
fn what_the_reference_lets_run_runs_unasked() {
    let home = tempfile::tempdir().unwrap();
    let profile = Profile::new(home.path());
    let commands = ordinary();
    assert!(commands.len() >= 60, "{}", commands.len());
    let asked: Vec<String> = commands
        .iter()
        .filter_map(|c| match check_command(c, &profile) {
            CommandVerdict::Allow => None,
            other => Some(format!("{c:?}: {other:?}")),
        })
        .collect();
    assert!(asked.is_empty(), "asked:\n{}", asked.join("\n"));
}

#[test]
fn a_long_command_is_judged_or_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    let profile = Profile::new(home.path());
    // Just under the cap: many commands, each read.
    let unit = "echo $(printf x) \"$HOME\" | grep -v y; ";
    let mut long = unit.repeat(127_000 / unit.len());
    long.push_str("r\"m\" -rf /");
    assert!(long.chars().count() <= 128_000);
    let started = Instant::now();
    let got = check_command(&long, &profile);
    // Read in time it is the hard line; a parse cut at its deadline (a
    // debug build on a loaded machine) is held, saying so.
    match &got {
        CommandVerdict::HardLine(_) => {}
        CommandVerdict::Approve(reason) => assert!(reason.contains("in time"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Deep nesting is held, not a stack overflow, on a thread stack of
    // 1 MiB (tokio's blocking threads have 2): substitutions, subshells,
    // and subshells in code fed to shells three levels deep.
    let deep = [
        "$(".repeat(20_000) + "rm -rf /" + &")".repeat(20_000),
        "(".repeat(20_000) + "rm -rf /" + &")".repeat(20_000),
        format!(
            "sh -c 'sh -c \"sh -c {}true{}\"'",
            "(".repeat(5_000),
            ")".repeat(5_000)
        ),
    ];
    let p = profile.clone();
    let verdicts = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            deep.iter()
                .map(|d| check_command(d, &p))
                .collect::<Vec<_>>()
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    for got in verdicts {
        assert!(
            matches!(
                got,
                CommandVerdict::HardLine(_) | CommandVerdict::Approve(_)
            ),
            "{got:?}"
        );
    }
    // Past the cap: refused unread, saying why.
    let over = "echo ".to_string() + &"a".repeat(128_001);
    match check_command(&over, &profile) {
        CommandVerdict::HardLine(reason) => assert!(reason.contains("too long"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Generous: the benchmark measures; this only catches a runaway.
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Polls `process` until the background shell's output holds `needle`.
fn wait_output(ctx: &ToolContext, id: &str, needle: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let v = call(ctx, "process", json!({"action": "poll", "session_id": id}));
        if v["output_preview"]
            .as_str()
            .is_some_and(|o| o.contains(needle))
            || Instant::now() > deadline
        {
            return v;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn process_input_to_a_shell_meets_the_same_check() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(home.path()), scratch.path()).with_task_id("proc");
    let victim = scratch.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let started = call(
        &ctx,
        "terminal",
        json!({"command": "bash", "background": true}),
    );
    let id = started["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"));

    for data in [
        format!("rm -rf {}", victim.display()),
        format!("'r'm -rf {}", victim.display()),
        format!("echo 'rm -rf {}' | sh", victim.display()),
    ] {
        let v = call(
            &ctx,
            "process",
            json!({"action": "submit", "session_id": id, "data": data}),
        );
        let error = v["error"].as_str().unwrap_or_else(|| panic!("{data}: {v}"));
        assert!(
            error.contains("BLOCKED") && error.contains("approval"),
            "{v}"
        );
    }
    // A hard line is refused as one.
    let v = call(
        &ctx,
        "process",
        json!({"action": "submit", "session_id": id, "data": "rm -rf /"}),
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("hard line"),
        "{v}"
    );
    // Pieces written without a newline are judged together.
    let v = call(
        &ctx,
        "process",
        json!({"action": "write", "session_id": id, "data": "r"}),
    );
    assert_eq!(v["status"], "ok", "{v}");
    let v = call(
        &ctx,
        "process",
        json!({"action": "submit", "session_id": id, "data": format!("m -rf {}", victim.display())}),
    );
    assert!(
        v["error"].as_str().unwrap_or_default().contains("BLOCKED"),
        "{v}"
    );
    // A harmless line runs in the shell.
    let v = call(
        &ctx,
        "process",
        json!({"action": "submit", "session_id": id, "data": "; echo still-$((40+2))"}),
    );
    assert_eq!(v["status"], "ok", "{v}");
    let polled = wait_output(&ctx, id, "still-42");
    assert!(
        polled["output_preview"]
            .as_str()
            .unwrap_or_default()
            .contains("still-42"),
        "{polled}"
    );
    call(&ctx, "process", json!({"action": "kill", "session_id": id}));
    assert!(victim.exists(), "the shell never ran the deletion");

    // Input to a program that is no shell is its own business.
    let started = call(
        &ctx,
        "terminal",
        json!({"command": "cat > /dev/null", "background": true}),
    );
    let id = started["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"));
    let v = call(
        &ctx,
        "process",
        json!({"action": "submit", "session_id": id, "data": "rm -rf notes"}),
    );
    assert_eq!(v["status"], "ok", "{v}");
    call(&ctx, "process", json!({"action": "kill", "session_id": id}));
}
