//! Hostile-input cases of issue 12: a notebook made huge by its outputs,
//! a search with context over a file of huge lines, a deep tree searched
//! on worker threads, and secrets in every line of a large file. Each
//! answers within the suite's memory ceiling.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write;
use std::time::Duration;

use serde_json::json;

use crate::harness;

const TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn a_notebook_with_huge_outputs_is_read_within_bounds() {
    let dirs = harness::dirs();
    // 15 MiB of output text the reader skips, around two small cells.
    let blob = "x".repeat(15 << 20);
    let nb = json!({
        "cells": [
            {"cell_type": "code", "source": "print(1)", "outputs": [{"text": blob}]},
            {"cell_type": "markdown", "source": ["done"]}
        ]
    });
    fs::write(dirs.0.path().join("big.ipynb"), nb.to_string()).unwrap();
    let out = harness::call(
        "read_file",
        &json!({"path": "big.ipynb"}),
        dirs.0.path(),
        dirs.1.path(),
        &[],
        TIMEOUT,
    );
    assert_eq!(
        out.json["content"],
        "1|# ── Code cell 1 ──\n2|print(1)\n3|\n4|# ── Markdown cell 1 ──\n5|done",
        "{}",
        out.json
    );
}

#[test]
fn context_around_matches_in_huge_lines_stays_bounded() {
    let dirs = harness::dirs();
    // Lines of 4 MiB around a match: context lines are kept cut, never whole.
    let mut f = fs::File::create(dirs.0.path().join("wide.txt")).unwrap();
    for i in 0..12 {
        let line = if i == 6 {
            "needle".to_owned()
        } else {
            "y".repeat(4 << 20)
        };
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    let out = harness::call(
        "search_files",
        &json!({"pattern": "needle", "context": 20}),
        dirs.0.path(),
        dirs.1.path(),
        &[],
        TIMEOUT,
    );
    assert_eq!(out.json["total_count"], 12, "{}", out.json);
    let text = out.json["matches_text"].as_str().unwrap();
    assert!(text.len() < 12 * 600, "{} bytes", text.len());
    assert!(text.contains("  7: needle"), "{text}");
}

#[test]
fn a_wide_deep_tree_is_searched_on_threads_within_bounds() {
    let dirs = harness::dirs();
    // 3000 files in 30 folders, each line a match: the first page comes
    // back, counts are whole, memory stays flat.
    for d in 0..30 {
        let dir = dirs.0.path().join(format!("d{d:02}/sub"));
        fs::create_dir_all(&dir).unwrap();
        for n in 0..100 {
            fs::write(dir.join(format!("f{n:03}.txt")), "hit\n".repeat(200)).unwrap();
        }
    }
    let out = harness::call(
        "search_files",
        &json!({"pattern": "hit", "limit": 3, "offset": 99_997}),
        dirs.0.path(),
        dirs.1.path(),
        &[],
        TIMEOUT,
    );
    assert_eq!(out.json["total_count"], 600_000, "{}", out.json);
    assert_eq!(out.json["matches"].as_array().unwrap().len(), 3);
    // Line 198 of the 500th file, in path order.
    assert_eq!(out.json["matches"][0]["path"], "d04/sub/f099.txt");
    assert_eq!(out.json["matches"][0]["line"], 198);
    assert_eq!(out.json["next_offset"], 100_000);
    let out = harness::call(
        "search_files",
        &json!({"pattern": "hit", "output_mode": "count", "limit": 2}),
        dirs.0.path(),
        dirs.1.path(),
        &[],
        TIMEOUT,
    );
    assert_eq!(out.json["total_count"], 600_000);
    assert_eq!(out.json["counts"]["d00/sub/f000.txt"], 200);
    assert_eq!(out.json["next_offset"], 2);
}

#[test]
fn a_file_of_secrets_is_redacted_whole_within_bounds() {
    let dirs = harness::dirs();
    let text: String = (0..2000)
        .map(|i| format!("KEY_{i} = sk-{i:0>24} Authorization: Bearer {i:0>30}\n"))
        .collect();
    fs::write(dirs.0.path().join("keys.txt"), &text).unwrap();
    let out = harness::call(
        "read_file",
        &json!({"path": "keys.txt", "limit": 2000}),
        dirs.0.path(),
        dirs.1.path(),
        &[],
        TIMEOUT,
    );
    let content = out.json["content"].as_str().unwrap();
    assert!(!content.contains("sk-0"), "a key got through");
    // As many markers as lines shown (the page stops at its character budget).
    let shown = content.lines().count();
    assert!(shown > 500, "{shown}");
    assert_eq!(content.matches("«redacted:sk-…»").count(), shown);
    assert_eq!(content.matches("Bearer 000000...").count(), shown);
}
