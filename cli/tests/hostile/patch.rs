//! Hostile-input cases: `patch`'s fuzzy matching and V4A mode, and the
//! results dispatch keeps when they are over their cap. Each case must end
//! in a bounded answer (an error naming the problem, or a bounded result)
//! within the memory ceiling.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{self, Outcome};

/// Longest a case may run before it counts as hung (debug builds are slow
/// at the similarity strategies; the work budget, not this, ends them).
const TIMEOUT: Duration = Duration::from_secs(120);

type Dirs = (tempfile::TempDir, tempfile::TempDir);

fn call(name: &str, args: Value, dirs: &Dirs) -> Outcome {
    let out = harness::call(name, &args, dirs.0.path(), dirs.1.path(), &[], TIMEOUT);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    eprintln!(
        "{name}: peak RSS {} KiB, {:?}",
        out.peak_rss_kb, out.elapsed
    );
    out
}

#[test]
fn fuzzy_search_of_a_big_file_gives_up_within_its_budget() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    // 8 MiB of lines alike, and 400 lines that nearly match them: the
    // similarity strategies would compare billions of characters.
    let text: String = (0..400_000)
        .map(|i| format!("line number {i} x\n"))
        .collect();
    fs::write(d.join("big.txt"), &text).unwrap();
    let old: String = (0..400)
        .map(|i| format!("line numbr {i} y\nzz\n"))
        .collect();
    let out = call(
        "patch",
        json!({"path": "big.txt", "old_string": old, "new_string": "x"}),
        &dirs,
    );
    let e = out.error();
    assert!(
        e.contains("too long") || e.contains("Could not find"),
        "{e}"
    );
    assert_eq!(fs::read_to_string(d.join("big.txt")).unwrap(), text);
}

#[test]
fn fuzzy_replace_all_over_a_million_lines_stays_bounded() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    fs::write(d.join("a.txt"), "  a\n".repeat(1 << 20)).unwrap();
    // Only the line-trimmed strategy finds it: a million spans.
    let out = call(
        "patch",
        json!({"path": "a.txt", "old_string": "a  ", "new_string": "b", "replace_all": true}),
        &dirs,
    );
    assert_eq!(out.json["replacements"], 1 << 20, "{}", out.json);
    assert_eq!(out.json["match_strategy"], "line_trimmed");
    assert!(out.json["diff"]
        .as_str()
        .unwrap()
        .ends_with("more lines]\n"));
    assert_eq!(
        fs::read_to_string(d.join("a.txt")).unwrap(),
        "  b\n".repeat(1 << 20),
        "re-indented to the file's indentation"
    );
}

#[test]
fn v4a_patches_over_the_bounds_or_the_budget_change_nothing() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    let text: String = (0..20_000).map(|i| format!("row {i} of data\n")).collect();
    fs::write(d.join("big.txt"), &text).unwrap();
    // Too many hunks: refused before any matching.
    let mut patch = String::from("*** Update File: big.txt\n");
    for h in 0..=2_000 {
        patch.push_str(&format!("@@\n-r{h}\n+y\n"));
    }
    let out = call("patch", json!({"mode": "patch", "patch": patch}), &dirs);
    assert!(out.error().contains("hunks"), "{}", out.error());
    // Many hunks that match nothing: one shared budget ends the search.
    let mut patch = String::from("*** Update File: big.txt\n");
    for h in 0..300 {
        patch.push_str("@@\n");
        for l in 0..12 {
            patch.push_str(&format!("-rov {h} of dta {l}\n"));
        }
        patch.push_str("+x\n");
    }
    let out = call("patch", json!({"mode": "patch", "patch": patch}), &dirs);
    assert!(
        out.error().contains("no file was changed"),
        "{:.300}",
        out.error()
    );
    assert_eq!(fs::read_to_string(d.join("big.txt")).unwrap(), text);
}

#[test]
fn a_result_over_the_cap_is_kept_in_the_profile_and_previewed() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    // A thousand matching lines of 400 characters: search_files answers
    // some 450k characters, over the default 100k cap.
    let line = format!("needle {}", "y".repeat(393));
    fs::write(d.join("wide.txt"), format!("{line}\n").repeat(1_000)).unwrap();
    let out = call(
        "search_files",
        json!({"pattern": "needle", "limit": 1000}),
        &dirs,
    );
    let shown = out.json.to_string();
    assert!(shown.chars().count() < 3_000, "{}", shown.chars().count());
    let Some(path) = out.json["full_result_path"].as_str() else {
        panic!("no stored path in {:.300}", shown);
    };
    assert!(path.starts_with(dirs.1.path().join("tool_results").to_str().unwrap()));
    let stored = fs::read_to_string(path).unwrap();
    assert!(stored.len() > 400_000, "{}", stored.len());
    assert_eq!(stored.matches("needle").count(), 1_000);
}
