//! Hostile-input cases for `terminal`'s command rules and approvals, as
//! `call` sees them: obfuscated hard-line commands, commands built to make
//! the check expensive (the longest accepted, every character a command
//! separator, nested `sh -c` quoting), one just over the length the check
//! reads; a dangerous command with nobody to approve it (refused, not run),
//! and the operator's switch (`HERMES_YOLO_MODE`, `--yolo`) that lets it
//! run but never a hard line.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness;

const LIMIT: Duration = Duration::from_secs(60);

fn terminal(command: &str, cwd: &Path, profile: &Path, env: &[(&str, &str)]) -> harness::Outcome {
    harness::call(
        "terminal",
        &json!({ "command": command }),
        cwd,
        profile,
        env,
        LIMIT,
    )
}

#[test]
fn obfuscated_hard_line_commands_are_refused() {
    let (cwd, profile) = harness::dirs();
    for command in [
        "r\\m -rf /",
        "r''m -r\"\"f /",
        "rm${IFS}-rf${IFS}/",
        "rm -rf \\\n/",
        "\u{ff52}\u{ff4d} -rf /",
        "\u{1b}[0mrm -rf /",
        "echo ok && (rm -rf /*)",
        "bash -c \"sh -c 'rm -rf ~'\"",
        "true || { :(){ :|:& };: ; }",
        "dd if=/dev/zero of=/dev/sda",
        "sudo -u root rm -rf /",
    ] {
        let out = terminal(command, cwd.path(), profile.path(), &[]);
        assert!(
            out.error().contains("hard line"),
            "{command:?}: {}",
            out.json
        );
    }
}

#[test]
fn commands_built_to_slow_the_check_are_answered() {
    let (cwd, profile) = harness::dirs();
    let max = 128_000;
    let separators = format!("echo {}", ";".repeat(max - 5));
    // JSON escapes each `"`: keep the argument under the kernel's 128 KiB.
    let quotes = format!("echo {}", "'a'\"b\"".repeat((max - 5) / 8));
    let nested = format!("{}true{}", "sh -c '".repeat(2_000), "'".repeat(2_000));
    let words = format!("echo {}", "rm -rf x ".repeat((max - 5) / 9));
    let many_shells = "sh -c 'rm -r x'; ".repeat((max - 5) / 17);
    for command in [&separators, &quotes, &nested, &words, &many_shells] {
        let out = terminal(command, cwd.path(), profile.path(), &[]);
        // A verdict, whatever it is, from a process that lived to give it.
        assert!(out.json.is_object(), "{:.300}", out.json);
        eprintln!(
            "{} chars: {:?}, {} KiB peak",
            command.len(),
            out.elapsed,
            out.peak_rss_kb
        );
    }
    // Just over what the check reads: refused unread.
    let over = format!("echo {}", "a".repeat(max));
    let out = terminal(&over, cwd.path(), profile.path(), &[]);
    assert!(
        out.error().contains("too long to check"),
        "{:.300}",
        out.json
    );
}

#[test]
fn nobody_to_approve_means_not_run_and_the_switch_means_run() {
    let (cwd, profile) = harness::dirs();
    let victim = cwd.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let command = format!("rm -r {}", victim.display());
    let out = terminal(&command, cwd.path(), profile.path(), &[]);
    assert!(out.error().contains("no one can approve"), "{}", out.json);
    assert!(victim.exists(), "refused, not run");

    let out = terminal(
        &command,
        cwd.path(),
        profile.path(),
        &[("HERMES_YOLO_MODE", "1")],
    );
    assert_eq!(out.json["exit_code"], 0, "{}", out.json);
    assert!(!victim.exists(), "the switch lets it run");
    let out = terminal(
        "rm -rf /",
        cwd.path(),
        profile.path(),
        &[("HERMES_YOLO_MODE", "true")],
    );
    assert!(out.error().contains("hard line"), "{}", out.json);
}

#[test]
fn the_yolo_flag_is_the_same_switch() {
    let (cwd, profile) = harness::dirs();
    let victim = cwd.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let run = |command: &str| -> Value {
        let out = Command::new(harness::BIN)
            .arg("--profile")
            .arg(profile.path())
            .args(["--yolo", "call", "terminal"])
            .arg(json!({ "command": command }).to_string())
            .env_remove("HERMES_YOLO_MODE")
            .current_dir(cwd.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = run(&format!("rm -r {}", victim.display()));
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(!victim.exists());
    let v = run(":(){ :|:& };:");
    assert!(v["error"].as_str().unwrap().contains("hard line"), "{v}");
}
