//! Hostile-input cases: files. The file cases of issue 11, scaled down:
//! huge lines and sparse files for `search_files` and `read_file`, walks
//! that meet `/proc`, FIFOs, sockets and devices, kernel files that report
//! size 0, and `patch` replacements and diffs that would grow without
//! bound. Sparse files cost no disk: their holes read as NUL bytes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{self, Outcome};

/// Size of the sparse files: hundreds of MiB held whole before the fix.
const SPARSE_BYTES: u64 = 768 << 20;
/// Longest a case may run before it counts as hung.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A working directory and a profile home, from [`harness::dirs`].
type Dirs = (tempfile::TempDir, tempfile::TempDir);

/// `harness::call` in the working directory and profile of `dirs`; fails
/// if the tool panicked on the way (the answer would still be JSON).
fn call(name: &str, args: Value, dirs: &Dirs, timeout: Duration) -> Outcome {
    let out = harness::call(name, &args, dirs.0.path(), dirs.1.path(), &[], timeout);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out
}

/// A file of `len` bytes: `head`, then a hole.
fn sparse(dir: &Path, rel: &str, head: &[u8], len: u64) {
    let path = dir.join(rel);
    fs::write(&path, head).unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn fifo(dir: &Path, rel: &str) {
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o644);
    nix::unistd::mkfifo(&dir.join(rel), mode).unwrap();
}

fn is_fifo(path: &Path) -> bool {
    fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

/// The `(path, line)` of each match (a search without matches leaves the
/// array out, as the reference does; an error fails).
fn matches(out: &Outcome) -> Vec<(String, u64)> {
    assert!(out.json.get("error").is_none(), "{}", out.json);
    assert!(out.json.get("matches_text").is_none(), "{}", out.json);
    out.json["matches"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_owned(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Fails unless the answer is a special-file refusal of `action`.
fn refused(out: &Outcome, action: &str) {
    let error = out.error();
    assert!(
        error.starts_with(&format!("Cannot {action} ")) && error.contains("regular files"),
        "{error}"
    );
}

#[test]
fn search_skips_sparse_files_at_their_first_hole() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    // One "line" of hundreds of MiB, all NUL; and text first, then the hole.
    sparse(d, "holes.txt", b"", SPARSE_BYTES);
    sparse(d, "head.txt", &b"needle ".repeat(4000), SPARSE_BYTES);
    fs::write(d.join("text.txt"), "a needle\n").unwrap();
    let out = call("search_files", json!({"pattern": "needle"}), &dirs, TIMEOUT);
    assert_eq!(matches(&out), [("text.txt".to_owned(), 1)]);
    assert_eq!(out.json["total_count"], 1);
}

#[test]
fn search_matches_a_huge_line_on_its_capped_prefix() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    let mut line = b"early ".to_vec();
    line.resize(4 << 20, b'z');
    line.extend_from_slice(b" late\nlate early\n");
    fs::write(d.join("min.js"), line).unwrap();
    let out = call("search_files", json!({"pattern": "early"}), &dirs, TIMEOUT);
    assert_eq!(
        matches(&out),
        [("min.js".to_owned(), 1), ("min.js".to_owned(), 2)]
    );
    let hint = out.json["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("1 line(s) longer than"), "{}", out.json);
    let out = call("search_files", json!({"pattern": "late"}), &dirs, TIMEOUT);
    assert_eq!(matches(&out), [("min.js".to_owned(), 2)]);
}

/// Found by the fuzzer: a counted repetition costs the line's length times
/// its count. Within the pattern limit it still answers in seconds on a
/// long line; beyond it, the pattern is refused with the reason.
#[test]
fn search_patterns_cannot_make_a_line_cost_minutes() {
    let dirs = harness::dirs();
    fs::write(dirs.0.path().join("long.txt"), "x".repeat(200_000) + "\n").unwrap();
    let out = call(
        "search_files",
        json!({"pattern": "x{4895}<n"}),
        &dirs,
        TIMEOUT,
    );
    assert_eq!(out.json["total_count"], 0, "{}", out.json);
    let out = call(
        "search_files",
        json!({"pattern": "x{50000}<n"}),
        &dirs,
        TIMEOUT,
    );
    assert!(
        out.error().contains("compiles to more than"),
        "{}",
        out.json
    );
}

#[test]
fn read_refuses_sparse_files_and_cuts_a_huge_line() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    sparse(d, "holes.txt", b"", SPARSE_BYTES);
    sparse(d, "head.txt", &b"x".repeat(20_000), SPARSE_BYTES);
    for path in ["holes.txt", "head.txt"] {
        let out = call("read_file", json!({"path": path}), &dirs, TIMEOUT);
        let error = out.error();
        assert!(error.contains("binary") && error.contains("NUL"), "{error}");
    }
    fs::write(d.join("one.txt"), "y".repeat(16 << 20)).unwrap();
    let out = call("read_file", json!({"path": "one.txt"}), &dirs, TIMEOUT);
    assert_eq!(out.json["total_lines"], 1, "{}", out.json);
    let content = out.json["content"].as_str().unwrap();
    assert!(
        content.starts_with("1|yyy") && content.ends_with("... [truncated]"),
        "{content:.100}"
    );
    assert!(content.len() < 10_000, "{} bytes", content.len());
}

#[test]
fn search_of_proc_is_refused() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    symlink("/proc", d.join("p")).unwrap();
    let up = "../".repeat(fs::canonicalize(d).unwrap().components().count());
    for path in ["/proc".to_owned(), "p".to_owned(), format!("{up}proc/self")] {
        let out = call(
            "search_files",
            json!({"pattern": "x", "path": path, "limit": 5}),
            &dirs,
            TIMEOUT,
        );
        refused(&out, "search");
    }
}

#[test]
fn search_of_root_never_enters_proc() {
    let dirs = harness::dirs();
    // Every /proc/<pid>/status starts with `Name:`; the walk of `/` must
    // not reach them (nor /sys, /dev). Only files named `status` are read,
    // so the walk, not the reading of the whole disk, is what runs. The
    // walk's time grows with the machine's files (half a million here:
    // 5 s alone, over 60 s once beside the other hostile tests in CI), so
    // the bound is one for a hang, not for speed.
    let out = call(
        "search_files",
        json!({"pattern": "^Name:", "path": "/", "file_glob": "status", "limit": 5}),
        &dirs,
        Duration::from_secs(240),
    );
    for (path, _) in matches(&out) {
        assert!(
            !["/proc/", "/sys/", "/dev/"]
                .iter()
                .any(|p| path.starts_with(p)),
            "{path}"
        );
    }
}

#[test]
fn search_skips_fifos_sockets_devices_and_kernel_links() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    fs::write(d.join("ok.txt"), "Name: needle\n").unwrap();
    fs::write(d.join("empty.txt"), "").unwrap();
    fifo(d, "pipe");
    let _socket = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    symlink("/proc", d.join("p")).unwrap();
    symlink("/proc/self/status", d.join("status")).unwrap();
    symlink("/dev/zero", d.join("zero")).unwrap();
    let out = call(
        "search_files",
        json!({"pattern": "Name|needle", "limit": 5}),
        &dirs,
        TIMEOUT,
    );
    assert_eq!(matches(&out), [("ok.txt".to_owned(), 1)]);
    assert!(is_fifo(&d.join("pipe")));
}

