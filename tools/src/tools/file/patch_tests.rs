//! Tests of `patch` on temporary directories.

use std::fs;

use super::error::FileError;
use super::error::MAX_EDIT_FILE_BYTES;
use super::patch::{patch_replace, PatchOutput};
use super::test_util::*;

/// `patch` in mode replace on `base`, unguarded.
pub(super) fn patch(
    base: &std::path::Path,
    path: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<PatchOutput, FileError> {
    patch_replace(
        &|p: &str| super::common::resolve(base, p),
        path,
        old,
        new,
        replace_all,
    )
}

#[test]
fn patch_replaces_once_with_diff() {
    let dir = tmp();
    put(dir.path(), "x.txt", "héllo\nworld\nagain\n");
    let out = patch(dir.path(), "x.txt", "world", "there", false).unwrap();
    assert_eq!(out.replacements, Some(1));
    assert_eq!(
        fs::read_to_string(dir.path().join("x.txt")).unwrap(),
        "héllo\nthere\nagain\n"
    );
    assert_eq!(
        out.diff,
        "--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n héllo\n-world\n+there\n again\n"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn patch_diff_has_separate_hunks_and_context() {
    let dir = tmp();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    put(dir.path(), "f.txt", &text);
    let out = patch(dir.path(), "f.txt", "line 2\n", "", false).unwrap();
    assert_eq!(
        out.diff,
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,4 @@\n line 1\n-line 2\n line 3\n line 4\n line 5\n"
    );
    put(dir.path(), "g.txt", "a\nX\nb\nc\nd\ne\nf\ng\nh\ni\nX\nj\n");
    let out = patch(dir.path(), "g.txt", "X", "Y", true).unwrap();
    assert_eq!(out.replacements, Some(2));
    assert_eq!(out.diff.matches("@@ -").count(), 2, "{}", out.diff);
    assert!(
        out.diff.contains("@@ -1,5 +1,5 @@\n a\n-X\n+Y\n b\n"),
        "{}",
        out.diff
    );
    assert!(
        out.diff
            .contains("@@ -8,5 +8,5 @@\n g\n h\n i\n-X\n+Y\n j\n"),
        "{}",
        out.diff
    );
}

#[test]
fn patch_text_not_found() {
    let dir = tmp();
    put(dir.path(), "x.txt", "hello\n");
    let err = patch(dir.path(), "x.txt", "zzz", "y", false).unwrap_err();
    assert!(matches!(err, FileError::TextNotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("x.txt") && msg.contains("read_file"), "{msg}");
    assert_eq!(
        fs::read_to_string(dir.path().join("x.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn patch_keeps_crlf_line_endings() {
    let dir = tmp();
    put(dir.path(), "w.txt", "one\r\ntwo\r\nthree\r\n");
    // The model writes \n; the file keeps its \r\n (the reference's result).
    let out = patch(dir.path(), "w.txt", "one\ntwo", "1\n2", false).unwrap();
    assert_eq!(out.match_strategy, Some("line_trimmed"));
    assert_eq!(
        fs::read_to_string(dir.path().join("w.txt")).unwrap(),
        "1\r\n2\r\nthree\r\n"
    );
}

#[test]
fn patch_not_unique_says_how_many() {
    let dir = tmp();
    put(dir.path(), "dup.txt", "a foo b foo c foo\nfoo\n");
    let err = patch(dir.path(), "dup.txt", "foo", "bar", false).unwrap_err();
    assert_eq!(
        err,
        FileError::NotUnique {
            path: "dup.txt".into(),
            count: 4
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("4 times"), "{msg}");
    assert!(
        msg.contains("context") && msg.contains("replace_all"),
        "{msg}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("dup.txt")).unwrap(),
        "a foo b foo c foo\nfoo\n"
    );
}

#[test]
fn patch_replace_all() {
    let dir = tmp();
    put(dir.path(), "dup.txt", "a foo b foo c foo\nfoo\n");
    let out = patch(dir.path(), "dup.txt", "foo", "bar", true).unwrap();
    assert_eq!(out.replacements, Some(4));
    assert_eq!(
        fs::read_to_string(dir.path().join("dup.txt")).unwrap(),
        "a bar b bar c bar\nbar\n"
    );
    assert_eq!(
        out.diff,
        "--- a/dup.txt\n+++ b/dup.txt\n@@ -1,2 +1,2 @@\n-a foo b foo c foo\n-foo\n+a bar b bar c bar\n+bar\n"
    );
}

#[test]
fn patch_unicode() {
    let dir = tmp();
    put(dir.path(), "u.txt", "名前: 日本 😀\nnext\n");
    let out = patch(dir.path(), "u.txt", "日本 😀", "中文 🎉", false).unwrap();
    assert_eq!(out.replacements, Some(1));
    assert_eq!(
        fs::read_to_string(dir.path().join("u.txt")).unwrap(),
        "名前: 中文 🎉\nnext\n"
    );
    assert!(
        out.diff.contains("-名前: 日本 😀\n+名前: 中文 🎉\n"),
        "{}",
        out.diff
    );
}

#[test]
fn patch_joining_lines_and_end_without_newline() {
    let dir = tmp();
    put(dir.path(), "j.txt", "ab\ncd\nlast");
    let out = patch(dir.path(), "j.txt", "b\n", "", false).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("j.txt")).unwrap(),
        "acd\nlast"
    );
    assert_eq!(
        out.diff,
        "--- a/j.txt\n+++ b/j.txt\n@@ -1,3 +1,2 @@\n-ab\n-cd\n+acd\n last\n\\ No newline at end of file\n"
    );
}

#[test]
fn patch_argument_and_file_errors() {
    let dir = tmp();
    put(dir.path(), "x.txt", "hello\n");
    assert_eq!(
        patch(dir.path(), "x.txt", "", "y", false).unwrap_err(),
        FileError::EmptyOldString
    );
    assert_eq!(
        patch(dir.path(), "x.txt", "hello", "hello", false).unwrap_err(),
        FileError::NoChange
    );
    let err = patch(dir.path(), "nope.txt", "a", "b", false).unwrap_err();
    assert!(
        err.to_string().starts_with("File not found: nope.txt"),
        "{err}"
    );

    put(dir.path(), "bin.txt", b"a\x00b".repeat(20));
    let err = patch(dir.path(), "bin.txt", "a", "b", true).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");

    put(dir.path(), "latin1.txt", b"caf\xe9 au lait\n");
    let err = patch(dir.path(), "latin1.txt", "lait", "miel", false).unwrap_err();
    assert!(matches!(err, FileError::NotUtf8 { .. }), "{err:?}");
}

#[test]
fn patch_refuses_files_over_the_limit_unread() {
    let dir = tmp();
    // Text at the start (so it is not binary), then a hole up to the limit + 1.
    sparse(
        dir.path(),
        "big.txt",
        &b"a\n".repeat(10_000),
        MAX_EDIT_FILE_BYTES + 1,
    );
    let err = patch(dir.path(), "big.txt", "a", "b", false).unwrap_err();
    assert_eq!(
        err,
        FileError::FileTooLarge {
            path: "big.txt".into(),
            size: MAX_EDIT_FILE_BYTES + 1
        }
    );
    assert!(err.to_string().contains("terminal"), "{err}");
}

#[test]
fn patch_refuses_a_replacement_too_large_before_building_it() {
    let dir = tmp();
    // The case: 1 MB of `a`, each replaced by 4 KB (4 GB if built).
    put(dir.path(), "a.txt", "a".repeat(1 << 20));
    let err = patch(dir.path(), "a.txt", "a", &"b".repeat(4096), true).unwrap_err();
    assert_eq!(
        err,
        FileError::ResultTooLarge {
            path: "a.txt".into(),
            count: 1 << 20,
            size: 1 << 32
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("1048576 occurrences") && msg.contains("nothing was changed"),
        "{msg}"
    );
    assert_eq!(fs::read(dir.path().join("a.txt")).unwrap().len(), 1 << 20);

    // Exactly at the limit is allowed; one byte more is not.
    let new_string = "b".repeat(10 * 1024);
    put(dir.path(), "edge.txt", "a".repeat(1024));
    let out = patch(dir.path(), "edge.txt", "a", &new_string, true).unwrap();
    assert_eq!(out.replacements, Some(1024));
    let written = fs::metadata(dir.path().join("edge.txt")).unwrap().len();
    assert_eq!(written, MAX_EDIT_FILE_BYTES);
    put(dir.path(), "over.txt", format!("{}c", "a".repeat(1024)));
    let err = patch(dir.path(), "over.txt", "a", &new_string, true).unwrap_err();
    assert!(
        matches!(err, FileError::ResultTooLarge { size, .. } if size == MAX_EDIT_FILE_BYTES + 1),
        "{err:?}"
    );
}

#[test]
fn patch_diff_of_many_changes_is_cut_and_counts_the_rest() {
    let dir = tmp();
    put(dir.path(), "n.txt", "word\n".repeat(3000));
    let out = patch(dir.path(), "n.txt", "word", "term", true).unwrap();
    assert_eq!(out.replacements, Some(3000));
    // Whole: 2 header lines, 1 hunk header, 3000 removed, 3000 added.
    let (shown, marker) = out.diff.trim_end().rsplit_once('\n').unwrap();
    let rest: usize = marker
        .strip_prefix("... [diff truncated, ")
        .and_then(|m| m.strip_suffix(" more lines]"))
        .unwrap_or_else(|| panic!("no cut marker: {marker}"))
        .parse()
        .unwrap();
    assert_eq!(shown.lines().count() + rest, 6003);
    assert!(shown.chars().count() < super::patch::MAX_DIFF_CHARS);
    assert!(shown.starts_with("--- a/n.txt\n+++ b/n.txt\n@@ -1,3000 +1,3000 @@\n-word\n"));
    assert_eq!(
        fs::read_to_string(dir.path().join("n.txt")).unwrap(),
        "term\n".repeat(3000)
    );
}
