//! Tests of `read_file` on temporary directories.

use std::fs;

use super::common::LINE_CUT_MARKER;
use super::error::FileError;
use super::patch_tests::patch;
use super::read::{read_file, MAX_READ_CHARS};
use super::test_util::*;

#[test]
fn read_numbers_lines_from_one() {
    let dir = tmp();
    put(dir.path(), "a.txt", "line1\nline2\nline3\n");
    let out = read_file(dir.path(), "a.txt", None, None).unwrap();
    assert_eq!(out.content, "1|line1\n2|line2\n3|line3");
    assert_eq!(out.total_lines, 3);
    assert_eq!(out.file_size, 18);
    assert!(!out.truncated);
    assert_eq!(out.next_offset, None);
    assert_eq!(out.hint, None);
}

#[test]
fn read_counts_a_last_line_without_newline() {
    let dir = tmp();
    put(dir.path(), "a.txt", "a\nb");
    let out = read_file(dir.path(), "a.txt", None, None).unwrap();
    assert_eq!(out.content, "1|a\n2|b");
    assert_eq!(out.total_lines, 2);
}

#[test]
fn read_empty_file() {
    let dir = tmp();
    put(dir.path(), "e.txt", "");
    let out = read_file(dir.path(), "e.txt", None, None).unwrap();
    assert_eq!(out.content, "");
    assert_eq!(out.total_lines, 0);
    assert!(!out.truncated);
}

#[test]
fn read_paginates() {
    let dir = tmp();
    put(dir.path(), "m.txt", many_lines(3000));

    let out = read_file(dir.path(), "m.txt", Some(2990), Some(5)).unwrap();
    assert_eq!(out.content, numbered(2990..=2994));
    assert_eq!(out.total_lines, 3000);
    assert!(out.truncated);
    assert_eq!(out.next_offset, Some(2995));
    let hint = out.hint.unwrap();
    assert!(hint.contains("offset=2995"), "{hint}");
    assert!(hint.contains("2990-2994 of 3000"), "{hint}");

    // The last page is not truncated.
    let out = read_file(dir.path(), "m.txt", Some(2995), Some(50)).unwrap();
    assert_eq!(out.content, numbered(2995..=3000));
    assert!(!out.truncated);
    assert_eq!(out.next_offset, None);

    // Default limit is 500.
    let out = read_file(dir.path(), "m.txt", None, None).unwrap();
    assert_eq!(out.content, numbered(1..=500));
    assert_eq!(out.next_offset, Some(501));

    // Limit is capped at 2000.
    let out = read_file(dir.path(), "m.txt", Some(1), Some(5000)).unwrap();
    assert_eq!(out.content.lines().count(), 2000);
    assert_eq!(out.next_offset, Some(2001));

    // Offset 0 and limit 0 are raised to 1.
    let out = read_file(dir.path(), "m.txt", Some(0), Some(0)).unwrap();
    assert_eq!(out.content, "1|l1");
    assert_eq!(out.next_offset, Some(2));
}

#[test]
fn read_offset_past_end_is_empty_with_hint() {
    let dir = tmp();
    put(dir.path(), "m.txt", many_lines(10));
    let out = read_file(dir.path(), "m.txt", Some(50), None).unwrap();
    assert_eq!(out.content, "");
    assert_eq!(out.total_lines, 10);
    assert!(!out.truncated);
    assert!(out.hint.unwrap().contains("past the end"));
}

#[test]
fn read_cuts_long_lines_by_characters() {
    let dir = tmp();
    put(
        dir.path(),
        "long.txt",
        format!("{}\nshort\n{}\n", "x".repeat(2500), "é".repeat(2001)),
    );
    let out = read_file(dir.path(), "long.txt", None, None).unwrap();
    let lines: Vec<&str> = out.content.split('\n').collect();
    assert_eq!(lines[0], format!("1|{}{LINE_CUT_MARKER}", "x".repeat(2000)));
    assert_eq!(lines[1], "2|short");
    assert_eq!(lines[2], format!("3|{}{LINE_CUT_MARKER}", "é".repeat(2000)));
    assert!(!out.truncated);
}