#[test]
fn read_of_a_fifo_answers_at_once() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    fifo(d, "pipe");
    // Opening it for reading would block until a writer came: the call is
    // killed (and the test fails) after the timeout if it does.
    let out = call(
        "read_file",
        json!({"path": "pipe"}),
        &dirs,
        Duration::from_secs(10),
    );
    refused(&out, "read");
    assert!(out.error().contains("FIFO"), "{}", out.error());
    assert!(is_fifo(&d.join("pipe")));
}

#[test]
fn read_of_kernel_files_is_refused() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    symlink("/proc/self/oom_score", d.join("status")).unwrap();
    symlink("/proc/self/status", d.join("harmless")).unwrap();
    // Refused by rule, with the rule's reason, however they are named.
    for (path, says) in [
        ("/proc/self/oom_score", "not one the file tools read"),
        ("status", "not one the file tools read"),
        ("/proc/self/pagemap", "memory layout"),
        ("/dev/zero", "never ends"),
    ] {
        let out = call("read_file", json!({"path": path}), &dirs, TIMEOUT);
        let error = out.error();
        assert!(
            error.starts_with("Refused to read") && error.contains(says),
            "{path}: {error}"
        );
    }
    // The harmless ones are read (bounded: stat says 0 bytes).
    for path in ["/proc/self/status", "harmless"] {
        let out = call("read_file", json!({"path": path}), &dirs, TIMEOUT);
        assert!(
            out.json["content"]
                .as_str()
                .is_some_and(|c| c.contains("Pid:")),
            "{}",
            out.json
        );
    }
}