#[test]
fn read_keeps_to_the_character_budget() {
    let dir = tmp();
    let line = "y".repeat(150);
    let text: String = (0..2000).map(|_| format!("{line}\n")).collect();
    put(dir.path(), "wide.txt", text);
    let out = read_file(dir.path(), "wide.txt", None, Some(2000)).unwrap();
    assert!(out.content.chars().count() <= MAX_READ_CHARS);
    let shown = out.content.split('\n').count() as u64;
    assert!(shown < 2000);
    assert!(out.truncated);
    assert_eq!(out.next_offset, Some(shown + 1));
    assert!(out.hint.unwrap().contains(&format!("offset={}", shown + 1)));
}

#[test]
fn read_strips_bom_keeps_cr_and_replaces_bad_bytes() {
    let dir = tmp();
    put(
        dir.path(),
        "bom.txt",
        b"\xEF\xBB\xBFfirst\r\nsecond \xff\xfe end\n",
    );
    let out = read_file(dir.path(), "bom.txt", None, None).unwrap();
    assert_eq!(out.content, "1|first\r\n2|second \u{FFFD}\u{FFFD} end");
}

#[test]
fn read_refuses_binary_files() {
    let dir = tmp();
    put(dir.path(), "blob.txt", b"abc\x00\x01\x02def".repeat(50));
    let err = read_file(dir.path(), "blob.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("blob.txt") && msg.contains("binary"), "{msg}");

    // Mostly invalid UTF-8, no NUL.
    put(
        dir.path(),
        "noise.txt",
        [0xffu8, 0xfe, 0x80, 0x81].repeat(100),
    );
    let err = read_file(dir.path(), "noise.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");

    // Known binary extension, whatever the content.
    put(dir.path(), "pic.png", "not really a png");
    let err = read_file(dir.path(), "pic.png", None, None).unwrap_err();
    assert!(err.to_string().contains(".png"), "{err}");
}

#[test]
fn read_missing_file_names_path_and_suggests() {
    let dir = tmp();
    put(dir.path(), "long.txt", "x\n");
    put(dir.path(), "config.yaml", "x\n");
    put(dir.path(), "unrelated.md", "x\n");
    put(dir.path(), "sub/zzz.rs", "x\n");

    let err = read_file(dir.path(), "lng.txt", None, None).unwrap_err();
    let FileError::FileNotFound { path, similar } = &err else {
        panic!("wrong error: {err:?}");
    };
    assert_eq!(path, "lng.txt");
    assert_eq!(similar.first().map(String::as_str), Some("long.txt"));
    assert!(!similar.iter().any(|s| s == "unrelated.md"));
    let msg = err.to_string();
    assert!(msg.starts_with("File not found: lng.txt"), "{msg}");
    assert!(msg.contains("long.txt"), "{msg}");

    let err = read_file(dir.path(), "config.yml", None, None).unwrap_err();
    assert!(err.to_string().contains("config.yaml"), "{err}");

    let err = read_file(dir.path(), "sub/zzz.txt", None, None).unwrap_err();
    let FileError::FileNotFound { similar, .. } = err else {
        panic!("wrong error");
    };
    assert_eq!(similar, vec!["sub/zzz.rs".to_owned()]);

    // A missing folder gives no suggestions but still names the path.
    let err = read_file(dir.path(), "nowhere/x.txt", None, None).unwrap_err();
    assert_eq!(err.to_string(), "File not found: nowhere/x.txt");
}

#[test]
fn read_refuses_directories_and_empty_paths() {
    let dir = tmp();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let err = read_file(dir.path(), "sub", None, None).unwrap_err();
    assert!(matches!(err, FileError::IsDirectory { .. }), "{err:?}");
    assert!(err.to_string().contains("search_files"));
    let err = read_file(dir.path(), "", None, None).unwrap_err();
    assert_eq!(err, FileError::EmptyPath);
}

#[cfg(unix)]
#[test]
fn read_refuses_device_files_but_reads_dev_null() {
    let dir = tmp();
    let err = read_file(dir.path(), "/dev/zero", None, None).unwrap_err();
    assert!(matches!(err, FileError::Special { .. }), "{err:?}");
    assert!(err.to_string().contains("/dev/zero is under /dev"), "{err}");
    // `/dev/null` is empty, as the reference reads it.
    let out = read_file(dir.path(), "/dev/null", None, None).unwrap();
    assert_eq!((out.content.as_str(), out.total_lines), ("", 0));
}

#[test]
fn read_accepts_absolute_paths() {
    let dir = tmp();
    let other = tmp();
    put(other.path(), "abs.txt", "hello\n");
    let abs = other.path().join("abs.txt");
    let out = read_file(dir.path(), abs.to_str().unwrap(), None, None).unwrap();
    assert_eq!(out.content, "1|hello");
}

#[test]
fn read_output_serializes_without_empty_options() {
    let dir = tmp();
    put(dir.path(), "a.txt", "x\n");
    let out = read_file(dir.path(), "a.txt", None, None).unwrap();
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"content": "1|x", "total_lines": 1, "file_size": 2, "truncated": false})
    );
}