#[test]
fn patch_replace_all_blow_up_is_refused_before_it_is_built() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    // The case: 1 MB of `a`, each to become 4 KB (4 GB if built).
    fs::write(d.join("a.txt"), "a".repeat(1 << 20)).unwrap();
    let out = call(
        "patch",
        json!({"path": "a.txt", "old_string": "a", "new_string": "b".repeat(4096), "replace_all": true}),
        &dirs,
        TIMEOUT,
    );
    let error = out.error();
    assert!(
        error.contains("1048576 occurrences") && error.contains("nothing was changed"),
        "{error}"
    );
    assert_eq!(fs::metadata(d.join("a.txt")).unwrap().len(), 1 << 20);
}

#[test]
fn patch_diffs_stay_bounded() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    // Five million one-line changes: a line table of the file and of the
    // result cost hundreds of MiB. (Not `\n` to `\r\n`: patch keeps the
    // file's line endings, as the reference does, so that changes nothing.)
    fs::write(d.join("nl.txt"), "\n".repeat(5 << 20)).unwrap();
    let out = call(
        "patch",
        json!({"path": "nl.txt", "old_string": "\n", "new_string": "x\n", "replace_all": true}),
        &dirs,
        TIMEOUT,
    );
    assert_eq!(out.json["replacements"], 5 << 20, "{}", out.json);
    let diff = out.json["diff"].as_str().unwrap();
    assert!(diff.ends_with("more lines]\n"), "{diff:.200}");
    assert_eq!(fs::metadata(d.join("nl.txt")).unwrap().len(), 10 << 20);
    // A million replacements on one line: each used to rescan the line.
    fs::write(d.join("line.txt"), "a".repeat(1 << 20)).unwrap();
    let out = call(
        "patch",
        json!({"path": "line.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
        &dirs,
        TIMEOUT,
    );
    assert_eq!(out.json["replacements"], 1 << 20, "{}", out.json);
}

#[test]
fn write_never_replaces_a_fifo_or_writes_into_proc() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    fifo(d, "pipe");
    symlink("/proc/self/comm", d.join("comm")).unwrap();
    for path in ["pipe", "comm", "/proc/self/comm"] {
        let out = call(
            "write_file",
            json!({"path": path, "content": "x"}),
            &dirs,
            TIMEOUT,
        );
        refused(&out, "write");
    }
    assert!(is_fifo(&d.join("pipe")));
}

#[test]
fn search_never_reads_unsafe_ignore_files() {
    let dirs = harness::dirs();
    let d = dirs.0.path();
    for sub in ["", "fifo/", "zero/", "huge/"] {
        fs::create_dir_all(d.join(sub)).unwrap();
        fs::write(d.join(format!("{sub}f.txt")), "needle\n").unwrap();
    }
    // The walk reads ignore files whole and follows symlinks: a FIFO
    // blocks it, /dev/zero and a sparse file are one endless line.
    fifo(d, "fifo/.gitignore");
    symlink("/dev/zero", d.join("zero/.ignore")).unwrap();
    sparse(d, "huge/.gitignore", b"", SPARSE_BYTES);
    let out = call("search_files", json!({"pattern": "needle"}), &dirs, TIMEOUT);
    assert_eq!(matches(&out), [("f.txt".to_owned(), 1)]);
    let hint = out.json["hint"].as_str().unwrap_or_default();
    assert!(hint.starts_with("3 folder(s) were not searched"), "{hint}");
    // A .gitignore dense with wildcards, near the default budget of the
    // ignore bytes a walk holds (each line is compiled): searched within
    // the ceiling, or skipped if the budget is set lower.
    let globs: String = (0..)
        .map(|i| format!("*{i}_abcdefgh*.x\n"))
        .scan(0, |len, line: String| {
            *len += line.len();
            (*len <= 120 << 10).then_some(line)
        })
        .collect();
    fs::create_dir(d.join("dense")).unwrap();
    fs::write(d.join("dense/.gitignore"), globs).unwrap();
    fs::write(d.join("dense/f.txt"), "needle\n").unwrap();
    let out = call("search_files", json!({"pattern": "needle"}), &dirs, TIMEOUT);
    let found = matches(&out);
    let hint = out.json["hint"].as_str().unwrap_or_default();
    assert!(
        found.contains(&("dense/f.txt".to_owned(), 1)) || hint.contains("dense"),
        "{}",
        out.json
    );
    // The search path's own ignore file: refused at once.
    let out = call(
        "search_files",
        json!({"pattern": "needle", "path": "fifo"}),
        &dirs,
        Duration::from_secs(10),
    );
    refused(&out, "search");
}