#[test]
fn read_refuses_a_fifo_without_opening_it() {
    let dir = tmp();
    let pipe = fifo(dir.path(), "pipe");
    let base = dir.path().to_owned();
    let err = answers_in_time(&pipe, move || read_file(&base, "pipe", None, None)).unwrap_err();
    special_err(&err, "read");
    let msg = err.to_string();
    assert!(msg.contains("pipe") && msg.contains("FIFO"), "{msg}");
    // patch reads first, so it is refused the same way, nothing written.
    let base = dir.path().to_owned();
    let err = answers_in_time(&pipe, move || patch(&base, "pipe", "a", "b", true)).unwrap_err();
    special_err(&err, "read");
    assert!(is_fifo(&pipe));
}

#[test]
fn read_refuses_kernel_files_whatever_the_path() {
    let dir = tmp();
    std::os::unix::fs::symlink("/proc/self/oom_score", dir.path().join("status")).unwrap();
    std::os::unix::fs::symlink("/proc", dir.path().join("p")).unwrap();
    let up = up_to_root(dir.path());
    // Not one of the harmless kernel files: refused however it is named.
    for path in [
        "/proc/self/oom_score".to_owned(),
        "status".to_owned(),
        "p/self/oom_score".to_owned(),
        "p/self/../self/oom_score".to_owned(),
        format!("{up}proc/self/oom_score"),
        "/dev/zero".to_owned(),
    ] {
        let err = read_file(dir.path(), &path, None, None).unwrap_err();
        special_err(&err, "read");
        let msg = err.to_string();
        assert!(msg.contains(&path), "{msg}");
        assert!(
            msg.contains(" is under /proc") || msg.contains("under /dev"),
            "{msg}"
        );
    }
    let err = read_file(dir.path(), "/proc", None, None).unwrap_err();
    special_err(&err, "read");
    // A harmless one (0 bytes in stat) is read, bounded, by any path.
    for path in [
        "/proc/self/status",
        "p/self/../self/status",
        "/proc/meminfo",
    ] {
        let out = read_file(dir.path(), path, None, None).unwrap();
        assert!(out.total_lines > 0 && out.file_size > 0, "{path}: {out:?}");
    }
}

#[test]
fn read_refuses_sockets() {
    let dir = tmp();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
    let err = read_file(dir.path(), "sock", None, None).unwrap_err();
    special_err(&err, "read");
    assert!(err.to_string().contains("a socket"), "{err}");
}

#[test]
fn read_stops_at_the_first_hole_of_a_huge_sparse_file() {
    let dir = tmp();
    // 1 GiB of NUL with no newline: refused from its first bytes.
    sparse(dir.path(), "holes.txt", b"", 1 << 30);
    let err = read_file(dir.path(), "holes.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");
    // Text past the sniffed sample, then the hole: refused at the hole,
    // on the line holding it, without reading on to the end.
    sparse(dir.path(), "head.txt", &b"x".repeat(20_000), 1 << 30);
    let err = read_file(dir.path(), "head.txt", None, None).unwrap_err();
    let FileError::Binary { reason, .. } = &err else {
        panic!("expected binary, got {err:?}");
    };
    assert!(
        reason.contains("NUL") && reason.contains("line 1"),
        "{reason}"
    );
    sparse(dir.path(), "lines.txt", b"one\ntwo\n", 1 << 30);
    // The sample sees the hole already.
    let err = read_file(dir.path(), "lines.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");
}

#[test]
fn read_of_one_huge_line_is_one_cut_line() {
    let dir = tmp();
    put(dir.path(), "one.txt", "y".repeat(3 << 20));
    let out = read_file(dir.path(), "one.txt", None, None).unwrap();
    assert_eq!(out.total_lines, 1);
    assert_eq!(out.file_size, 3 << 20);
    assert_eq!(
        out.content,
        format!(
            "1|{}{LINE_CUT_MARKER}",
            "y".repeat(super::read::MAX_LINE_CHARS)
        )
    );
}
